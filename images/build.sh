#!/usr/bin/env bash
# Builds the project's images from the repository with Docker, at low CPU priority (the
# build steps run in dockerd's containers, where the client's nice does not reach: they
# get a low CPU weight instead, --cpu-shares; mmdebstrap runs at nice 19):
#
#   bash images/build.sh                 every image
#   bash images/build.sh odradek spark   the ones named (folders under images/)
#
# Tags: ghcr.io/odradek/<image>:<version in pyproject.toml> (what the chart and the CRDs'
# defaults name), so `docker save IMAGE | ctr -n k8s.io images import -` puts them where a
# kubelet looks. ODRADEK_IMAGE_REPOSITORY changes the ghcr.io/odradek prefix.
#
# The base image: $ODRADEK_BASE_IMAGE if set; else the public image the Dockerfiles name
# (ARG BASE_IMAGE) when it is present or can be pulled; else a Debian bookworm base made
# here with mmdebstrap, built once and cached under ~/.cache/odradek/images, keyed on
# its recipe. Installs docker.io and mmdebstrap with apt-get and starts dockerd when
# needed (scripts/docker-engine.sh). Progress on stderr; the built tags on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[images] %s\n' "$*" >&2; }

ODRADEK_CACHE="${ODRADEK_CACHE:-${HOME}/.cache/odradek}"
IMAGE_CACHE="${ODRADEK_CACHE}/images"
REPOSITORY="${ODRADEK_IMAGE_REPOSITORY:-ghcr.io/odradek}"
VERSION="$(python3 -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')"
PULL_TIMEOUT_S=60

# The local base: Debian's python3 (3.11) with venv support and CA certificates; the
# Spark image adds Java with apt-get. Documentation, man pages and translations are left
# out (~50 MB); copyright files stay.
LOCAL_BASE_SUITE=bookworm
LOCAL_BASE_PACKAGES=python3,python3-venv,ca-certificates
LOCAL_BASE_DPKG_OPTS=(
  "--dpkgopt=path-exclude=/usr/share/doc/*"
  "--dpkgopt=path-include=/usr/share/doc/*/copyright"
  "--dpkgopt=path-exclude=/usr/share/man/*"
  "--dpkgopt=path-exclude=/usr/share/info/*"
  "--dpkgopt=path-exclude=/usr/share/locale/*"
  "--dpkgopt=path-exclude=/usr/share/lintian/*"
)

if [ "$#" -gt 0 ]; then
  images=("$@")
else
  images=()
  for dockerfile in images/*/Dockerfile; do
    images+=("$(basename "$(dirname "${dockerfile}")")")
  done
fi
for image in "${images[@]}"; do
  [ -f "images/${image}/Dockerfile" ] || { say "no images/${image}/Dockerfile"; exit 2; }
done

bash scripts/docker-engine.sh

# The default of `ARG BASE_IMAGE=...` in a Dockerfile.
default_base() { sed -n 's/^ARG BASE_IMAGE=//p' "$1" | head -n 1; }

have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# The local Debian base, made once per recipe; the tar is kept so a machine whose Docker
# storage was wiped (but not ~/.cache/odradek) loads it instead of running mmdebstrap.
local_base() {
  local key name tar
  key="$(printf '%s\n' "${LOCAL_BASE_SUITE}" "${LOCAL_BASE_PACKAGES}" "${LOCAL_BASE_DPKG_OPTS[@]}" \
    | sha256sum | cut -c1-12)"
  name="odradek-local-base:${LOCAL_BASE_SUITE}-${key}"
  tar="${IMAGE_CACHE}/local-base-${LOCAL_BASE_SUITE}-${key}.docker.tar"
  if have_image "${name}"; then
    echo "${name}"
    return
  fi
  mkdir -p "${IMAGE_CACHE}"
  if [ -f "${tar}" ]; then
    say "loading the cached local base ${name}"
    docker load --input "${tar}" >/dev/null
    echo "${name}"
    return
  fi
  if ! command -v mmdebstrap >/dev/null 2>&1; then
    say "installing Debian's mmdebstrap (apt-get), to make a local base image"
    local sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq mmdebstrap >/dev/null
  fi
  say "making ${name} with mmdebstrap (${LOCAL_BASE_PACKAGES}; about a minute)"
  local work
  work="$(mktemp -d)"
  # shellcheck disable=SC2064
  trap "rm -rf '${work}'" RETURN
  nice -n 19 mmdebstrap --quiet --variant=minbase --include="${LOCAL_BASE_PACKAGES}" \
    "${LOCAL_BASE_DPKG_OPTS[@]}" "${LOCAL_BASE_SUITE}" "${work}/rootfs.tar" >&2
  docker import "${work}/rootfs.tar" "${name}" >/dev/null
  # Saved, not the rootfs: a loaded image keeps its id, so Docker's layer cache still matches.
  docker save --output "${tar}.partial" "${name}"
  mv "${tar}.partial" "${tar}"
  echo "${name}"
}

# Sets chosen_base for a Dockerfile whose default base is $1 (a public image found
# unpullable is not tried again in this run).
unpullable=" "
choose_base() {
  local public="$1"
  if [ -n "${ODRADEK_BASE_IMAGE:-}" ]; then
    chosen_base="${ODRADEK_BASE_IMAGE}"
  elif have_image "${public}"; then
    chosen_base="${public}"
  elif [[ "${unpullable}" != *" ${public} "* ]] \
    && timeout "${PULL_TIMEOUT_S}" docker pull --quiet "${public}" >/dev/null 2>&1; then
    chosen_base="${public}"
  else
    [[ "${unpullable}" == *" ${public} "* ]] \
      || say "${public} cannot be pulled here; using a local Debian base instead"
    unpullable+="${public} "
    chosen_base="$(local_base)"
  fi
}

# Certificates added to this machine's trust store (Debian's place for local CAs): pip in
# the build stages needs them behind a TLS-inspecting proxy.
local_ca_certs="$(cat /usr/local/share/ca-certificates/*.crt 2>/dev/null || true)"

for image in "${images[@]}"; do
  dockerfile="images/${image}/Dockerfile"
  tag="${REPOSITORY}/${image}:${VERSION}"
  choose_base "$(default_base "${dockerfile}")"
  base="${chosen_base}"
  say "building ${tag} from ${dockerfile} on ${base}"
  started=${SECONDS}
  # The classic builder: it uses local images as bases as they are (BuildKit would try to
  # pull the syntax frontend and resolve bases in a registry none of which is reachable).
  log="$(mktemp)"
  # Each step as it starts on stderr; the whole output kept for a failure's report.
  set +o pipefail
  DOCKER_BUILDKIT=0 nice -n 19 docker build --force-rm --cpu-shares 128 --file "${dockerfile}" \
    --build-arg "BASE_IMAGE=${base}" --build-arg "LOCAL_CA_CERTS=${local_ca_certs}" \
    --tag "${tag}" . 2>&1 | tee "${log}" \
    | grep --line-buffered -E '^Step [0-9]+/[0-9]+ : (FROM|RUN|COPY)' \
    | cut -c1-110 | sed -u 's/^/[images]   /' >&2
  status="${PIPESTATUS[0]}"
  set -o pipefail
  if [ "${status}" -ne 0 ]; then
    tail -n 40 "${log}" >&2
    rm -f "${log}"
    say "building ${tag} failed"
    exit 1
  fi
  rm -f "${log}"
  size="$(docker image inspect --format '{{.Size}}' "${tag}")"
  say "built ${tag} in $((SECONDS - started)) s, $((size / 1000000)) MB"
  echo "${tag}"
done
# The images these tags named before (their final stages carry the label): gone, but
# for the layers the new ones share.
docker image prune --force --filter label=io.odradek.image >/dev/null
