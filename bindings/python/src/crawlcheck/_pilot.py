"""The pilot upload (docs/preflight.md, "The pilot upload"), as the Go
preflight and the JS SDK do it: the records a session writes to its log are
sent to an issuer's pilot (``POST /api/v1/pilot/{id}/records``) from a
background thread, in batches, retried with backoff. The queue is the record
log itself; what the issuer acknowledged is kept beside it
(``<log>.pilot-ack``). Which bytes go next, how they are batched, what the
issuer's answers make of the ack file and when it no longer describes the log
are the core's ``pilot_queue``; this module reads and writes the files, posts
and waits."""

from __future__ import annotations

import math
import os
import random
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple, cast

from ._core import CoreError
from ._errors import CrawlcheckError
from ._limits import limits
from ._log import write_atomic
from .ops import pilot_queue, sign_pilot_upload

UPLOAD_TIMEOUT = 30.0


class PilotError(CrawlcheckError, RuntimeError):
    """The issuer did not take an upload; the records wait in the log."""

    def __init__(self, message: str, chain_gap: bool = False) -> None:
        super().__init__(message)
        self.chain_gap = chain_gap


@dataclass
class Pilot:
    """An issuer's pilot: its base URL, the pilot id and its bearer token;
    record_key, the seed ``POST /api/v1/pilot?record_key=true`` answered,
    when the pilot was made with one: each upload is then signed with it
    (the core's sign_pilot_upload), and the issuer takes no upload to that
    pilot without it (docs/issuer.md, Trust model)."""

    url: str
    id: str
    token: str
    #: seconds: the bounds of the back-off after failed passes, when the
    #: deployment (or a test) gives its own; 0: the core's, 1 s and 5
    #: minutes. How the wait grows is the core's (pilot_queue's wait).
    min_backoff: float = 0.0
    max_backoff: float = 0.0
    record_key: Optional[str] = None


def pilot_ack_path(log_path: str) -> str:
    """Where the acknowledged offset of a record log is kept."""
    return log_path + ".pilot-ack"


def _read_ack(log_path: str) -> Optional[bytes]:
    """The ack file's first bound + 1 bytes (the core judges them); None
    when there is none."""
    try:
        with open(pilot_ack_path(log_path), "rb") as f:
            return f.read(limits()["pilot_ack_bytes"] + 1)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise PilotError(f"crawlcheck: pilot: the ack file: {e}") from None


def _post(pilot: Pilot, batch: bytes) -> Dict[str, Any]:
    """Posts one batch: the issuer's status and answer."""
    bound = limits()["pilot_answer_bytes"]
    url = pilot.url.rstrip("/") + "/api/v1/pilot/" + urllib.parse.quote(pilot.id, safe="") + "/records"
    req = urllib.request.Request(url, data=batch, method="POST")
    req.add_header("Content-Type", "application/jsonl")
    req.add_header("Authorization", "Bearer " + pilot.token)
    if pilot.record_key:
        signed = sign_pilot_upload(private_key=pilot.record_key, pilot_id=pilot.id, records=batch)
        req.add_header("X-Crawlcheck-Pilot-Signature", signed["signature"])
    try:
        with urllib.request.urlopen(req, timeout=UPLOAD_TIMEOUT) as resp:
            status, body = resp.status, resp.read(bound + 1)
    except urllib.error.HTTPError as e:
        status, body = e.code, e.read(bound + 1)
    except (urllib.error.URLError, OSError) as e:
        raise PilotError(f"crawlcheck: pilot: the issuer: {e}") from None
    if len(body) > bound:
        raise PilotError(f"crawlcheck: pilot: the issuer's answer is over {bound} bytes")
    return {"status": status, "body": body}


def _upload_batch(pilot: Pilot, log_path: str) -> Tuple[int, bool]:
    """Runs pilot_queue from a fresh read of the ack file and the log until
    it answers neither a read nor a batch: what it asks for is read or
    posted and handed back. more is the core's (ask again at once)."""
    req: Dict[str, Any] = {}
    ack = _read_ack(log_path)
    if ack is not None:
        req["ack"] = ack
    window = b""
    with open(log_path, "rb") as f:
        req["log_size"] = os.fstat(f.fileno()).st_size
        while True:
            q = pilot_queue(**req)
            if q["ack"] is not None:
                write_atomic(pilot_ack_path(log_path), q["ack"].encode("ascii"), 0o600)
            err = q["error"]
            if err is not None:
                raise PilotError(f"crawlcheck: pilot: {err['message']}", err["code"] == "chain_gap")
            if q["read"] is not None:
                f.seek(q["read"]["offset"])
                window = f.read(q["read"]["length"])
                req["window_offset"], req["window"] = q["read"]["offset"], window
            elif q["batch"] is not None:
                at = q["batch"]["offset"] - req["window_offset"]
                req["answer"] = _post(pilot, window[at : at + q["batch"]["length"]])
            else:
                return q["acknowledged"], q["more"]


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
                try:
                    wait = self._backoff(failures)
                except CoreError as refused:
                    # Bounds the core refuses: no wait can be drawn, so no
                    # pass is tried again; error says why.
                    self.error = refused
                    return
                nxt = time.monotonic() + wait

    def _backoff(self, failures: int) -> float:
        """The wait, in seconds, after failures passes failed in a row: drawn
        here within the bounds the core answers (pilot_queue's wait)."""
        bounds: Dict[str, int] = {}
        if self.pilot.min_backoff > 0:
            bounds["min"] = math.ceil(self.pilot.min_backoff * 1000)
        if self.pilot.max_backoff > 0:
            bounds["max"] = math.ceil(self.pilot.max_backoff * 1000)
        # With failed_passes the core always answers wait.
        wait = cast(Dict[str, int], pilot_queue(failed_passes=failures, backoff_ms=bounds or None)["wait"])
        return random.uniform(wait["min"], wait["max"]) / 1000
