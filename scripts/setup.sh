#!/usr/bin/env bash
# Installs everything Odradek's broker, CLI and tests need on a fresh Debian machine.
# Downloads are cached under ~/.cache/odradek. Safe to run again: it skips what is there.
set -euo pipefail

cd "$(dirname "$0")/.."
CACHE="${HOME}/.cache/odradek"
mkdir -p "${CACHE}/pip"

say() { printf '[setup] %s\n' "$*" >&2; }

debian_packages=(kcat etcd-server)
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
  if ! python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
      --cache-dir "${CACHE}/pip" -e ".[test,operator,spark]" > "${CACHE}/pip.log" 2>&1; then
    cat "${CACHE}/pip.log" >&2
    exit 1
  fi
  touch "${stamp}"
fi

# Spark's own Kafka connector (format "kafka"), from Maven Central; skips when cached.
bash scripts/fetch-spark-kafka-jars.sh >/dev/null

# helm renders and lints the chart in the tests; built from the Go module proxy once.
HELM_VERSION=v3.16.2
if [ ! -x "${CACHE}/bin/helm-${HELM_VERSION}" ]; then
  say "building helm ${HELM_VERSION} with go install (cached in ${CACHE}/bin)"
  mkdir -p "${CACHE}/bin" "${CACHE}/go"
  GOPATH="${CACHE}/go" GOBIN="${CACHE}/bin" GOFLAGS=-modcacherw \
    go install "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"
  mv "${CACHE}/bin/helm" "${CACHE}/bin/helm-${HELM_VERSION}"
fi
ln -sf "helm-${HELM_VERSION}" "${CACHE}/bin/helm"

# kube-apiserver and kube-controller-manager for tests/e2e, built from the Go module proxy
# once (tens of minutes on a busy 2-core machine; docs/operator-testing.md), then cached.
say "Kubernetes control-plane binaries in $(bash tests/e2e/kube_binaries.sh)"
say "ready"
