"""The pilot upload (docs/preflight.md, "The pilot upload"), as the Go
preflight and the JS SDK do it: the records a session writes to its log are
sent to an issuer's pilot (``POST /api/v1/pilot/{id}/records``) from a
background thread, in batches, retried with backoff. The queue is the record
log itself; what the issuer acknowledged is kept beside it
(``<log>.pilot-ack``: the byte offset where the last answered line ends, a
space, its record_sha256), so a record not acknowledged is never dropped and
a line sent twice is the issuer's duplicate. The issuer judges every line;
this module moves bytes and keeps an offset."""

from __future__ import annotations

import json
import os
import random
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

from ._errors import CrawlcheckError
from ._files import read_regular_file
from ._log import write_atomic

MAX_UPLOAD_BYTES = 4 << 20
MAX_UPLOAD_LINES = 500
MAX_RECORD_BYTES = 8 << 20  # the issuer's bound: a record up to it goes alone
MAX_PILOT_ANSWER = 8 << 20
UPLOAD_TIMEOUT = 30.0


class PilotError(CrawlcheckError, RuntimeError):
    """The issuer did not take an upload; the records wait in the log."""

    def __init__(self, message: str, chain_gap: bool = False) -> None:
        super().__init__(message)
        self.chain_gap = chain_gap


@dataclass
class Pilot:
    """An issuer's pilot: its base URL, the pilot id and its bearer token."""

    url: str
    id: str
    token: str
    min_backoff: float = 1.0
    max_backoff: float = 300.0


def pilot_ack_path(log_path: str) -> str:
    """Where the acknowledged offset of a record log is kept."""
    return log_path + ".pilot-ack"


def _read_ack(log_path: str) -> int:
    try:
        off = int(read_regular_file(pilot_ack_path(log_path), 256).split(b" ")[0])
    except (OSError, ValueError):
        return 0
    return off if off >= 0 else 0


def _post(pilot: Pilot, batch: bytes) -> List[Any]:
    url = pilot.url.rstrip("/") + "/api/v1/pilot/" + urllib.parse.quote(pilot.id, safe="") + "/records"
    req = urllib.request.Request(url, data=batch, method="POST")
    req.add_header("Content-Type", "application/jsonl")
    req.add_header("Authorization", "Bearer " + pilot.token)
    try:
        with urllib.request.urlopen(req, timeout=UPLOAD_TIMEOUT) as resp:
            body = resp.read(MAX_PILOT_ANSWER + 1)
    except urllib.error.HTTPError as e:
        code = ""
        try:
            code = json.loads(e.read(64 << 10)).get("code", "")
        except (ValueError, AttributeError):
            pass
        raise PilotError(f"crawlcheck: pilot: the issuer answered HTTP {e.code} {code}".rstrip()) from None
    except (urllib.error.URLError, OSError) as e:
        raise PilotError(f"crawlcheck: pilot: the issuer: {e}") from None
    if len(body) > MAX_PILOT_ANSWER:
        raise PilotError(f"crawlcheck: pilot: the issuer's answer is over {MAX_PILOT_ANSWER} bytes")
    try:
        results = json.loads(body)["results"]
    except (ValueError, KeyError, TypeError) as e:
        raise PilotError(f"crawlcheck: pilot: the issuer's answer: {e}") from None
    if not isinstance(results, list):
        raise PilotError("crawlcheck: pilot: the issuer's answer has no results")
    return results


def _upload_batch(pilot: Pilot, log_path: str) -> Tuple[int, bool]:
    off = _read_ack(log_path)
    with open(log_path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < off:
            off = 0  # the log was replaced: send it all
        f.seek(off)
        buf = f.read(min(size - off, MAX_RECORD_BYTES))
    end = lines = 0
    while end < len(buf) and lines < MAX_UPLOAD_LINES:
        i = buf.find(b"\n", end)
        if i < 0 or (lines > 0 and i + 1 > MAX_UPLOAD_BYTES):
            break
        end, lines = i + 1, lines + 1
    if lines == 0 and len(buf) == MAX_RECORD_BYTES:
        raise PilotError(
            f"crawlcheck: pilot: the record at byte {off} of the log is over {MAX_RECORD_BYTES} bytes, "
            "more than the issuer takes: it stays in the log"
        )
    if lines == 0:
        return 0, False
    batch = buf[:end]
    results = _post(pilot, batch)
    pos = acked = 0
    last = ""
    gap: Optional[PilotError] = None
    for r in results:
        i = batch.find(b"\n", pos)
        if i < 0 or not isinstance(r, dict):
            break
        if r.get("status") == "chain_gap":
            gap = PilotError(f"crawlcheck: pilot: the issuer's chain for this pilot does not lead to the next record: {r.get('reason')}", True)
            break
        pos, acked = i + 1, acked + 1
        last = str(r.get("record_sha256") or "")
    if acked:
        write_atomic(pilot_ack_path(log_path), f"{off + pos} {last}\n".encode("ascii"), 0o600)
    if gap is not None:
        raise gap
    if acked < lines:
        raise PilotError(f"crawlcheck: pilot: the issuer answered {acked} of {lines} records")
    return acked, off + end < size


def upload_pending(pilot: Pilot, log_path: str) -> int:
    """Sends the records of the log the issuer has not acknowledged, batch
    after batch, until none is left; raises PilotError when the issuer cannot
    take them (the offset kept is where its answers stopped). Answers how
    many lines were acknowledged."""
    done = 0
    while True:
        acked, more = _upload_batch(pilot, log_path)
        done += acked
        if not more:
            return done


class PilotUploader:
    """Uploads a record log from a daemon thread: kick() after each record,
    close() when done. It never blocks or fails a session: what it could not
    send waits in the log for the next try (``error`` says why)."""

    poll = 60.0

    def __init__(self, pilot: Pilot, log_path: str) -> None:
        for name in ("url", "id", "token"):
            if not isinstance(getattr(pilot, name), str) or not getattr(pilot, name):
                raise TypeError(f"crawlcheck: pilot needs {name}")
        self.pilot = pilot
        self.log_path = log_path
        self.error: Optional[BaseException] = None
        self._kicked = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="crawlcheck-pilot", daemon=True)
        self._thread.start()

    def kick(self) -> None:
        """A record was appended; never blocks."""
        self._kicked.set()

    def close(self) -> None:
        """Stops the thread; a batch in flight is abandoned (sent again)."""
        self._stop.set()
        self._kicked.set()

    def _loop(self) -> None:
        failures = 0
        nxt = time.monotonic()
        while not self._stop.is_set():
            self._kicked.wait(max(0.0, nxt - time.monotonic()))
            if self._stop.is_set():
                return
            kicked = self._kicked.is_set()
            self._kicked.clear()
            if kicked and failures and time.monotonic() < nxt:
                continue  # a kick does not cut a backoff short: the issuer asked for room
            try:
                upload_pending(self.pilot, self.log_path)
                self.error, failures = None, 0
                nxt = time.monotonic() + self.poll
            except (PilotError, OSError) as e:
                self.error, failures = e, failures + 1
                d = min(self.pilot.max_backoff, self.pilot.min_backoff * 2 ** min(failures - 1, 20))
                nxt = time.monotonic() + d / 2 + random.random() * d / 2
