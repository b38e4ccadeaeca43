#!/usr/bin/env bash
# Installs everything Odradek's broker, CLI and tests need on a fresh Debian machine.
# Downloads are cached under ~/.cache/odradek. Safe to run again: it skips what is there.
set -euo pipefail

cd "$(dirname "$0")/.."
CACHE="${HOME}/.cache/odradek"
mkdir -p "${CACHE}/pip"

say() { printf '[setup] %s\n' "$*" >&2; }

debian_packages=(kcat)
missing=()
for package in "${debian_packages[@]}"; do
  dpkg -s "${package}" >/dev/null 2>&1 || missing+=("${package}")
done
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

stamp="${CACHE}/pip-installed-$(sha256sum pyproject.toml setup.py | sha256sum | cut -c1-16)-$(pwd | sha256sum | cut -c1-8)"
if [ ! -f "${stamp}" ]; then
  say "installing Python packages (pip, cached in ${CACHE}/pip)"
  python3 -m pip install --quiet --disable-pip-version-check --cache-dir "${CACHE}/pip" \
    -e ".[test,operator]" 2>&1 | grep -v "Running pip as the 'root' user" || true
  python3 -c "import odradek.broker, kafka, aiokafka, confluent_kafka" 
  touch "${stamp}"
fi
say "ready"
