"""Reading JSON-RPC frames as bytes (the Python twin of bindings/js/src/frames.js
and the Go preflight's members): a frame's members are kept verbatim, so a
page is the exact bytes of its result member and the core, not Python's
parser, judges what a server sent (a repeated key, a number's spelling, a
lone surrogate, invalid UTF-8).

Only the grammar is checked here. The frame is read as Latin-1, one
character per byte, so that a string's index is its byte offset and a byte
that is not UTF-8 is an ordinary character; Python's own JSON scanner (C)
finds where each value ends, and what it decodes is thrown away.
"""

from __future__ import annotations

import json
from typing import Dict, List, Optional, Tuple

_WS = " \t\r\n"


def _refuse_constant(name: str) -> None:
    # NaN, Infinity and -Infinity are not JSON.
    raise ValueError(f"not JSON: {name}")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def _skip(s: str, i: int) -> int:
    while i < len(s) and s[i] in _WS:
        i += 1
    return i


def _end(s: str, i: int) -> int:
    """The index just past the JSON value at i (ValueError when there is none)."""
    try:
        return int(_DECODER.raw_decode(s, i)[1])
    except RecursionError:
        raise ValueError("nested too deeply") from None


def members(frame: bytes) -> Tuple[Optional[Dict[str, bytes]], bool]:
    """The members of a JSON object as verbatim byte slices, the last of a
    repeated key kept, and whether a key repeated; (None, False) when the
    bytes are not one JSON object."""
    s = frame.decode("latin-1")
    try:
        i = _skip(s, 0)
        if i >= len(s) or s[i] != "{":
            return None, False
        out: Dict[str, bytes] = {}
        repeated = False
        i = _skip(s, i + 1)
        if i < len(s) and s[i] == "}":
            return (out, False) if _skip(s, i + 1) == len(s) else (None, False)
        while True:
            if i >= len(s) or s[i] != '"':
                return None, False
            k_end = _end(s, i)
            # The key as UTF-8 text (a key that is not UTF-8 matches no name).
            key = json.loads(frame[i:k_end].decode("utf-8", "replace"))
            i = _skip(s, k_end)
            if i >= len(s) or s[i] != ":":
                return None, False
            v_start = _skip(s, i + 1)
            v_end = _end(s, v_start)
            repeated = repeated or key in out
            out[key] = frame[v_start:v_end]
            i = _skip(s, v_end)
            if i < len(s) and s[i] == ",":
                i = _skip(s, i + 1)
            elif i < len(s) and s[i] == "}":
                return (out, repeated) if _skip(s, i + 1) == len(s) else (None, False)
            else:
                return None, False
    except ValueError:
        return None, False


def elements(frame: bytes) -> Optional[List[bytes]]:
    """The elements of a JSON array as verbatim byte slices, or None when the
    bytes are not one JSON array (a JSON-RPC batch is one)."""
    s = frame.decode("latin-1")
    try:
        i = _skip(s, 0)
        if i >= len(s) or s[i] != "[":
            return None
        out: List[bytes] = []
        i = _skip(s, i + 1)
        if i < len(s) and s[i] == "]":
            return out if _skip(s, i + 1) == len(s) else None
        while True:
            v_start = i
            v_end = _end(s, v_start)
            out.append(frame[v_start:v_end])
            i = _skip(s, v_end)
            if i < len(s) and s[i] == ",":
                i = _skip(s, i + 1)
            elif i < len(s) and s[i] == "]":
                return out if _skip(s, i + 1) == len(s) else None
            else:
                return None
    except ValueError:
        return None


def value(raw: Optional[bytes]) -> object:
    """A small member's value (an id, a method) as Python, or None."""
    if raw is None:
        return None
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError):
        return None


def id_key(raw: bytes) -> Optional[str]:
    """The compact JSON text of an id (so 7 and "7" stay apart), or None
    for a member that is no id (absent, null, an object)."""
    v = value(raw)
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        return None
    return json.dumps(v, separators=(",", ":"))
