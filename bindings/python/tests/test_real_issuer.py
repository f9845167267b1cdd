"""The service path against crawlcheck-issuer itself (cmd/crawlcheck-issuer,
fresh keys, its real clock), not the test issuer: a verified baseline from
GET /api/v1/mcp/lock?url= of a real server, a receipt the guard accepts and
its replay, the service down → the local fallback, and a whole key rotation
the session follows itself: pinned keys, and the live directory it fetches
at every check. The CLI, Go and JS walk the same
(cmd/crawlcheck-issuer/hosts_test.go, bindings/js/test/realissuer.test.js)."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest
from servers import BUILD, _start, _stop
from test_preflight import observations, server

from crawlcheck.preflight import Issuer

pytestmark = pytest.mark.anyio

BIN = os.environ.get("CRAWLCHECK_ISSUER_SERVICE", str(BUILD / "crawlcheck-issuer"))
TOOLS = [
    {"name": "get_item", "description": "Reads an item.", "inputSchema": {"type": "object"}},
    {"name": "list_items", "description": "Lists the items.", "inputSchema": {"type": "object"}},
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextmanager
def issuer_service(keys: Path) -> Iterator[str]:
    p, url = _start([BIN, "serve", "--dir", str(keys), "--listen", "127.0.0.1:0", "--allow-http", "--allow-private", "127.0.0.1/32"])
    try:
        yield url
    finally:
        _stop(p)


# The operator's token (init_keys draws it): the server is on loopback, which
# only the operator's requests may have the issuer read (docs/issuer.md,
# Trust model).
TOKEN: Dict[str, str] = {}


def auth() -> Dict[str, str]:
    return {"Authorization": "Bearer " + TOKEN["operator"]}


def get(url: str) -> bytes:
    with urllib.request.urlopen(urllib.request.Request(url, headers=auth()), timeout=10) as r:
        assert r.status == 200
        body: bytes = r.read()
        return body


def post(url: str, req: Dict[str, Any], operator: bool = True) -> bytes:
    headers = {"Content-Type": "application/json", **(auth() if operator else {})}
    r = urllib.request.Request(url, data=json.dumps(req).encode(), method="POST", headers=headers)
    with urllib.request.urlopen(r, timeout=10) as resp:
        assert resp.status == 200
        body: bytes = resp.read()
        return body


def trust(rec: Dict[str, Any]) -> str:
    b = rec["baseline"]
    return str(b["trust"]) + (f"/{b['trust_reason']}" if b.get("trust_reason") else "")


async def check(
    srv: Any, tmp: Path, lock: bytes, directory: Optional[bytes], iss: str, pins: Optional[List[Dict[str, str]]] = None
) -> Dict[str, Any]:
    """One session's first record: judged by the operator's copy of the key
    directory, or (directory None) by the pins and the issuer's live
    directory, which the session fetches itself."""
    path = tmp / f"lock-{time.monotonic_ns()}.json"
    path.write_bytes(lock)
    issuer = Issuer(url=iss, pinned_keys=pins or (), timeout=3.0)
    async with srv.session(path, now=lambda: datetime.now(timezone.utc), key_directory=directory, issuer=issuer) as s:
        await s.initialize()
        assert s.record is not None
        rec: Dict[str, Any] = s.record
        return rec


def init_keys(tmp: Path) -> Path:
    keys = tmp / "keys"
    subprocess.run([BIN, "keys", "init", "--dir", str(keys), "--issuer", "issuer.test"], check=True, capture_output=True)
    out = subprocess.run([BIN, "operator-token", "--dir", str(keys)], check=True, capture_output=True).stdout
    TOKEN["operator"] = out.decode().strip()
    return keys


async def test_against_crawlcheck_issuer(tmp_path: Path) -> None:
    keys = init_keys(tmp_path)
    async with server("http", tmp_path, tools=TOOLS) as srv:
        with issuer_service(keys) as iss:
            lock = get(iss + "/api/v1/mcp/lock?url=" + urllib.parse.quote(srv.url, safe=""))
            directory = get(iss + "/api/v1/keys")
            rec = await check(srv, tmp_path, lock, directory, iss)
            assert rec["effect"] == "proceed" and trust(rec) == "verified", rec
            assert rec["issuer"]["policy_result"] == "proceed" and rec["issuer"]["evidence_level"] == "C", rec["issuer"]
            receipt = json.loads(get(iss + "/api/v1/documents/" + rec["issuer"]["receipt"]["sha256"]))
            assert json.loads(post(iss + "/api/v1/preflight/replay", {"receipt": receipt}))["reproducible"] is True
        down = await check(srv, tmp_path, lock, directory, iss)
        assert down["effect"] == "pause", down
        assert "service_unavailable" in observations(down) and "unchanged" in observations(down), observations(down)
        # Following the live directory, which cannot be fetched now: the pin
        # alone judges the baseline, and the record says why.
        pins = [{"kid": k["kid"], "public_key": k["public_key"]} for k in json.loads(directory)["keys"]]
        pinned_rec = await check(srv, tmp_path, lock, None, iss, pins)
        assert trust(pinned_rec) == "verified" and pinned_rec["effect"] == "pause", pinned_rec
        assert "service_unavailable" in observations(pinned_rec), observations(pinned_rec)


def pinned(keys: Path) -> List[Dict[str, str]]:
    """The operator's pins: every key of the issuer, as it learns of them out
    of band (keys directory on the issuer's machine)."""
    out = subprocess.run([BIN, "keys", "directory", "--dir", str(keys)], check=True, capture_output=True).stdout
    return [{"kid": k["kid"], "public_key": k["public_key"]} for k in json.loads(out)["keys"]]


async def test_rotation_the_session_follows_itself(tmp_path: Path) -> None:
    keys = init_keys(tmp_path)
    async with server("http", tmp_path, tools=TOOLS) as srv:
        with issuer_service(keys) as iss:
            lock = get(iss + "/api/v1/mcp/lock?url=" + urllib.parse.quote(srv.url, safe=""))
            pins = pinned(keys)

            # Each step: the session is handed no directory and fetches
            # GET /api/v1/keys itself; the baseline's trust and the
            # observation that judged it.
            async def step(what: str, lock_bytes: bytes, want: str, want_obs: str) -> None:
                rec = await check(srv, tmp_path, lock_bytes, None, iss, pins)
                obs = observations(rec)
                assert trust(rec) == want and want_obs in obs, (what, trust(rec), obs)
                assert want_obs == "baseline_untrusted" or "baseline_untrusted" not in obs, (what, obs)
                assert "service_unavailable" not in obs, (what, obs)

            first = pins[0]["kid"]
            await step("before", lock, "verified", "unchanged")
            subprocess.run([BIN, "keys", "rotate", "--dir", str(keys), "--overlap", "1h"], check=True, capture_output=True)
            pins = pinned(keys)
            time.sleep(1.1)  # the new key's not_before is to the second
            await step("overlap", lock, "verified", "unchanged")
            # Resigned during the overlap: a retired key vouches for nothing,
            # resign included (issue 37, F10).
            resigned = post(iss + "/api/v1/mcp/lock/resign", {"lock": lock.decode()})
            subprocess.run([BIN, "keys", "retire", "--dir", str(keys), "--kid", first], check=True, capture_output=True)
            await step("retired", lock, "untrusted/retired_key", "key_retired")
            await step("resigned during the overlap", resigned, "verified", "unchanged")
            with pytest.raises(urllib.error.HTTPError) as late:
                post(iss + "/api/v1/mcp/lock/resign", {"lock": lock.decode()}, operator=False)
            assert late.value.code == 422, "a lockfile of the retired key resigned after retire"
