#!/usr/bin/env bash
# Installs what the broker needs, then runs a single broker on the embedded default:
# Kafka protocol on 127.0.0.1:9092, HTTP (/metrics, /healthz, /readyz) on 127.0.0.1:9080,
# data in ~/.local/share/odradek/data. Extra arguments go to `odradek broker`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh broker
source scripts/python-env.sh
exec "${ODRADEK_VENV}/bin/odradek" broker "$@"
