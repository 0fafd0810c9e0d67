"""The one file opener: plain, or confined beneath roots (the MCP server's) without a race.

Checking a path and opening it later can be raced: a folder inside a root swapped for a symlink
to /etc between the two gives /etc back. So, while `confined(roots)` is in force, every file and
folder the corpus code opens is opened relative to a descriptor of its root, with no symlink
followed on the way: `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` where the kernel has it,
else one `openat(O_NOFOLLOW)` per component. What was opened is then checked with `fstat`
(a regular file or a folder), never the name. The paths given are the roots' real paths (the MCP
roots resolve them first), so a symlink met here appeared after the check: it is refused.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import stat
from contextvars import ContextVar
from typing import BinaryIO, Iterator

from rlm.errors import UsageError

_roots: ContextVar[tuple[str, ...] | None] = ContextVar("rlm_confined_roots", default=None)

_SYS_OPENAT2 = 437  # the same number on every Linux architecture (the generic table)
_RESOLVE_NO_MAGICLINKS, _RESOLVE_NO_SYMLINKS, _RESOLVE_BENEATH = 0x02, 0x04, 0x08
_openat2_works: bool | None = None  # learned on first use: ENOSYS (old kernel, seccomp) -> walk
_own: set[str] = set()  # rlm's own spool files (a .gz decompressed): outside every root


from rlm.errors import PathRefused  # noqa: E402 - raised here, defined with the other errors


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64),
                ("resolve", ctypes.c_uint64)]


@contextlib.contextmanager
def confined(roots: list[str] | tuple[str, ...] | None) -> Iterator[None]:
    """Within this block (this thread or task and what it starts), opens stay beneath `roots`
    (real paths). None: no confinement."""
    token = _roots.set(tuple(os.fspath(r) for r in roots) if roots is not None else None)
    try:
        yield
    finally:
        _roots.reset(token)


def current() -> tuple[str, ...] | None:
    """The roots in force (to hand to worker processes), or None."""
    return _roots.get()


def own(path: str | os.PathLike, mine: bool = True) -> None:
    """Declare (or, mine=False, forget) one of rlm's own temporary files: opened as it is
    (never through a symlink) even under confinement."""
    (_own.add if mine else _own.discard)(os.path.abspath(os.fspath(path)))


def owned() -> frozenset[str]:
    """rlm's own files now (to hand to worker processes with the roots)."""
    return frozenset(_own)


def describe(roots: tuple[str, ...]) -> str:
    return ", ".join(roots)


def _split(path: str, roots: tuple[str, ...]) -> tuple[str, str]:
    """(root, path relative to it) for the first root that holds `path` (normalised only)."""
    p = os.path.normpath(os.path.abspath(path))
    for r in roots:
        if p == r:
            return r, "."
        if p.startswith(r.rstrip("/") + "/"):
            return r, os.path.relpath(p, r)
    raise PathRefused(f"{path} is outside the allowed roots ({describe(roots)}); it was not read")


def _openat2(dirfd: int, rel: str, flags: int) -> int:
    global _openat2_works
    libc = ctypes.CDLL(None, use_errno=True)
    how = _OpenHow(flags, 0, _RESOLVE_BENEATH | _RESOLVE_NO_SYMLINKS | _RESOLVE_NO_MAGICLINKS)
    fd = libc.syscall(_SYS_OPENAT2, dirfd, os.fsencode(rel), ctypes.byref(how),
                      ctypes.sizeof(how))
    if fd >= 0:
        _openat2_works = True
        return fd
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EPERM) and not _openat2_works:
        _openat2_works = False  # not available here (EPERM: a seccomp filter): walk instead
        return _walk_open(dirfd, rel, flags)
    raise OSError(err, os.strerror(err), rel)


def _walk_open(dirfd: int, rel: str, flags: int) -> int:
    """openat one component at a time, each with O_NOFOLLOW: no symlink is ever followed."""
    parts = [c for c in rel.split("/") if c not in ("", ".")]
    if ".." in parts:
        raise OSError(errno.EXDEV, "a '..' component", rel)
    cur = os.dup(dirfd)
    try:
        for name in parts[:-1]:
            nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                          dir_fd=cur)
            os.close(cur)
            cur = nxt
        if not parts:
            return os.open(".", flags, dir_fd=cur)
        return os.open(parts[-1], flags | os.O_NOFOLLOW, dir_fd=cur)
    finally:
        os.close(cur)


def _open_confined(path: str, roots: tuple[str, ...], flags: int) -> int:
    root, rel = _split(path, roots)
    rootfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        if _openat2_works is False:
            return _walk_open(rootfd, rel, flags)
        return _openat2(rootfd, rel, flags)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EXDEV, errno.ENOTDIR):
            raise PathRefused(f"{path} passes through a symlink or leaves the allowed roots "
                              f"({describe(roots)}) while being opened; it was not read") from None
        raise
    finally:
        os.close(rootfd)


def open_fd(path: str | os.PathLike, folder: bool = False) -> int:
    """A descriptor of `path`. Confined: beneath the roots, and only a regular file (or a folder
    when `folder`): O_NONBLOCK keeps a FIFO from blocking the open, and fstat refuses anything
    that is not what was asked for."""
    p = os.fspath(path)
    flags = os.O_RDONLY | os.O_CLOEXEC | (os.O_DIRECTORY if folder else 0)
    roots = _roots.get()
    if roots is None:  # unconfined: exactly what open() does
        return os.open(p, flags)
    if os.path.abspath(p) in _own:
        fd = os.open(p, flags | os.O_NOFOLLOW | os.O_NOCTTY | os.O_NONBLOCK)
    else:
        fd = _open_confined(p, roots, flags | os.O_NOCTTY | os.O_NONBLOCK)
    st = os.fstat(fd)
    ok = stat.S_ISDIR(st.st_mode) if folder else stat.S_ISREG(st.st_mode)
    if not ok:
        os.close(fd)
        kind = "folder" if folder else "regular file"
        raise OSError(errno.EISDIR if stat.S_ISDIR(st.st_mode) else errno.EINVAL,
                      f"not a {kind}", p)
    if not folder:
        os.set_blocking(fd, True)
    return fd


def open_file(path: str | os.PathLike) -> BinaryIO:
    """`open(path, "rb")`, confined when confinement is in force."""
    return os.fdopen(open_fd(path), "rb")


def file_size(path: str | os.PathLike) -> int:
    """The size of the file that opening `path` gives (not of what its name says now)."""
    fd = open_fd(path)
    try:
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def read_bytes(path: str | os.PathLike) -> bytes:
    """`Path(path).read_bytes()`, confined when confinement is in force."""
    with open_file(path) as fh:
        return fh.read()


def read_text(path: str | os.PathLike) -> str:
    """The file as UTF-8 text with replacement characters, confined when in force."""
    return read_bytes(path).decode("utf-8", errors="replace")


@contextlib.contextmanager
def scan_folder(path: str | os.PathLike) -> Iterator[Iterator[os.DirEntry]]:
    """`os.scandir(path)`; confined, through a descriptor opened beneath the roots (entries'
    `.path` is then the bare name: join names to the folder's path yourself)."""
    if _roots.get() is None:
        with os.scandir(path) as it:
            yield it
        return
    fd = open_fd(path, folder=True)
    try:
        with os.scandir(fd) as it:
            yield it
    finally:
        os.close(fd)
