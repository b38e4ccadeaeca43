#!/usr/bin/env bash
# Sets everything up, then runs the whole check: ruff, mypy, import contracts and every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

step() { printf '\n== %s\n' "$*" >&2; }

step "ruff"
ruff check .
ruff format --check .
step "mypy (strict)"
mypy
step "import contracts"
bash scripts/check-imports.sh
step "pytest"
python3 -m pytest -p no:cacheprovider "$@"
