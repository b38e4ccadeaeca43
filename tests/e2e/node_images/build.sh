#!/usr/bin/env bash
# Builds the images a real node needs besides the project's (images/build.sh) and prints
# their tags: the pod sandbox (odradek.local/pause) and etcd (odradek.local/etcd). Neither
# can be pulled here; both are a static binary in an empty image. Installs catatonit with
# apt-get and builds etcd with go_tool.sh when missing; starts dockerd when needed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
say() { printf '[node_images] %s\n' "$*" >&2; }

PAUSE=odradek.local/pause:catatonit
ETCD=odradek.local/etcd:v3.5.17

bash "${here}/../../../scripts/docker-engine.sh"
have_image() { docker image inspect "$1" >/dev/null 2>&1; }

build() {  # tag dockerfile file-to-copy
  local tag="$1" dockerfile="$2" binary="$3" context
  if ! have_image "${tag}"; then
    context="$(mktemp -d)"
    cp "${binary}" "${context}/"
    say "building ${tag}"
    DOCKER_BUILDKIT=0 docker build --quiet --file "${here}/${dockerfile}" --tag "${tag}" \
      "${context}" >/dev/null
    rm -rf "${context}"
  fi
  echo "${tag}"
}

if [ ! -x /usr/bin/catatonit ]; then
  say "installing Debian's catatonit (apt-get)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq catatonit >/dev/null
fi
build "${PAUSE}" pause.Dockerfile /usr/bin/catatonit
build "${ETCD}" etcd.Dockerfile "$(bash "${here}/../go_tool.sh" etcd)/etcd"
