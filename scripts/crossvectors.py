"""Every op vector of testdata/ops through a core library built for another
platform, run where this machine can run it (qemu-user for linux-arm64, wine
for windows-amd64): the answers must equal the vectors' and, byte for byte,
this machine's own library's (make wheels, scripts/wheels.sh; docs/release.md).

    python3 scripts/crossvectors.py NATIVE_HARNESS NATIVE_LIB -- CMD... LIB

Each side is hosttest/c/harness.c in `serve` mode: one process, request
frames on stdin, response frames on stdout (the framing is harness.c's).
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def frames(vectors: list[dict]) -> bytes:
    out = bytearray()
    for v in vectors:
        op = v["op"].encode()
        req = json.dumps(v["request"], separators=(",", ":"), ensure_ascii=False).encode()
        out += struct.pack("<I", len(op)) + op + struct.pack("<I", len(req)) + req + struct.pack("<I", 0xFFFFFFFF)
    return bytes(out)


def serve(cmd: list[str], data: bytes, n: int) -> list[bytes]:
    p = subprocess.run(cmd + ["serve"], input=data, capture_output=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"crossvectors: {' '.join(cmd)}: exit {p.returncode}: {p.stderr.decode(errors='replace')[:500]}")
    out, i = [], 0
    for _ in range(n):
        (k,) = struct.unpack_from("<I", p.stdout, i)
        out.append(p.stdout[i + 4 : i + 4 + k])
        i += 4 + k
    return out


def main() -> None:
    args = sys.argv[1:]
    sep = args.index("--")
    native, other = args[:sep], args[sep + 1 :]
    vectors = []
    for f in sorted((ROOT / "testdata" / "ops").glob("*/*.json")):
        v = json.loads(f.read_text(encoding="utf-8"))
        if isinstance(v, dict) and {"op", "request", "response"} <= v.keys():
            v["file"] = str(f.relative_to(ROOT))
            vectors.append(v)
    data = frames(vectors)
    mine, theirs = serve(native, data, len(vectors)), serve(other, data, len(vectors))
    bad = 0
    for v, a, b in zip(vectors, mine, theirs):
        if a != b or json.loads(b) != v["response"]:
            bad += 1
            print(f"crossvectors: {v['file']}: the other platform answers {b[:200]!r}", file=sys.stderr)
    version = next(json.loads(b) for v, b in zip(vectors, theirs) if v["op"] == "version")
    if version.get("result", {}).get("abi") != 2:
        bad += 1
        print(f"crossvectors: the other platform's library says {version}, not ABI 2", file=sys.stderr)
    if bad:
        sys.exit(f"crossvectors: {bad} of {len(vectors)} vectors differ")
    print(f"crossvectors: {len(vectors)} vectors, the same bytes as this machine's library; ABI 2")


if __name__ == "__main__":
    main()
