#!/usr/bin/env bash
# Installs what the benchmarks need, then runs one of them from the project's virtual
# environment: `bash scripts/bench.sh compare --quick` runs bench/compare.py --quick.
# (Apache Kafka itself is fetched with mvn by the benchmark, cached in ~/.cache/odradek.)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ] || [ ! -f "bench/$1.py" ]; then
  printf 'usage: bash scripts/bench.sh NAME [ARGS]   (NAME: %s)\n' \
    "$(grep -l '__name__ == "__main__"' bench/*.py | sed 's#^bench/##; s#\.py$##' | tr '\n' ' ')" >&2
  exit 2
fi
bash scripts/setup.sh bench
source scripts/python-env.sh
use_python_env
name="$1"
shift
# PYTHONSAFEPATH (use_python_env) keeps the script's folder off sys.path: put bench/ back,
# where the benchmarks import their shared modules from.
PYTHONPATH="${PWD}/bench${PYTHONPATH:+:${PYTHONPATH}}" exec python3 "bench/${name}.py" "$@"
