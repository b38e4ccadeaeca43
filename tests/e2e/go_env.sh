# Sourced by the Go build scripts here (go_tool.sh, kube_binaries.sh) once they have set
# ${cache} (~/.cache/odradek) and ${out} (where the build goes).

say() { printf '[%s] %s\n' "$(basename "$0" .sh)" "$*" >&2; }

# go_build_begin BUILT: when the command BUILT says ${out} holds the build, prints ${out}
# and exits. Else takes ${out}'s lock (one build at a time, even with concurrent callers;
# BUILT is asked again once it is held) and sets up the build: Go's caches under
# ${cache}/go, static builds with the installed toolchain, and an empty module directory
# ${src} under ${out} for the wrapper module.
go_build_begin() {
  local built="$1"
  if "${built}"; then
    echo "${out}"
    exit 0
  fi
  command -v go >/dev/null || { say "no Go toolchain on PATH"; exit 2; }
  mkdir -p "${out}" "${cache}/go"
  exec 9>"${out}.lock"
  flock 9
  if "${built}"; then
    echo "${out}"
    exit 0
  fi
  export GOPATH="${cache}/go" GOMODCACHE="${cache}/go/pkg/mod" GOCACHE="${cache}/go/build-cache"
  export GOFLAGS="-modcacherw -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0
  src="${out}/src"
  rm -rf "${src}"
  mkdir -p "${src}"
}
