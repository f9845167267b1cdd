"""The record log: an append-only JSON-lines file of continuity records,
chained by prev_record_sha256 (the same file the Go preflight writes,
internal/preflight/log.go). One process writes a log at a time."""

from __future__ import annotations

import os
import threading
from typing import Optional

from ._errors import CrawlcheckError

from ._files import FileRefused, read_regular
from ._limits import limits
from .ops import escape_text, verify_chain


class LogError(CrawlcheckError, RuntimeError):
    """The log cannot be opened or appended to."""


class RecordLog:
    """Opens (or creates) the log at path and finds its head: the
    record_sha256 of its last good record, which the next record must name.

    A last line cut off mid-write (no newline, not JSON: a crash during an
    append; the core's verify_chain reports torn_tail) is cut off so the next
    record starts on its own line. A whole last record without its newline
    gets the newline. Both are the core's to say (keep_bytes, add_newline). Any other damage is an error: appending to a log that no
    longer verifies would hide where it broke.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._mu = threading.Lock()
        try:
            self._fd: Optional[int] = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as e:
            raise LogError(f"opening the record log {path}: {e}") from e
        try:
            self.head = self._read_head()
        except BaseException:
            os.close(self._fd)
            self._fd = None
            raise

    def _read_head(self) -> str:
        assert self._fd is not None
        # The bound is the core's (limits.record_log_bytes): the chain is
        # verified in one request to it.
        max_bytes = limits()["record_log_bytes"]
        try:
            data = read_regular(self._fd, self.path, max_bytes)
        except FileRefused as e:
            raise LogError(
                f"record log {self.path}: {e}: a record log is a regular file of at most {max_bytes} bytes "
                "(move a longer one aside to start a new log)"
            ) from e
        if not data:
            return ""
        chain = verify_chain(records=data)
        if not chain.get("valid"):
            raise LogError(
                f"record log {self.path}: broken at record {int(chain.get('broken_at') or 0) + 1}: "
                f"{escape_text(text=str(chain.get('reason') or ''))['text']}; move it aside to start a new log"
            )
        # What to keep of it and whether to end its last line are the core's
        # (keep_bytes: a torn last line cut; add_newline: a whole last record
        # whose newline was never written).
        if chain["keep_bytes"] != len(data):
            os.ftruncate(self._fd, int(chain["keep_bytes"]))
        if chain["add_newline"]:
            os.write(self._fd, b"\n")
        os.fsync(self._fd)
        return str(chain.get("head") or "")

    def append(self, raw: bytes, sha256: str, prev: Optional[str]) -> None:
        """Writes the record and a newline in one write and fsyncs before
        returning. The record must name the log's head as the record before it."""
        with self._mu:
            if self._fd is None:
                raise LogError("record log: closed")
            if (prev or "") != self.head:
                raise LogError(
                    f"record log: record {sha256} names {prev!r} as the record before it, "
                    f"but the log's last record is {self.head!r}"
                )
            line = raw + b"\n"
            n = os.write(self._fd, line)
            if n != len(line):
                raise LogError(f"record log: short write ({n} of {len(line)} bytes)")
            os.fsync(self._fd)
            self.head = sha256

    def close(self) -> None:
        with self._mu:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def write_atomic(path: str, data: bytes, mode: int) -> None:
    """Writes data over path atomically: a temp file in the same directory,
    fsync, rename, directory fsync."""
    d = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(d, f".{os.path.basename(path)}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    dfd = os.open(d, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
