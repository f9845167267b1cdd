"""The lockfile and the record log are read as regular files of bounded size
(issue 22, F10), as the Go preflight reads them: /dev/zero, /dev/full, a FIFO
and an oversized file are each a clear error naming the file, raised on
entering the preflight before the session starts — never a hang or an
unbounded read."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from servers import NOW, pin

from crawlcheck._limits import limits
from crawlcheck._log import LogError, RecordLog
from crawlcheck.preflight import PreflightError, with_preflight

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Unstarted:
    """Stands in for a ClientSession the preflight must never reach: it
    fails the test if the preflight taps or enters it."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the session was reached ({name}) before the files were refused")


def fifo(tmp: Path) -> str:
    p = tmp / "fifo"
    os.mkfifo(p)
    return str(p)


def sparse(tmp: Path, name: str, size: int) -> str:
    p = tmp / name
    with open(p, "wb") as f:
        f.truncate(size)
    return str(p)


async def refused(lock: str, **kw: Any) -> BaseException:
    started = time.monotonic()
    with pytest.raises((PreflightError, LogError)) as e:
        async with with_preflight(Unstarted(), lock, endpoint="http://127.0.0.1:9/mcp", now=lambda: NOW, **kw):
            pass
    assert time.monotonic() - started < 2, "refused at once, not after a read or a wait"
    return e.value


async def test_a_lockfile_that_is_not_a_regular_file_of_at_most_the_cores_request_bytes_is_refused(tmp_path: Path) -> None:
    max_lock = limits()["request_bytes"]
    for lock, want in [
        ("/dev/zero", "reading the lockfile: /dev/zero is not a regular file (a character device)"),
        (fifo(tmp_path), "fifo is not a regular file (a FIFO)"),
        (str(tmp_path), "is not a regular file (a directory)"),
        (sparse(tmp_path, "big.lock.json", max_lock + 1), f"big.lock.json holds {max_lock + 1} bytes, more than the {max_lock} this reads"),
    ]:
        e = await refused(lock)
        assert isinstance(e, PreflightError) and want in str(e), (lock, str(e))


async def test_a_record_log_that_is_not_a_regular_file_of_at_most_the_cores_record_log_bytes_is_refused(tmp_path: Path) -> None:
    lock = str(pin(tmp_path, "http://127.0.0.1:9/mcp"))
    max_log = limits()["record_log_bytes"]
    for log, want in [
        ("/dev/zero", "record log /dev/zero: /dev/zero is not a regular file (a character device): a record log is a regular file of at most"),
        ("/dev/full", "record log /dev/full: /dev/full is not a regular file (a character device)"),
        (fifo(tmp_path), "fifo is not a regular file (a FIFO)"),
        (sparse(tmp_path, "big.jsonl", max_log + 1), f"big.jsonl holds {max_log + 1} bytes, more than the {max_log} this reads"),
    ]:
        e = await refused(lock, log_path=log)
        assert isinstance(e, LogError) and want in str(e), (log, str(e))


def test_why_a_record_log_does_not_verify_is_shown_escaped(tmp_path: Path) -> None:
    """The reason can quote the log's own bytes (a record kind written into
    the file): the error shows them through the core's escape rule, as the
    JS and Go hosts do, so an override from the file reorders nothing."""
    log = tmp_path / "records.jsonl"
    log.write_bytes('{"kind":"\u202eevil"}\n'.encode())
    with pytest.raises(LogError) as e:
        RecordLog(str(log))
    assert 'record kind is "\\u{202E}evil"' in str(e.value) and "\u202e" not in str(e.value), str(e.value)
