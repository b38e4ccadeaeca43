#!/usr/bin/env bash
# Sets everything up, then runs the whole check: ruff, mypy, import contracts and every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

step() { printf '\n== %s\n' "$*" >&2; }

bash scripts/static-checks.sh
step "pytest"
python3 -m pytest -p no:cacheprovider "$@"
