#!/usr/bin/env bash
# ruff, mypy (strict) and the import-linter contracts.
# mypy and import-linter analyse a package that lives in one folder, so the odradek
# namespace (mapped from several top-level folders by setup.py) is assembled in a
# temporary copy for them; their messages are mapped back to the repository's paths.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "${root}"

step() { printf '\n== %s\n' "$*" >&2; }

step "ruff"
ruff check .
ruff format --check .

tree="$(mktemp -d)"
trap 'rm -rf "${tree}"' EXIT
cp -r odradek "${tree}/odradek"
folders=(broker operator mirror spark)  # the top-level folders setup.py maps into odradek.*
for folder in "${folders[@]}"; do
  cp -r "${folder}" "${tree}/odradek/${folder}"
done
to_repo_paths() { sed -E "s#^odradek/(broker|operator|mirror|spark)/#\1/#"; }

step "mypy (strict)"
if ! (cd "${tree}" && mypy --config-file "${root}/pyproject.toml" odradek) 2>&1 | to_repo_paths; then
  exit 1
fi

step "import contracts"
(cd "${tree}" && PYTHONPATH="${tree}" lint-imports --config "${root}/.importlinter" --no-cache)
