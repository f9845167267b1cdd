"""bench.py: the Python half of make bench-detail (hosttest/bench), stdlib only.

A continuity_check of one page against its lockfile through libcrawlcheck.so
by ctypes, the request built by the host each time, against a plain-Python
pass over the same bytes (json + hashlib, each tool hashed as
docs/hashing.md says). Contenders interleaved; prints medians in ms as JSON.

Usage: python3 bench.py LIB PAGE LOCK

The plain pass canonicalizes with json.dumps(sort_keys=True, separators,
ensure_ascii=False): RFC 8785 for these tools (ASCII keys, integers), not
in general (key order by code point, Python's float repr).
"""
import ctypes
import hashlib
import itertools
import json
import statistics
import struct
import sys
import time

NOW = "2026-11-30T12:00:00Z"
ENDPOINT = "https://bench.example/mcp"


def load(path):
    lib = ctypes.CDLL(path)
    lib.crawlcheck_abi_version.restype = ctypes.c_uint32
    if lib.crawlcheck_abi_version() != 2:
        raise SystemExit("library abi %d" % lib.crawlcheck_abi_version())
    u8p = ctypes.POINTER(ctypes.c_uint8)
    lib.crawlcheck_call.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
    lib.crawlcheck_call.restype = u8p
    lib.crawlcheck_call_raw.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
                                        ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
    lib.crawlcheck_call_raw.restype = u8p
    lib.crawlcheck_free.argtypes = [u8p]
    return lib


def response(lib, p, n):
    out = ctypes.string_at(p, n.value)
    lib.crawlcheck_free(p)
    if not out.startswith(b'{"ok":true'):
        raise SystemExit("continuity_check: %r" % out[:300])
    return out


def so_raw(lib, page, lock):
    """ABI 2: the documents travel as attachments, as read."""
    req = json.dumps({"now": NOW, "mode": "enforce", "lock": {"$raw": 1},
                      "observed": {"endpoint": ENDPOINT, "pages": [{"$raw": 0}]}}).encode()
    att = struct.pack("<I", len(page)) + page + struct.pack("<I", len(lock)) + lock
    n = ctypes.c_size_t()
    return response(lib, lib.crawlcheck_call_raw(b"continuity_check", req, len(req), att, len(att), ctypes.byref(n)), n)


def so_abi1(lib, page, lock):
    """ABI 1: the documents escaped into the JSON request."""
    req = json.dumps({"now": NOW, "mode": "enforce", "lock": lock.decode(),
                      "observed": {"endpoint": ENDPOINT, "pages": [page.decode()]}}, ensure_ascii=False).encode()
    n = ctypes.c_size_t()
    return response(lib, lib.crawlcheck_call(b"continuity_check", req, len(req), ctypes.byref(n)), n)


def canonical(v):
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def plain(page, lock):
    tools = json.loads(page)["tools"]
    locked = json.loads(lock)
    got = {}
    for t in tools:
        part = {"annotations": t.get("annotations"), "description": t.get("description"),
                "inputSchema": t.get("inputSchema"), "name": t["name"]}
        got[t["name"]] = hashlib.sha256(canonical(part)).hexdigest()
    list_hash = hashlib.sha256("\n".join(sorted(got.values())).encode()).hexdigest()
    changed = [e["name"] for e in locked["tools"] if got.get(e["name"]) != e["sha256"]]
    names = {e["name"] for e in locked["tools"]}
    changed += [n for n in got if n not in names]
    if list_hash != locked["tools_sha256"] or changed:
        raise SystemExit("plain-Python pass disagrees with the lockfile")
    return changed


def main():
    lib = load(sys.argv[1])
    page = open(sys.argv[2], "rb").read()
    lock = open(sys.argv[3], "rb").read()
    # The core keeps the last few pages it read, by their bytes (the walk
    # memo): the .so gets the page followed by other whitespace each call,
    # one of more than the core's window of sightings remembers, so that
    # every call reads it and keeps nothing (benchdata.Unseen,
    # benchdata.UnseenAttachments).
    unseen = itertools.cycle([page + b" " * i for i in range(17)])
    runs = {"plain": [], "so_raw": [], "so_abi1": []}
    fns = {"plain": lambda: plain(page, lock), "so_raw": lambda: so_raw(lib, next(unseen), lock),
           "so_abi1": lambda: so_abi1(lib, next(unseen), lock)}
    for f in fns.values():
        f()
    deadline = time.perf_counter() + 6
    while len(runs["plain"]) < 11 or (len(runs["plain"]) < 41 and time.perf_counter() < deadline):
        for k, f in fns.items():
            s = time.perf_counter()
            f()
            runs[k].append((time.perf_counter() - s) * 1000)
    print(json.dumps({k: statistics.median(v) for k, v in runs.items()} | {"samples": len(runs["plain"])}))


if __name__ == "__main__":
    main()
