#!/usr/bin/env bash
# Runs the import-linter contracts in .importlinter. import-linter only analyses a
# package that lives in one folder, so the odradek namespace (mapped from several
# top-level folders by setup.py) is assembled in a temporary copy first.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tree="$(mktemp -d)"
trap 'rm -rf "${tree}"' EXIT
cp -r "${root}/odradek" "${tree}/odradek"
cp -r "${root}/broker" "${tree}/odradek/broker"
cp -r "${root}/operator" "${tree}/odradek/operator"
cd "${tree}"
PYTHONPATH="${tree}" lint-imports --config "${root}/.importlinter" --no-cache
