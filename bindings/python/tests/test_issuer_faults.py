"""testdata/issuer-faults.json run live (docs/testdata.md): an issuer that
gives nothing to judge (nothing listening, hanging past its deadline,
answering 500, too much, or what is not JSON) gives exactly the golden
record through with_preflight: the same bytes as the Go preflight, the CLI
and the JS SDK, because the issuer member names the step and the fault and
the core words the detail, never an exception's text."""

from __future__ import annotations

import contextlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator, List

import pytest
from servers import issuer
from vectors import REPO_TESTDATA, compact, elements, members

from crawlcheck._core import call_result
from crawlcheck.preflight import Issuer, with_preflight
from crawlcheck.transport import stdio_client

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402

pytestmark = pytest.mark.anyio

_TEXT = (REPO_TESTDATA / "issuer-faults.json").read_bytes()
_GOLDEN = json.loads(_TEXT)
_RAW_CASES = elements(members(_TEXT)["cases"])
CASES = [(c, compact(members(raw)["record"])) for c, raw in zip(_GOLDEN["cases"], _RAW_CASES)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextlib.contextmanager
def issuer_of(case: Any) -> Iterator[str]:
    """The request's issuer (nothing listens there), or the test issuer with
    the case's knob."""
    if case["down"] is None:
        yield case["request"]["issuer"]["url"]
    else:
        with issuer("--down", case["down"]) as url:
            yield url


@pytest.mark.parametrize("case,golden", CASES, ids=[c["name"] for c, _ in CASES])
async def test_an_issuer_fault_gives_the_golden_record(case: Any, golden: bytes, tmp_path: Path) -> None:
    req = case["request"]
    lock = tmp_path / "lock.json"
    lock.write_text(json.dumps(req["lock"]))
    now = datetime.fromisoformat(req["now"].replace("Z", "+00:00"))
    command = _GOLDEN["server"]["command"]
    endpoint = StdioServerParameters(command=command[0], args=command[1:])
    raws: List[bytes] = []
    with issuer_of(case) as url:
        kd = req.get("key_directory")
        try:
            async with stdio_client(endpoint) as streams:
                async with with_preflight(
                    ClientSession(streams[0], streams[1]),
                    lock,
                    endpoint=endpoint,
                    mode=req["mode"],
                    now=lambda: now,
                    key_directory=json.dumps(kd).encode() if kd is not None else None,
                    issuer=Issuer(url=url, pinned_keys=req.get("pinned_keys", ()), timeout=case.get("deadline_ms", _GOLDEN["timeout_ms"]) / 1000),
                    on_record=lambda _, raw: raws.append(raw),
                ) as s:
                    await s.initialize()
        except BaseException:  # noqa: BLE001 - the refusal; the record is what counts
            pass
    assert raws, "no record"
    # The golden record when the issuer is the request's own; else the
    # core's record of the request naming the test issuer's URL.
    want = golden if url == req["issuer"]["url"] else call_result("continuity_check", {**req, "issuer": {**req["issuer"], "url": url}})
    assert raws[0] == want
