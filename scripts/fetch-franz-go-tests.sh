#!/usr/bin/env bash
# Builds the test binary of franz-go's kgo package (its own integration suite, which runs
# against any Kafka cluster named by KGO_SEEDS) from the Go module proxy, and prints the
# binary's path. tests/integration/test_franz_go.py runs it against a 3-broker cluster.
#
#   bash scripts/fetch-franz-go-tests.sh                 the binary's path
#   bash scripts/fetch-franz-go-tests.sh --package-dir   the kgo package's sources: the
#                                                        directory `go test` runs it in (a
#                                                        few tests read their package's files)
#
# Built once per franz-go version (ODRADEK_FRANZ_GO_VERSION overrides the pinned one) into
# ~/.cache/odradek/bin/kgo-tests-<version>, at the lowest CPU priority (nice 19), with Go's
# caches under ~/.cache/odradek/go; a cached build returns at once.
set -euo pipefail

version="${ODRADEK_FRANZ_GO_VERSION:-v1.22.3}"
module=github.com/twmb/franz-go
cache="${HOME}/.cache/odradek"
binary="${cache}/bin/kgo-tests-${version}"

say() { printf '[franz-go] %s\n' "$*" >&2; }
command -v go >/dev/null || { say "no Go toolchain on PATH"; exit 2; }
export GOPATH="${cache}/go" GOMODCACHE="${cache}/go/pkg/mod" GOCACHE="${cache}/go/build-cache"
export GOFLAGS="-modcacherw -buildvcs=false" GOTOOLCHAIN=local

if [ "${1:-}" = --package-dir ]; then
  # The module's directory in the module cache (downloaded if it is not there).
  module_dir="$(go mod download -json "${module}@${version}" | python3 -c '
import json, sys
found = json.load(sys.stdin)
sys.exit(found["Error"]) if "Error" in found else print(found["Dir"])')"
  echo "${module_dir}/pkg/kgo"
  exit 0
fi

if [ -x "${binary}" ]; then
  echo "${binary}"
  exit 0
fi
mkdir -p "${cache}/bin"
exec 9>"${binary}.lock"
flock 9  # one build per version, even with concurrent callers
if [ -x "${binary}" ]; then
  echo "${binary}"
  exit 0
fi

# A throw-away module that requires franz-go at the pinned version, with the kgo tests'
# own dependencies (go get -t), so that `go test -c` can build the package's test binary.
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
say "building the kgo test binary of ${module} ${version} (cached in ${binary})"
started=$(date +%s)
(  # set -e does not apply inside a subshell followed by ||: chain the steps
  cd "${work}" &&
    go mod init odradek.local/kgo-tests &&
    nice -n 19 go get -t "${module}/pkg/kgo@${version}" &&
    nice -n 19 go test -c -o "${binary}.tmp" "${module}/pkg/kgo"
) >"${work}/build.log" 2>&1 || { tail -n 40 "${work}/build.log" >&2; exit 1; }
mv "${binary}.tmp" "${binary}"
say "built in $(($(date +%s) - started)) s"
echo "${binary}"
