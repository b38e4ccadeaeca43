"""Real disk faults for brokers: a small filesystem that fills up, and I/O errors on demand.

- ``small_filesystem(path, size)``: a tmpfs of ``size`` bytes mounted at ``path`` (needs
  root), unmounted on the way out even if a broker still holds files there.
- ``eio_shim()``: a shared library, built with gcc once into ~/.cache/odradek, to put in a
  broker's LD_PRELOAD. With ``EIO_SHIM_DIRS=<dir>:<dir>...`` set, ``write``, ``pwrite``,
  ``writev``, ``pwritev``, ``fsync`` and ``fdatasync`` on a file under one of the
  directories fail with EIO while the file ``<dir>.eio`` (its trigger, beside the
  directory) exists.
- ``fill(path, leave)``: a filler file taking all but ``leave`` bytes of the filesystem of
  ``path``; deleting it gives the space back.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

SHIM_SOURCE = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

/* Whether fd is a file under one of EIO_SHIM_DIRS whose trigger <dir>.eio exists. */
static int failing(int fd) {
    const char *dirs = getenv("EIO_SHIM_DIRS");
    char link[64], path[PATH_MAX], trigger[PATH_MAX];
    if (dirs == NULL) return 0;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t length = readlink(link, path, sizeof path - 1);
    if (length <= 0) return 0;
    path[length] = '\0';
    while (*dirs) {
        size_t n = strcspn(dirs, ":");
        if (n > 0 && n < sizeof trigger - 5 && strncmp(path, dirs, n) == 0 && path[n] == '/') {
            memcpy(trigger, dirs, n);
            strcpy(trigger + n, ".eio");
            if (access(trigger, F_OK) == 0) return 1;
        }
        dirs += n + (dirs[n] == ':');
    }
    return 0;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))
#define FAIL_IF_TRIGGERED(fd) do { if (failing(fd)) { errno = EIO; return -1; } } while (0)

ssize_t write(int fd, const void *buf, size_t count) {
    FAIL_IF_TRIGGERED(fd);
    return NEXT(write)(fd, buf, count);
}
ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    FAIL_IF_TRIGGERED(fd);
    return NEXT(pwrite)(fd, buf, count, offset);
}
ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset) {
    FAIL_IF_TRIGGERED(fd);
    return NEXT(pwrite64)(fd, buf, count, offset);
}
ssize_t writev(int fd, const struct iovec *iov, int count) {
    FAIL_IF_TRIGGERED(fd);
    return NEXT(writev)(fd, iov, count);
}
ssize_t pwritev(int fd, const struct iovec *iov, int count, off_t offset) {
    FAIL_IF_TRIGGERED(fd);
    return NEXT(pwritev)(fd, iov, count, offset);
}
int fsync(int fd) {
    FAIL_IF_TRIGGERED(fd);
    return NEXT(fsync)(fd);
}
int fdatasync(int fd) {
    FAIL_IF_TRIGGERED(fd);
    return NEXT(fdatasync)(fd);
}
"""
CACHE_DIR = Path.home() / ".cache" / "odradek"


def eio_shim() -> Path:
    """The shim's shared library, compiled on first use (cached by source hash)."""
    digest = hashlib.sha256(SHIM_SOURCE.encode()).hexdigest()[:12]
    library = CACHE_DIR / f"eio-shim-{digest}.so"
    if not library.exists():
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        source = library.with_suffix(".c")
        source.write_text(SHIM_SOURCE)
        partial = library.with_suffix(f".so.{os.getpid()}")
        subprocess.run(
            ["gcc", "-shared", "-fPIC", "-O2", "-o", str(partial), str(source), "-ldl"],
            check=True,
            capture_output=True,
        )
        partial.rename(library)  # atomic: a concurrent build never loads a torn library
    return library


def eio_trigger(log_dir: Path) -> Path:
    """The file whose existence makes writes under ``log_dir`` fail (with the shim)."""
    return log_dir.with_name(log_dir.name + ".eio")


@contextlib.contextmanager
def small_filesystem(path: Path, size: int) -> Iterator[Path]:
    """A tmpfs of ``size`` bytes at ``path``; unmounted (lazily if busy) afterwards."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        check=True,
        capture_output=True,
    )
    try:
        yield path
    finally:
        if subprocess.run(["umount", str(path)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(path)], check=True, capture_output=True)


def fill(path: Path, leave: int) -> Path:
    """A file in ``path``'s filesystem taking all its free space but ``leave`` bytes."""
    usage = os.statvfs(path)
    free = usage.f_bavail * usage.f_frsize
    filler = path / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.posix_fallocate(fd, 0, max(free - leave, 1))
    finally:
        os.close(fd)
    return filler
