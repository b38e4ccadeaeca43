#!/usr/bin/env bash
# Makes a Docker Engine answer on this machine: installs Debian's docker.io with apt-get
# when there is no dockerd, and starts dockerd in the background when no daemon answers
# (these machines have no systemd to start it). Safe to run again: an answering engine
# returns at once. Exits non-zero, with the reason on stderr, when no engine can run.
#
#   bash scripts/docker-engine.sh
#
# dockerd's log: ~/.cache/odradek/dockerd.log.
set -euo pipefail

say() { printf '[docker-engine] %s\n' "$*" >&2; }

ODRADEK_CACHE="${ODRADEK_CACHE:-${HOME}/.cache/odradek}"
START_TIMEOUT_S=60

if docker version >/dev/null 2>&1; then
  exit 0
fi

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)

if ! command -v dockerd >/dev/null 2>&1; then
  say "installing Debian's docker.io (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq docker.io >/dev/null
fi

if ! command -v docker >/dev/null 2>&1; then
  say "docker.io is installed but there is no docker client on PATH"
  exit 1
fi

# A daemon may be starting already (another test session): wait for it before starting one.
if ! pgrep -x dockerd >/dev/null 2>&1; then
  mkdir -p "${ODRADEK_CACHE}"
  say "starting dockerd in the background (log: ${ODRADEK_CACHE}/dockerd.log)"
  # setsid: the daemon outlives this script and the test session that called it.
  "${sudo_cmd[@]}" setsid nohup dockerd >>"${ODRADEK_CACHE}/dockerd.log" 2>&1 </dev/null &
fi

for _ in $(seq "${START_TIMEOUT_S}"); do
  if docker version >/dev/null 2>&1; then
    say "dockerd answers"
    exit 0
  fi
  sleep 1
done
say "no Docker daemon answered within ${START_TIMEOUT_S}s; last lines of its log:"
tail -n 20 "${ODRADEK_CACHE}/dockerd.log" >&2 || true
exit 1
