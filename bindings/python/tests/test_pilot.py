"""The pilot upload (docs/preflight.md, "The pilot upload") against the real
test issuer (hosttest/issuer): with the issuer down the checks are unchanged
and every record waits in the log; once it is back, the background upload
sends them all, as internal/preflight/pilot_test.go runs it."""

from __future__ import annotations

import json
import os
import time
import urllib.request
from pathlib import Path

import pytest
from servers import issuer, pin, set_knobs
from test_preflight import server

from crawlcheck.preflight import Pilot, PilotError, pilot_ack_path, upload_pending

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def acked(log: Path) -> int:
    try:
        return int(Path(pilot_ack_path(str(log))).read_bytes().split(b" ")[0])
    except FileNotFoundError:
        return 0


async def test_issuer_down_then_back_drops_no_record(tmp_path: Path) -> None:
    with issuer() as iss:
        with urllib.request.urlopen(urllib.request.Request(iss + "/api/v1/pilot", data=b"", method="POST")) as resp:
            assert resp.status == 201
            p = json.loads(resp.read())
        pilot = Pilot(url=iss, id=p["pilot_id"], token=p["token"], min_backoff=0.02, max_backoff=0.1)
        set_knobs(iss, {"down": "503"})
        log = tmp_path / "records.jsonl"
        async with server("http", tmp_path) as srv:
            lock = pin(tmp_path, srv.endpoint)
            # pilot= as a mapping, as JS takes it (a Pilot works the same).
            as_dict = {"url": pilot.url, "id": pilot.id, "token": pilot.token, "min_backoff": 0.02, "max_backoff": 0.1}
            async with srv.session(lock, log_path=str(log), pilot=as_dict) as s:
                started = time.monotonic()
                await s.initialize()
                for _ in range(3):
                    await s.recheck()
                assert time.monotonic() - started < 5, "checks with the issuer down are not slowed"
                time.sleep(0.2)
                assert acked(log) == 0 and log.read_bytes().count(b"\n") == 4
                set_knobs(iss, {})
                size = len(log.read_bytes())
                deadline = time.monotonic() + 10
                while acked(log) != size:
                    assert time.monotonic() < deadline, f"the issuer is back, but {acked(log)} of {size} bytes are acknowledged"
                    time.sleep(0.02)
        # The issuer holds every record as written: sent whole, each is a duplicate.
        req = urllib.request.Request(iss + f"/api/v1/pilot/{pilot.id}/records", data=log.read_bytes(), method="POST")
        req.add_header("Authorization", "Bearer " + pilot.token)
        with urllib.request.urlopen(req) as resp:
            assert [r["status"] for r in json.loads(resp.read())["results"]] == ["duplicate"] * 4
        # Sent again with the ack file lost: every record a duplicate.
        os.remove(pilot_ack_path(str(log)))
        assert upload_pending(pilot, str(log)) == 4 and acked(log) == size


def test_batches_of_500_and_a_line_over_the_issuers_bound(tmp_path: Path) -> None:
    with issuer() as iss:
        with urllib.request.urlopen(urllib.request.Request(iss + "/api/v1/pilot", data=b"", method="POST")) as resp:
            p = json.loads(resp.read())
        pilot = Pilot(url=iss, id=p["pilot_id"], token=p["token"])
        log = tmp_path / "records.jsonl"
        log.write_bytes(b"{}\n" * 600)
        assert upload_pending(pilot, str(log)) == 600 and acked(log) == 1800
        with open(log, "ab") as f:
            f.write(b"x" * (9 << 20) + b"\n")
        with pytest.raises(PilotError, match="is over 8388608 bytes"):
            upload_pending(pilot, str(log))
        assert acked(log) == 1800
