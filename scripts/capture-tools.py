#!/usr/bin/env python3
"""Capture a real MCP server's tools/list over stdio, every page, as it sent it.

The scan's negatives (testdata/scan-real/, docs/scan.md) are tool lists of
released servers; this is how they were taken, so anyone can take them again:

    scripts/capture-tools.py NAME "npm @scope/pkg@1.2.3" -- command args...

It speaks plain JSON-RPC over the child's stdin/stdout (no SDK: nothing of a
client's own shapes the capture), sends initialize, notifications/initialized
and tools/list until no nextCursor, and prints the capture as JSON. Reads are
bounded (16 MiB a line, 60 s in all).
"""
import datetime
import json
import os
import select
import subprocess
import sys
import time

MAX_LINE = 16 << 20
DEADLINE = 60.0


def main() -> None:
    name, package, sep, *cmd = sys.argv[1:]
    if sep != "--" or not cmd:
        sys.exit(__doc__)
    env = dict(os.environ)
    child = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, env=env)
    end = time.monotonic() + DEADLINE
    buf = b""

    def send(msg: dict) -> None:
        assert child.stdin is not None
        child.stdin.write(json.dumps(msg).encode() + b"\n")
        child.stdin.flush()

    def answer(id_: int) -> dict:
        nonlocal buf
        assert child.stdout is not None
        fd = child.stdout.fileno()
        while True:
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if not line.strip():
                    continue
                try:
                    msg = json.loads(line)
                except ValueError:
                    # A server that logs to stdout: not a message; said on
                    # stderr, never part of the capture.
                    print(f"{name}: skipped a stdout line that is not JSON ({len(line)} bytes)", file=sys.stderr)
                    continue
                if not isinstance(msg, dict):
                    continue
                if msg.get("id") == id_ and "method" not in msg:
                    if "error" in msg:
                        sys.exit(f"{name}: {msg['error']}")
                    return msg["result"]
            left = end - time.monotonic()
            if left <= 0:
                sys.exit(f"{name}: no answer in {DEADLINE} s")
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    sys.exit(f"{name}: the server exited")
                buf += chunk
                if len(buf) > MAX_LINE:
                    sys.exit(f"{name}: a line over {MAX_LINE} bytes")

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "crawlcheck-capture", "version": "1"}}})
        init = answer(1)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools, cursor, id_ = [], None, 2
        while True:
            params = {"cursor": cursor} if cursor else {}
            send({"jsonrpc": "2.0", "id": id_, "method": "tools/list", "params": params})
            page = answer(id_)
            tools += page.get("tools", [])
            cursor, id_ = page.get("nextCursor"), id_ + 1
            if not cursor:
                break
    finally:
        child.kill()
        child.wait()
    out = {"server": name, "package": package, "serverInfo": init.get("serverInfo"),
           "captured": f"tools/list over stdio on {datetime.date.today()}, every page, as the server sent it",
           "tools": tools}
    if init.get("instructions"):
        # The server's instructions are text the agent reads as well: the
        # change classes are given for them too (scripts/scan-changes.py).
        out["instructions"] = init["instructions"]
    json.dump(out, sys.stdout, indent=2, ensure_ascii=False, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
