# Sourced by the Go build scripts here, once they hold their lock: Go's caches under
# ${cache}/go, static builds with the installed toolchain, and an empty module directory
# ${src} under ${out} for the wrapper module.
export GOPATH="${cache}/go" GOMODCACHE="${cache}/go/pkg/mod" GOCACHE="${cache}/go/build-cache"
export GOFLAGS="-modcacherw -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0
src="${out}/src"
rm -rf "${src}"
mkdir -p "${src}"
