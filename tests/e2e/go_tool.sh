#!/usr/bin/env bash
# Builds one of the real node's Go tools from the Go module proxy and prints the directory
# holding it:
#
#   go_tool.sh coredns   cluster DNS (its kubernetes plugin answers for Services and for
#                        the pods of headless Services: the brokers' and etcd's names)
#   go_tool.sh crictl    the CRI client: removes pod sandboxes a stopped kubelet left
#   go_tool.sh etcd      etcd v3.5.17, statically linked: the managed etcd's default
#                        image (quay.io/coreos/etcd:v3.5.17) cannot be pulled here, so the
#                        tests' pods run this binary from a local image (node_images.sh)
#   go_tool.sh metallb   MetalLB's controller, which gives LoadBalancer Services addresses
#                        from its IPAddressPools; its CRDs are copied next to it (crds/)
#
# Each builds in a wrapper module that requires the tool's module (etcd's server module
# replaces its siblings with ../ paths, which `go install` refuses).
#
# Pinned versions; cached under ~/.cache/odradek/go-tools/<tool>-<version>/ (Go's caches
# under ~/.cache/odradek/go), built at the lowest CPU priority (nice 19).
set -euo pipefail

tool="${1:?usage: go_tool.sh coredns|crictl|etcd|metallb}"
case "${tool}" in
  coredns) package=github.com/coredns/coredns version=v1.15.0 ;;
  crictl) package=sigs.k8s.io/cri-tools/cmd/crictl version=v1.37.0 ;;
  etcd) package=go.etcd.io/etcd/server/v3 version=v3.5.17 ;;
  metallb) package=go.universe.tf/metallb/controller version=v0.15.2 ;;
  *) echo "go_tool.sh: unknown tool ${tool}" >&2; exit 2 ;;
esac
cache="${HOME}/.cache/odradek"
out="${cache}/go-tools/${tool}-${version}"
built() { [ -x "${out}/${tool}" ]; }
# shellcheck source=tests/e2e/go_env.sh
source "$(dirname "$0")/go_env.sh"
go_build_begin built  # one build per tool

say "building ${package}@${version} (minutes; log in ${out}/build.log)"
started=$(date +%s)
# Chained with &&: on the left of || bash ignores set -e, so a failed step would go on.
(
  cd "${src}" &&
    go mod init odradek.local/go-tool &&
    go get "${package}@${version}" &&
    nice -n 19 go build -p "${ODRADEK_KUBE_BUILD_JOBS:-2}" -trimpath -ldflags "-s -w" \
      -o "${out}/${tool}.tmp" "${package}" &&
    if [ "${tool}" = metallb ]; then
      mkdir -p "${out}/crds" &&
        cp "${GOMODCACHE}/go.universe.tf/metallb@${version}/config/crd/bases/"*.yaml "${out}/crds/" &&
        chmod u+w "${out}/crds/"*.yaml
    fi
) >"${out}/build.log" 2>&1 || { tail -n 40 "${out}/build.log" >&2; exit 1; }
mv "${out}/${tool}.tmp" "${out}/${tool}"
rm -rf "${src}"
say "built in $(($(date +%s) - started)) s into ${out}"
echo "${out}"
