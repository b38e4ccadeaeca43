#!/usr/bin/env bash
# Sets everything up, then runs the whole check: ruff, mypy, import contracts and every
# test, all from the project's own virtual environment. Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/python-env.sh
use_python_env

step() { printf '\n== %s\n' "$*" >&2; }

bash scripts/static-checks.sh
step "pytest"
python3 -m pytest -p no:cacheprovider "$@"
