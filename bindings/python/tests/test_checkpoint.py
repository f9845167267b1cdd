"""The issuer's transparency log on the Python host (docs/log.md, What a host
does), as the Go preflight's TestSessionKeepsCheckpoint and the JS
test/checkpoint.test.js: the tlog-proof beside the lockfile is verified at
every check, the newest checkpoint kept beside the record log, a checkpoint
of another size reconciled by the issuer's consistency proof; a second test
issuer with the same keys is another history of the same log (a fork):
log_inconsistent, denied, and the first history stays kept."""

from __future__ import annotations

import base64
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Dict

import pytest
from servers import ACTIVE_KEY, KEYS, issuer
from test_preflight import observations, server

from crawlcheck.preflight import Issuer

pytestmark = pytest.mark.anyio

DIRECTORY = (KEYS / "test-directory.json").read_bytes()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def signed_lock(iss: str, endpoint: str, path: Path) -> Path:
    """The test issuer reads the server and signs its lockfile; written with its tlog-proof."""
    with urllib.request.urlopen(iss + "/api/v1/mcp/lock?url=" + urllib.parse.quote(endpoint, safe=""), timeout=10) as r:
        assert r.status == 200
        path.write_bytes(r.read())
        proof = base64.b64decode(r.headers["X-Crawlcheck-Log-Proof"])
    assert proof
    Path(str(path) + ".tlog-proof").write_bytes(proof)
    return path


async def check(srv: Any, lock: Path, log: Path, iss: str) -> Dict[str, Any]:
    async with srv.session(lock, log_path=str(log), key_directory=DIRECTORY, issuer=Issuer(url=iss, timeout=3.0)) as s:
        await s.initialize()
        assert s.record is not None
        rec: Dict[str, Any] = s.record
        return rec


async def test_the_checkpoint_is_kept_and_a_fork_denied(tmp_path: Path) -> None:
    log = tmp_path / "records.jsonl"
    kept = Path(str(log) + ".log-checkpoint")
    with issuer() as iss, issuer() as other:
        async with server("http", tmp_path) as srv:
            first = signed_lock(iss, srv.url, tmp_path / "first.lock.json")
            rec = await check(srv, first, log, iss)
            assert rec["effect"] == "proceed", observations(rec)
            assert rec["log"]["included"] is True and rec["log"]["consistent"] is None
            assert kept.read_text() == rec["log"]["keep"]
            first_size = rec["log"]["checkpoint"]["size"]

            second = signed_lock(iss, srv.url, tmp_path / "second.lock.json")
            rec = await check(srv, second, log, iss)
            assert rec["effect"] == "proceed", observations(rec)
            assert rec["log"]["consistent"] is True and rec["log"]["checkpoint"]["size"] > first_size
            newest = kept.read_text()
            assert newest == rec["log"]["keep"]

            rec = await check(srv, first, log, iss)
            assert rec["effect"] == "proceed" and rec["log"]["consistent"] is True
            assert rec["log"]["keep"] == newest, "the larger checkpoint stays kept"

            forked = signed_lock(other, srv.url, tmp_path / "forked.lock.json")
            rec = await check(srv, forked, log, other)
            assert rec["effect"] == "deny" and "log_inconsistent" in observations(rec)
            assert kept.read_text() == newest, "a fork does not replace the kept checkpoint"

            # The issuer down: the smaller tree is not shown a prefix of the
            # kept one. Denied all the same, the reason in the core's words.
            rec = await check(srv, first, log, "http://127.0.0.1:1")
            assert rec["effect"] == "deny" and "log_inconsistent" in observations(rec)
            assert rec["log"]["reason"] == "consistency_unavailable"
            assert kept.read_text() == newest


async def test_another_lockfiles_proof_is_log_proof_invalid(tmp_path: Path) -> None:
    log = tmp_path / "records.jsonl"
    with issuer() as iss:
        async with server("http", tmp_path) as srv:
            first = signed_lock(iss, srv.url, tmp_path / "first.lock.json")
            srv.mutate({"ops": [{"op": "edit", "name": "list_items", "set": {"description": "Lists the items, newest first."}}]})
            second = signed_lock(iss, srv.url, tmp_path / "second.lock.json")
            Path(str(second) + ".tlog-proof").write_bytes(Path(str(first) + ".tlog-proof").read_bytes())
            rec = await check(srv, second, log, iss)
            assert rec["effect"] == "deny" and "log_proof_invalid" in observations(rec)
            assert rec["log"]["reason"] == "root_mismatch"
            assert not Path(str(log) + ".log-checkpoint").exists()


async def test_pinned_keys_only(tmp_path: Path) -> None:
    """Without key_directory the log is judged by the pins and the directory
    fetched at each check (docs/log.md): verified; another lockfile's proof
    denied; the issuer down, service_unavailable and log_proof_invalid
    (no_log_origin), never silence."""

    async def pinned(srv: Any, lock: Path, iss: str) -> Dict[str, Any]:
        async with srv.session(lock, issuer=Issuer(url=iss, pinned_keys=[ACTIVE_KEY], timeout=3.0)) as s:
            await s.initialize()
            assert s.record is not None
            rec: Dict[str, Any] = s.record
            return rec

    with issuer() as iss:
        async with server("http", tmp_path) as srv:
            first = signed_lock(iss, srv.url, tmp_path / "first.lock.json")
            rec = await pinned(srv, first, iss)
            assert rec["effect"] == "proceed", observations(rec)
            assert rec["log"]["included"] is True

            rec = await pinned(srv, first, "http://127.0.0.1:1")
            assert rec["effect"] == "deny"
            assert {"service_unavailable", "log_proof_invalid"} <= set(observations(rec))
            assert rec["log"]["reason"] == "no_log_origin"

            srv.mutate({"ops": [{"op": "edit", "name": "list_items", "set": {"description": "Lists the items, newest first."}}]})
            second = signed_lock(iss, srv.url, tmp_path / "second.lock.json")
            Path(str(second) + ".tlog-proof").write_bytes(Path(str(first) + ".tlog-proof").read_bytes())
            rec = await pinned(srv, second, iss)
            assert rec["effect"] == "deny" and "log_proof_invalid" in observations(rec)
            assert rec["log"]["reason"] == "root_mismatch"
