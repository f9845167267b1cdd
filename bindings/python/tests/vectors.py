"""The shared vectors of testdata/ as the exact bytes a host sends and must
get back (docs/testdata.md; the same reading as hosttest/vectors).

Bytes are taken from the file, never re-encoded: a member's bytes are found
by a scanner over the file and only compacted (insignificant white space
removed, every token kept), so key order, escapes and number spellings reach
the core as the vector's author wrote them.
"""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Set, Tuple

WS = b" \t\r\n"
REPO_TESTDATA = Path(__file__).resolve().parents[3] / "testdata"


@dataclass
class Vector:
    name: str
    op: str
    request: bytes
    want: bytes


def _skip_ws(b: bytes, i: int) -> int:
    while i < len(b) and b[i] in WS:
        i += 1
    return i


def _value_end(b: bytes, i: int) -> int:
    """The end of the JSON value starting at b[i] (no leading white space)."""
    c = b[i : i + 1]
    if c == b'"':
        i += 1
        while True:
            ch = b[i]
            if ch == 0x5C:  # backslash
                i += 2
            elif ch == 0x22:
                return i + 1
            else:
                i += 1
    if c in (b"{", b"["):
        close = b"}" if c == b"{" else b"]"
        i = _skip_ws(b, i + 1)
        if b[i : i + 1] == close:
            return i + 1
        while True:
            if c == b"{":
                i = _skip_ws(b, _value_end(b, i))  # key
                assert b[i : i + 1] == b":", f"':' expected at {i}"
                i = _skip_ws(b, i + 1)
            i = _skip_ws(b, _value_end(b, i))
            if b[i : i + 1] == b",":
                i = _skip_ws(b, i + 1)
                continue
            assert b[i : i + 1] == close, f"{close!r} expected at {i}"
            return i + 1
    while i < len(b) and b[i] not in b",]} \t\r\n":
        i += 1
    return i


def members(b: bytes) -> Dict[str, bytes]:
    """The members of a JSON object, each its verbatim bytes."""
    out: Dict[str, bytes] = {}
    i = _skip_ws(b, 0)
    assert b[i : i + 1] == b"{"
    i = _skip_ws(b, i + 1)
    while b[i : i + 1] != b"}":
        kend = _value_end(b, i)
        key = json.loads(b[i:kend])
        i = _skip_ws(b, kend)
        i = _skip_ws(b, i + 1)
        vend = _value_end(b, i)
        out[key] = b[i:vend]
        i = _skip_ws(b, vend)
        if b[i : i + 1] == b",":
            i = _skip_ws(b, i + 1)
    return out


def elements(b: bytes) -> List[bytes]:
    out: List[bytes] = []
    i = _skip_ws(b, 0)
    assert b[i : i + 1] == b"["
    i = _skip_ws(b, i + 1)
    while b[i : i + 1] != b"]":
        end = _value_end(b, i)
        out.append(b[i:end])
        i = _skip_ws(b, end)
        if b[i : i + 1] == b",":
            i = _skip_ws(b, i + 1)
    return out


def compact(b: bytes) -> bytes:
    """Removes white space outside strings and nothing else (Go's json.Compact)."""
    out = bytearray()
    in_str = esc = False
    for ch in b:
        if in_str:
            out.append(ch)
            if esc:
                esc = False
            elif ch == 0x5C:
                esc = True
            elif ch == 0x22:
                in_str = False
        elif ch in WS:
            continue
        else:
            if ch == 0x22:
                in_str = True
            out.append(ch)
    return bytes(out)


SUITES: List[Tuple[str, str, str]] = [
    ("continuity.json", "continuity_check", "record"),
    ("guard.json", "guard", "answer"),
    ("faults.json", "continuity_check", "record"),
    ("issuer-faults.json", "continuity_check", "record"),
]


def load(root: Path) -> List[Vector]:
    vs: List[Vector] = []
    ops = root / "ops"
    for path in sorted(ops.rglob("*.json"), key=lambda p: str(p)):
        m = members(path.read_bytes())
        op = json.loads(m["op"])
        assert op == path.parent.name, path
        if "request_raw" in m:
            req = json.loads(m["request_raw"]).encode("utf-8", "surrogatepass")
        elif "request_b64" in m:
            req = base64.b64decode(json.loads(m["request_b64"]))
        else:
            req = compact(m["request"])
        name = "ops/" + str(path.relative_to(ops)).removesuffix(".json")
        vs.append(Vector(name, op, req, compact(m["response"])))
    for file, op, member in SUITES:
        path = root / file
        if not path.exists():
            continue
        suite = file.removesuffix(".json")
        for case in elements(members(path.read_bytes())["cases"]):
            cm = members(case)
            want = b'{"ok":true,"result":' + compact(cm[member]) + b"}"
            vs.append(Vector(f"{suite}/{json.loads(cm['name'])}", op, compact(cm["request"]), want))
    return vs


def answers_from_threads(call: Callable[[], bytes], threads: int, calls: int) -> Tuple[List[Set[bytes]], List[BaseException]]:
    """Runs `call` `calls` times on each of `threads` threads at once: the
    set of answers each thread got, in thread order, and what any raised
    (for the test to judge: every thread's set should be the one answer)."""
    got: List[Set[bytes]] = [set() for _ in range(threads)]
    errors: List[BaseException] = []

    def work(i: int) -> None:
        try:
            for _ in range(calls):
                got[i].add(call())
        except BaseException as e:  # noqa: BLE001 - reported to the caller
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return got, errors
