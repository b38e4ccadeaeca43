# Sourced by the other scripts: the project's own Python virtual environment.
#
# One venv per checkout, under ~/.cache/odradek/venvs/<hash of the checkout's path>, so
# packages installed by hand into the system Python can never hide a missing dependency
# and two checkouts never share an editable install. The venv is rebuilt from scratch
# when pyproject.toml, setup.py or the interpreter change; venvs of checkouts that no
# longer exist are removed. Downloads and built wheels are cached in ~/.cache/odradek/pip.

ODRADEK_CACHE="${ODRADEK_CACHE:-${HOME}/.cache/odradek}"
ODRADEK_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
ODRADEK_VENV="${ODRADEK_CACHE}/venvs/$(printf '%s' "${ODRADEK_ROOT}" | sha256sum | cut -c1-12)"

_env_say() { printf '[python-env] %s\n' "$*" >&2; }

# The interpreter the venv is made from: $ODRADEK_PYTHON, else python3; 3.11 or newer.
_base_python() {
  local python="${ODRADEK_PYTHON:-python3}"
  if ! "${python}" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    _env_say "${python} is missing or older than 3.11; set ODRADEK_PYTHON to a Python 3.11+"
    return 1
  fi
  # Debian's Python makes venvs only with python3-venv (ensurepip) installed.
  if ! "${python}" -c 'import ensurepip, venv' 2>/dev/null; then
    _env_say "installing Debian's python3-venv (${python} cannot make a venv without it)"
    local sudo_cmd=()
    [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq python3-venv >/dev/null
  fi
  # the interpreter itself, also when python3 is the project's venv (a shell that sourced
  # scripts/activate): else that venv would look built from another Python and be rebuilt
  "${python}" -c 'import os, sys; print(os.path.realpath(sys._base_executable))'
}

# What the venv was built from: the dependency lists and the interpreter.
_deps_hash() {
  { cat "${ODRADEK_ROOT}/pyproject.toml" "${ODRADEK_ROOT}/setup.py"; printf '%s\n' "$1"; } \
    | sha256sum | cut -c1-16
}

# Remove the venvs whose checkout is gone (fresh clones in temporary folders).
_prune_venvs() {
  local venv checkout
  for venv in "${ODRADEK_CACHE}"/venvs/*/; do
    venv="${venv%/}"
    [ "${venv}" != "${ODRADEK_VENV}" ] && [ -f "${venv}/.odradek-checkout" ] || continue
    checkout="$(cat "${venv}/.odradek-checkout")"
    [ -d "${checkout}" ] && continue
    (flock -n 8 && rm -rf "${venv}") 8>"${venv}.lock" && rm -f "${venv}.lock" || true
  done
}

# pip's output, reduced to one line per package as it is fetched, built or installed.
_pip_progress() {
  local line
  while IFS= read -r line; do
    printf '%s\n' "${line}" >>"${ODRADEK_VENV}.pip.log"
    case "${line}" in
      Collecting* | Building\ wheel\ for* | Installing\ collected* | Successfully\ installed*)
        _env_say "  ${line:0:150}"
        ;;
    esac
  done
}

# ensure_python_env EXTRAS: the venv holds the project (editable) with these extras
# (comma-separated, may be empty); installs only what is missing.
ensure_python_env() {
  local - extras="$1" python hash marker
  set -o pipefail
  python="$(_base_python)" || return 1
  hash="$(_deps_hash "${python}")"
  marker="${ODRADEK_VENV}/.odradek-extras-${extras:-base}"
  mkdir -p "${ODRADEK_CACHE}/venvs" "${ODRADEK_CACHE}/pip"
  exec 7>"${ODRADEK_VENV}.lock"
  flock 7
  if [ -d "${ODRADEK_VENV}" ] && [ "$(cat "${ODRADEK_VENV}/.odradek-deps" 2>/dev/null)" != "${hash}" ]; then
    _env_say "dependency lists or interpreter changed: rebuilding ${ODRADEK_VENV}"
    rm -rf "${ODRADEK_VENV}"
  fi
  if [ ! -x "${ODRADEK_VENV}/bin/python" ]; then
    _env_say "creating the project's virtual environment ${ODRADEK_VENV} from ${python}"
    rm -rf "${ODRADEK_VENV}"
    "${python}" -m venv "${ODRADEK_VENV}"
    printf '%s\n' "${ODRADEK_ROOT}" >"${ODRADEK_VENV}/.odradek-checkout"
    printf '%s\n' "${hash}" >"${ODRADEK_VENV}/.odradek-deps"
  fi
  if [ ! -f "${marker}" ]; then
    _env_say "installing the project with extras [${extras}] into it (pip, log ${ODRADEK_VENV}.pip.log)"
    : >"${ODRADEK_VENV}.pip.log"
    if ! PIP_DISABLE_PIP_VERSION_CHECK=1 "${ODRADEK_VENV}/bin/python" -P -m pip install \
        --progress-bar off --cache-dir "${ODRADEK_CACHE}/pip" \
        -e "${ODRADEK_ROOT}${extras:+[${extras}]}" 2>&1 | _pip_progress; then
      tail -n 30 "${ODRADEK_VENV}.pip.log" >&2
      _env_say "pip failed; the whole log is ${ODRADEK_VENV}.pip.log"
      exec 7>&-
      return 1
    fi
    touch "${marker}"
  fi
  exec 7>&-
  _prune_venvs
}

# use_python_env: the venv's python3, odradek, pytest, ruff, ... come first on PATH.
# PYTHONSAFEPATH: `python3 -m ...` run in the repository's root would otherwise import
# its operator/ folder in place of the standard library's operator module.
use_python_env() {
  export VIRTUAL_ENV="${ODRADEK_VENV}" PYTHONSAFEPATH=1
  export PATH="${ODRADEK_VENV}/bin:${PATH}"
  hash -r
}
