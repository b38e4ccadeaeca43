#!/usr/bin/env bash
# Builds etcd from the Go module proxy and prints the binary's path, for the etcd fault
# test (tests/integration/test_etcd_faults.py).
#
# Debian 12's etcd-server (3.4.23), which the rest of the suite and `odradek cluster up`
# use, revokes every lease when its leader resumes after a stall (etcd-io/etcd#15247, fixed
# by etcd-io/etcd#16822 in later 3.4 and 3.5 releases): a paused etcd leader would end
# every broker's session. The fault test pauses the etcd leader, so it runs on a release
# with the fix.
#
# Built once per version (ODRADEK_ETCD_VERSION overrides the pinned one) into
# ~/.cache/odradek/bin/etcd-<version>, at the lowest CPU priority (nice 19), with Go's
# caches under ~/.cache/odradek/go; a cached build returns at once.
set -euo pipefail

version="${ODRADEK_ETCD_VERSION:-v3.6.16}"
module=go.etcd.io/etcd/server/v3
cache="${HOME}/.cache/odradek"
binary="${cache}/bin/etcd-${version}"

say() { printf '[etcd] %s\n' "$*" >&2; }
if [ -x "${binary}" ]; then
  echo "${binary}"
  exit 0
fi
command -v go >/dev/null || { say "no Go toolchain on PATH"; exit 2; }
export GOPATH="${cache}/go" GOMODCACHE="${cache}/go/pkg/mod" GOCACHE="${cache}/go/build-cache"
export GOFLAGS="-modcacherw -buildvcs=false" GOTOOLCHAIN=local
mkdir -p "${cache}/bin"
exec 9>"${binary}.lock"
flock 9  # one build per version, even with concurrent callers
if [ -x "${binary}" ]; then
  echo "${binary}"
  exit 0
fi

# The server module carries replace directives, so `go install` refuses it: a throw-away
# module whose main is etcd's own (etcdmain.Main) requires it instead.
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
say "building etcd ${version} from ${module} (cached in ${binary})"
started=$(date +%s)
cat >"${work}/main.go" <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
(  # set -e does not apply inside a subshell followed by ||: chain the steps
  cd "${work}" &&
    go mod init odradek.local/etcd &&
    nice -n 19 go get "${module}@${version}" &&
    nice -n 19 go mod tidy &&
    CGO_ENABLED=0 nice -n 19 go build -trimpath -o "${binary}.tmp" .
) >"${work}/build.log" 2>&1 || { tail -n 40 "${work}/build.log" >&2; exit 1; }
mv "${binary}.tmp" "${binary}"
say "built in $(($(date +%s) - started)) s"
echo "${binary}"
