"""What a caller of the preflight hands it and gets back: the lockfile forms
an entry point takes, the errors it raises (ContinuityRefused with the
core's words, PreflightError), the endpoint string of a server and the
record's time form.

These are apart from preflight.py, which runs the session, so that the
adapters (langchain, crewai, openai_agents) and a reader find the
preflight's public vocabulary in one short module; preflight.py re-exports
every name (``crawlcheck.preflight.ContinuityRefused`` keeps working).
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._core import CoreError
from ._errors import CrawlcheckError
from .ops import endpoint as _endpoint_op
from .ops import escape_text, refusal

def show(s: str) -> str:
    """A server's string made safe to show a person: the core's escape_text."""
    return str(escape_text(text=s)["text"])


class ContinuityRefused(CrawlcheckError):
    """A call the check refused: a withheld tool (``tool`` set) or a session
    paused or denied (``tool`` None). ``record`` is the record that decided
    (a dict), ``record_raw`` its canonical bytes."""

    def __init__(self, record: Dict[str, Any], record_raw: bytes, tool: Optional[str] = None, effect: str = "") -> None:
        self.record = record
        self.record_raw = record_raw
        self.tool = tool
        self.effect = effect
        # The core's words (refusal): the effect, the observations, what
        # differed, as the Go preflight and JS say them.
        try:
            msg = str(refusal(record=record_raw, tool=tool)["text"])
        except CoreError:
            # A record the core cannot read (never one it wrote): the bare facts.
            msg = f"crawlcheck: refused: {effect} (record {record.get('record_sha256', '')})"
        super().__init__(msg)


#: A lockfile as every entry point takes it, as JS takes it: its path, its
#: bytes, or its JSON value (a mapping), written compactly.
Lock = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, Mapping[str, Any], List[Any]]


def _lock_source(lock: Any) -> Tuple[Optional[str], Optional[bytes]]:
    """(path, None) for a path, (None, bytes) for the lockfile's bytes or
    JSON value; TypeError, with JS's words, for anything else."""
    if isinstance(lock, (str, os.PathLike)):
        return str(os.fspath(lock)), None
    if isinstance(lock, (bytes, bytearray, memoryview)):
        return None, bytes(lock)
    if lock is None:
        raise TypeError("crawlcheck: with_preflight needs lock: the lockfile's path (or its bytes)")
    if isinstance(lock, (Mapping, list)):
        try:
            return None, json.dumps(lock, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
        except (TypeError, ValueError) as e:
            raise TypeError(f"crawlcheck: lock: bytes, text or a JSON value ({e})") from None
    raise TypeError("crawlcheck: lock: bytes, text or a JSON value")


class _HandshakeRefused(Exception):
    """The SDK could not take the server's answer to the handshake."""


class PreflightError(CrawlcheckError, RuntimeError):
    """The check could not be made (a configuration the core refuses, a log
    that cannot be written): there is no record, and every call fails."""


def format_time(t: datetime) -> str:
    """RFC 3339, UTC, milliseconds: the form the core writes."""
    t = t.astimezone(timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def endpoint_of(server: Union[str, Sequence[str], Any]) -> str:
    """The endpoint string a record carries (the core's endpoint op): a URL as
    given, or for a stdio server (a StdioServerParameters or an argv list)
    ``stdio:`` + the command line."""
    if isinstance(server, str):
        return str(_endpoint_op(url=server)["endpoint"])
    if hasattr(server, "command"):
        argv = [str(server.command), *[str(a) for a in (getattr(server, "args", None) or [])]]
    else:
        argv = [str(a) for a in server]
    return str(_endpoint_op(command=argv)["endpoint"])
