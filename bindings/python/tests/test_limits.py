"""Bounded answers (issue 10, items 3 and 4): a frame the server sends past
max_answer_bytes is not taken, the session is broken there, and the check
still leaves a record (server_unavailable, effect pause) worded by the core
as for the Go preflight: the record equals `crawlcheck check`'s."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import anyio
import pytest
from servers import CLI, NOW_S, TOOLS, pin
from test_preflight import server

from crawlcheck.preflight import ContinuityRefused

pytestmark = pytest.mark.anyio

LIMIT = 64 << 10
DETAIL = f"the server sent an answer of more than {LIMIT} bytes: not read further"
#: One tools/list page of about 200 KiB: over LIMIT, under 1 MiB.
BIG: List[Dict[str, Any]] = [{"name": "big", "description": "a" * (200 << 10), "inputSchema": {"type": "object"}}]
CASES = {"stdio": ("stdio", {}), "http": ("http", {}), "http event stream": ("http", {"http_sse": True})}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def unavailable(rec: Dict[str, Any]) -> List[str]:
    return [o["detail"]["detail"] for o in rec["observations"] if o["observation"] == "server_unavailable"]


@pytest.mark.parametrize("case", list(CASES))
async def test_an_answer_over_the_limit_is_recorded_and_breaks_the_session(case: str, tmp_path: Path) -> None:
    transport, knobs = CASES[case]
    records: List[Dict[str, Any]] = []
    async with server(transport, tmp_path, tools=BIG, **knobs) as srv:
        lock = pin(tmp_path, srv.endpoint, TOOLS)
        async with srv.session(lock, max_answer_bytes=LIMIT, on_record=lambda r, _: records.append(r)) as s:
            await s.initialize()
            rec = s.record
            assert rec is not None and len(records) == 1
            assert rec["observed"]["failure"] == "server_unavailable", rec
            assert unavailable(rec) == [DETAIL]
            assert rec["effect"] == "pause"
            with pytest.raises(ContinuityRefused):
                await s.call_tool("get_item", {"id": "1"})
            # The session is broken: nothing more is read from the server.
            with pytest.raises(Exception):  # noqa: B017 - whichever way the SDK says so
                with anyio.fail_after(2):
                    await s.session.send_ping()


@pytest.mark.parametrize("case", list(CASES))
async def test_the_same_answer_under_the_limit_is_read(case: str, tmp_path: Path) -> None:
    transport, knobs = CASES[case]
    async with server(transport, tmp_path, tools=BIG, **knobs) as srv:
        async with srv.session(pin(tmp_path, srv.endpoint, BIG), max_answer_bytes=1 << 20) as s:
            await s.initialize()
            assert s.record is not None and s.record["effect"] == "proceed", s.record


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_record_equals_crawlcheck_checks(transport: str, tmp_path: Path) -> None:
    async with server(transport, tmp_path, handshake="initialize", tools=BIG) as srv:
        lock = pin(tmp_path, srv.endpoint, TOOLS)
        py: List[bytes] = []
        async with srv.session(lock, max_answer_bytes=LIMIT, on_record=lambda _, raw: py.append(raw)) as s:
            await s.initialize()
        source = ["--url", srv.url] if transport == "http" else ["--server", shlex.join([srv.params.command, *srv.params.args])]
        out = subprocess.run([CLI, "check", "--lock", str(lock), *source, "--max-input", str(LIMIT), "--now", NOW_S, "--json"], capture_output=True, timeout=60)
        assert out.returncode == 1, out.stderr.decode()
        assert py == out.stdout.splitlines()
