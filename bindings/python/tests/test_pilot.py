"""The pilot upload (docs/preflight.md, "The pilot upload") against the real
test issuer (hosttest/issuer): with the issuer down the checks are unchanged
and every record waits in the log; once it is back, the background upload
sends them all, as internal/preflight/pilot_test.go runs it."""

from __future__ import annotations

import http.server
import json
import os
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, List

import pytest
from servers import REPO, issuer, pin, set_knobs
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


def test_the_recorded_upload_leaves_the_ack_bytes_every_host_leaves(tmp_path: Path) -> None:
    """testdata/pilot-upload.json: the same log and the same issuer answers
    leave the same ack file in every host (Go and JS replay it too): the
    queue is the core's pilot_queue."""
    golden = json.loads((REPO / "testdata" / "pilot-upload.json").read_text("utf-8"))
    log = tmp_path / "records.jsonl"
    log.write_bytes(golden["log"].encode("utf-8"))
    for p in golden["passes"]:
        answers = list(p["answers"])
        problems: List[str] = []

        class Replay(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                sent = len(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                if not answers:
                    problems.append(f"a POST of {sent} bytes past the recorded answers")
                    self.send_response(418)
                    self.end_headers()
                    return
                a = answers.pop(0)
                if sent != a["sent_bytes"]:
                    problems.append(f"a POST of {sent} bytes where {a['sent_bytes']} were recorded")
                body = a["body"].encode("utf-8")
                self.send_response(a["status"])
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Replay)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        if p.get("ack_before") is not None:
            Path(pilot_ack_path(str(log))).write_bytes(p["ack_before"].encode("ascii"))
        pilot = Pilot(url=f"http://127.0.0.1:{srv.server_address[1]}", id="pilot-replay", token="t")
        try:
            n = upload_pending(pilot, str(log))
            assert p["error"] is None, p["name"]
            assert n == p["acknowledged"], p["name"]
        except PilotError as e:
            assert p["error"] is not None and str(e).endswith(p["error"]), (p["name"], str(e))
            assert e.chain_gap == p["chain_gap"], p["name"]
        finally:
            srv.shutdown()
            srv.server_close()
        assert problems == [] and answers == [], (p["name"], problems, len(answers))
        ack_path = Path(pilot_ack_path(str(log)))
        ack = ack_path.read_bytes().decode("ascii") if ack_path.exists() else None
        assert ack == p["ack_after"], p["name"]


def test_a_pilot_with_a_record_key_takes_only_signed_uploads(tmp_path: Path) -> None:
    """Issue 37, F7: the uploads its host signs with the record key are
    taken; without the key, none, and nothing of it is acknowledged."""
    with issuer() as iss:
        req = urllib.request.Request(iss + "/api/v1/pilot?record_key=true", data=b"", method="POST")
        with urllib.request.urlopen(req) as resp:
            p = json.loads(resp.read())
        assert p.get("record_key"), p
        log = tmp_path / "records.jsonl"
        log.write_bytes(b"{}\n" * 3)
        with pytest.raises(PilotError):
            upload_pending(Pilot(url=iss, id=p["pilot_id"], token=p["token"]), str(log))
        assert acked(log) == 0
        signed = Pilot(url=iss, id=p["pilot_id"], token=p["token"], record_key=p["record_key"])
        assert upload_pending(signed, str(log)) == 3 and acked(log) == 9
