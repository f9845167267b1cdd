"""call(op, request): the core's one function, with Python values.

A request is a mapping of JSON values. A ``bytes`` value anywhere in it is a
document's bytes (a tools/list page, a lockfile, a policy, a record...): it
travels as a raw attachment (docs/abi.md, ABI 2: the field holds
``{"$raw": i}`` and the bytes are frame i), so it is neither escaped into a
JSON string nor required to be UTF-8; the core answers exactly as if it had
been that string.
"""

from __future__ import annotations

import json
import struct
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ._errors import CrawlcheckError
from ._lib import library

_OK_PREFIX = b'{"ok":true,"result":'


class CoreError(CrawlcheckError):
    """An error envelope: the core refused the request. ``code`` is one of the
    closed list in docs/abi.md (``bad_request``, ``lock_invalid``, ...)."""

    def __init__(self, op: str, code: str, message: str) -> None:
        super().__init__(f"{op}: {message} ({code})")
        self.op = op
        self.code = code
        self.message = message


def encode_request(request: Mapping[str, Any]) -> Tuple[bytes, Optional[bytes]]:
    """The request's bytes and its attachments (None when there are none)."""
    # Each frame's length prefix and its bytes, in order: joined once at the
    # end, so a document is copied once into the attachments (a prefix
    # concatenated to each frame first copied every document twice).
    parts: List[Any] = []

    def walk(v: Any) -> Any:
        if isinstance(v, (bytes, bytearray, memoryview)):
            i = len(parts) // 2
            parts.append(struct.pack("<I", memoryview(v).nbytes))
            parts.append(v)
            return {"$raw": i}
        if isinstance(v, Mapping):
            return {str(k): walk(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(x) for x in v]
        return v

    body = walk(request)
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    req = text.encode("utf-8")
    if not parts:
        return req, None
    return req, b"".join(parts)


def call_bytes(op: str, request: bytes, attachments: Optional[bytes] = None) -> bytes:
    """Runs op on request bytes as they are; returns the envelope's bytes."""
    return library().call(op, request, attachments)


def result_bytes(op: str, envelope: bytes) -> bytes:
    """The result member of a success envelope, as the core wrote it
    (canonical JSON), or CoreError for an error envelope."""
    if envelope.startswith(_OK_PREFIX) and envelope.endswith(b"}"):
        return envelope[len(_OK_PREFIX) : -1]
    try:
        env = json.loads(envelope)
        err = env["error"]
        code, message = str(err["code"]), str(err["message"])
    except (ValueError, KeyError, TypeError):
        raise CoreError(op, "internal", f"an answer that is not an envelope: {envelope[:200]!r}") from None
    raise CoreError(op, code, message)


def call_result(op: str, request: Mapping[str, Any]) -> bytes:
    """Runs op and returns its result's canonical bytes (the bytes a record's
    record_sha256 covers), or raises CoreError."""
    req, att = encode_request(request)
    return result_bytes(op, call_bytes(op, req, att))


def call(op: str, request: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
    """Runs op on request and returns its result, or raises CoreError with
    the core's code."""
    res = json.loads(call_result(op, request if request is not None else {}))
    if not isinstance(res, dict):
        raise CoreError(op, "internal", "a result that is not an object")
    return res
