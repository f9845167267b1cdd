"""Bounded reads of the files the package is given a path to (the lockfile,
the record log, the issuer replay state), as the Go preflight's
readFile/readRegular: a regular file of at most a limit, refused by its size
before a byte is read. A device or a FIFO (``/dev/zero``, ``/dev/full``, a
pipe) would otherwise be read without bound, or block before any check."""

from __future__ import annotations

import os
import stat

from ._errors import CrawlcheckError



class FileRefused(CrawlcheckError, OSError):
    """A file that is not a regular file of at most the limit."""


def read_regular_file(path: str, limit: int) -> bytes:
    """The bytes of the regular file at path, of at most limit bytes."""
    # O_NONBLOCK: opening a FIFO for reading would wait for a writer.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        return read_regular(fd, path, limit)
    finally:
        os.close(fd)


def read_regular(fd: int, name: str, limit: int) -> bytes:
    """The bytes of an open file from its start, refused unless it is a
    regular file of at most limit bytes."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise FileRefused(f"{name} is not a regular file ({_kind(st.st_mode)})")
    if st.st_size > limit:
        raise FileRefused(f"{name} holds {st.st_size} bytes, more than the {limit} this reads")
    parts = []
    at = 0
    # One byte past the limit is asked for: a file that grows while it is read is caught.
    while at <= limit:
        b = os.pread(fd, min(1 << 20, limit + 1 - at), at)
        if not b:
            break
        parts.append(b)
        at += len(b)
    if at > limit:
        raise FileRefused(f"{name} grew past {limit} bytes while it was read")
    return b"".join(parts)


def _kind(mode: int) -> str:
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"
