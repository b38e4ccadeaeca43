#!/usr/bin/env bash
# Installs what one use of Odradek needs on a fresh Debian machine, into the project's own
# virtual environment (scripts/python-env.sh) and ~/.cache/odradek. Safe to run again:
# it skips what is there.
#
#   bash scripts/setup.sh broker   the broker and the CLI: Python packages only
#   bash scripts/setup.sh bench    that, plus the benchmarks' Python packages, PySpark and
#                                  Spark's Kafka connector (mvn)
#   bash scripts/setup.sh          everything the test suite needs (the default): every
#                                  extra, kcat, etcd, docker.io, mmdebstrap and a real
#                                  node's containerd, CNI plugins and catatonit (apt-get),
#                                  Spark's Kafka connector and Apache Kafka's jars (mvn),
#                                  helm, the Kubernetes binaries, CoreDNS, crictl, etcd
#                                  and MetalLB's controller (Go module proxy), the images
#                                  (docker build)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python-env.sh

say() { printf '[setup] %s\n' "$*" >&2; }

profile="${1:-tests}"
case "${profile}" in
  broker) extras="" ;;
  bench) extras="bench,spark" ;;
  tests) extras="test,operator,spark,bench" ;;
  *) say "unknown profile '${profile}': broker, bench or tests"; exit 2 ;;
esac

ensure_python_env "${extras}"
use_python_env
if [ "${profile}" != broker ]; then
  # Spark's own Kafka connector (format "kafka"), from Maven Central; skips when cached.
  bash scripts/fetch-spark-kafka-jars.sh >/dev/null
fi
if [ "${profile}" != tests ]; then
  say "ready: ${ODRADEK_VENV} (run '. scripts/activate' to put odradek on PATH)"
  exit 0
fi

# docker.io and mmdebstrap: tests/integration/test_images.py builds and runs the images
# (images/build.sh; scripts/docker-engine.sh starts dockerd when none answers).
# containerd, the CNI plugins, catatonit (the pause image) and conntrack (kube-proxy):
# the real nodes of tests/e2e/test_real_pods*.py (tests/e2e/real_node.py); prometheus
# scrapes their broker pods and evaluates the chart's alert rules. iptables cuts an etcd
# member off in tests/integration/test_etcd_faults.py; faketime steps a broker's wall
# clock in tests/integration/test_clock_faults.py.
debian_packages=(kcat etcd-server docker.io mmdebstrap containerd containernetworking-plugins
  catatonit conntrack prometheus iptables faketime)
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

# Apache Kafka's jars (its command-line tools are judges in the tests), with mvn; cached.
say "Apache Kafka's jars in $(python3 bench/kafka_dist.py)"
say "Apicurio Registry (tests/integration/test_schema_registry.py) in $(bash scripts/fetch-apicurio-registry.sh)"
say "franz-go's kgo test binary (built once, cached): $(bash scripts/fetch-franz-go-tests.sh)"

# helm renders and lints the chart in the tests; built from the Go module proxy once.
HELM_VERSION=v3.16.2
if [ ! -x "${ODRADEK_CACHE}/bin/helm-${HELM_VERSION}" ]; then
  say "building helm ${HELM_VERSION} with go install (cached in ${ODRADEK_CACHE}/bin)"
  mkdir -p "${ODRADEK_CACHE}/bin" "${ODRADEK_CACHE}/go"
  GOPATH="${ODRADEK_CACHE}/go" GOBIN="${ODRADEK_CACHE}/bin" GOFLAGS=-modcacherw \
    nice -n 19 go install "helm.sh/helm/v3/cmd/helm@${HELM_VERSION}"
  mv "${ODRADEK_CACHE}/bin/helm" "${ODRADEK_CACHE}/bin/helm-${HELM_VERSION}"
fi
ln -sf "helm-${HELM_VERSION}" "${ODRADEK_CACHE}/bin/helm"

# The Kubernetes binaries (control plane and node) for tests/e2e, built from the Go module
# proxy once (tens of minutes on a busy 2-core machine; docs/operator-testing.md), then
# cached; likewise CoreDNS, crictl, etcd and MetalLB's controller. The images (the
# project's and the real nodes' pause and etcd) are built by the tests themselves
# (tests/e2e/node_tools.py).
say "Kubernetes binaries in $(bash tests/e2e/kube_binaries.sh)"
for tool in coredns crictl etcd metallb; do
  say "${tool} in $(bash tests/e2e/go_tool.sh "${tool}")"
done
say "ready: ${ODRADEK_VENV}"
