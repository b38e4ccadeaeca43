#!/usr/bin/env bash
# Builds the Kubernetes binaries of one release from the Go module proxy and prints the
# directory holding them: the control plane (kube-apiserver, kube-controller-manager,
# kube-scheduler) and a node's (kubelet, kube-proxy).
#
#   kube_binaries.sh [vX.Y.Z]
#
# k8s.io/kubernetes cannot be `go install`ed: its go.mod replaces every k8s.io/* staging
# module with ./staging/src/... . A wrapper module requires k8s.io/kubernetes vX.Y.Z and
# replaces each staging module with its published version v0.Y.Z instead.
#
# Cached by version under ~/.cache/odradek/kube/<version>/ (Go's caches under
# ~/.cache/odradek/go); a cached build returns at once. The build runs at the lowest CPU
# priority (nice 19), so on a shared machine it only takes idle cycles;
# ODRADEK_KUBE_BUILD_JOBS sets `go build -p` (default 2; 1 halves peak memory). Build time
# and peak memory go to <version>/build-stats.txt (from /usr/bin/time -v when present).
set -euo pipefail

version="${1:-${ODRADEK_KUBE_VERSION:-v1.37.1}}"
cache="${HOME}/.cache/odradek"
out="${cache}/kube/${version}"
commands=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy)

missing() {
  local command
  for command in "${commands[@]}"; do [ -x "${out}/${command}" ] || echo "${command}"; done
}
have_all() { [ -z "$(missing)" ]; }
# shellcheck source=tests/e2e/go_env.sh
source "$(dirname "$0")/go_env.sh"
go_build_begin have_all  # one build per version

say "resolving k8s.io/kubernetes@${version}"
# The proxy refuses some versions (403 "not available"): say so rather than fail later.
# -I: run from the repository's root, its operator/ would shadow the standard library's.
kube_mod="$(go mod download -json "k8s.io/kubernetes@${version}" | python3 -I -c '
import json, sys
found = json.load(sys.stdin)
sys.exit(found["Error"]) if "Error" in found else print(found["GoMod"])')"
staging_version="v0.${version#v1.}"
{
  echo "module odradek.local/kube-build"
  echo
  sed -nE 's/^go ([0-9.]+)$/go \1/p' "${kube_mod}"
  echo
  echo "require k8s.io/kubernetes ${version}"
  echo
  echo "replace ("
  sed -nE "s#^\s*(k8s\.io/[A-Za-z0-9._/-]+) => \./staging/src/.*#\t\1 => \1 ${staging_version}#p" "${kube_mod}"
  echo ")"
} >"${src}/go.mod"

minor="${version#v1.}"
minor="${minor%%.*}"
ldflags="-s -w"
for setting in "gitVersion=${version}" "gitMajor=1" "gitMinor=${minor}" \
  "gitTreeState=clean" "buildDate=1970-01-01T00:00:00Z"; do
  ldflags+=" -X k8s.io/component-base/version.${setting}"
  ldflags+=" -X k8s.io/client-go/pkg/version.${setting}"
done

mapfile -t wanted < <(missing)
say "building ${wanted[*]} ${version} (minutes, several GB; log in ${out}/build.log)"
started=$(date +%s)
: >"${out}/build-stats.txt"
mkdir -p "${out}/bin.tmp"
# One command at a time: the second reuses the first's compiled packages from GOCACHE.
for command in "${wanted[@]}"; do
  timer=()
  [ -x /usr/bin/time ] && timer=(/usr/bin/time -v -a -o "${out}/build-stats.txt")
  echo "== ${command}" >>"${out}/build-stats.txt"
  (
    cd "${src}"
    "${timer[@]}" nice -n 19 env GOFLAGS="${GOFLAGS} -mod=mod" go build \
      -p "${ODRADEK_KUBE_BUILD_JOBS:-2}" -trimpath -ldflags "${ldflags}" \
      -o "${out}/bin.tmp/${command}" "k8s.io/kubernetes/cmd/${command}"
  ) >>"${out}/build.log" 2>&1 || { tail -n 40 "${out}/build.log" >&2; exit 1; }
done
echo "wall seconds (including downloads): $(($(date +%s) - started))" >>"${out}/build-stats.txt"
mv "${out}/bin.tmp/"* "${out}/"
rmdir "${out}/bin.tmp"
say "built in $(($(date +%s) - started)) s into ${out}"
echo "${out}"
