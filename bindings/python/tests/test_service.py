"""The service path (docs/receipts.md, "Service path for SDKs") against the
real test issuer (hosttest/issuer, its clock stopped at the tests' now) and
the real scenario server, as internal/preflight/issuer_test.go runs it."""

from __future__ import annotations

import json
import os
import sys
import socket
from pathlib import Path
from typing import Any, Dict, List

import pytest
from servers import ACTIVE_KEY, KEYS, issuer, pin, rug_pull, set_knobs
from test_preflight import observations, server

from crawlcheck.preflight import ContinuityRefused, Issuer

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup

pytestmark = pytest.mark.anyio

DIRECTORY = (KEYS / "test-directory.json").read_bytes()
FALLBACK = b'{"kind":"crawlcheck-policy","v":1,"version":"t-fallback","effects":{"service_unavailable":"proceed"}}'


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def finding(rec: Dict[str, Any], name: str) -> Dict[str, Any]:
    for o in rec["observations"]:
        if o["observation"] == name:
            return o
    raise AssertionError(f"no {name} in {observations(rec)}")


def failed_reasons(f: Dict[str, Any]) -> List[str]:
    d = f.get("detail") or {}
    return sorted({r for q in d.get("failed", []) for r in ([q.get("reason")] if isinstance(q, dict) else [])} | set(d.get("reasons", []) or []))


def leaf(e: BaseException) -> BaseException:
    """The one exception inside task groups' exception groups."""
    while isinstance(e, BaseExceptionGroup) and len(e.exceptions) == 1:
        e = e.exceptions[0]
    return e


def service(url: str, timeout: float = 3.0, **kw: Any) -> Dict[str, Any]:
    kw.setdefault("key_directory", DIRECTORY)
    return dict(issuer=Issuer(url=url, timeout=timeout), **kw)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_agreeing_issuer_and_the_rug_pull_it_sees(transport: str, tmp_path: Path) -> None:
    with issuer() as iss:
        async with server(transport, tmp_path, mutations=[rug_pull()]) as srv:
            lock = pin(tmp_path, srv.endpoint)
            async with srv.session(lock, **service(iss)) as s:
                await s.initialize()
                rec = s.record
                assert rec is not None and rec["effect"] == "proceed" and observations(rec) == ["unchanged"], rec
                assert rec["issuer"]["url"] == iss and rec["issuer"]["receipt"]["kind"] == "crawlcheck-mcp-lock-check"
                assert s.consultation.asked and s.consultation.policy_result == "proceed"

                seen = s._tap.changes
                srv.mutate()
                from test_preflight import wait_for_change

                await wait_for_change(s, seen)
                with pytest.raises(ContinuityRefused) as refused:
                    await s.call_tool("get_item", {"id": "1"})
                # The issuer's lock check says changed: a reading, not a refusal.
                assert refused.value.record["effect"] == "pause_tool", refused.value.record
                assert observations(refused.value.record) == ["description_changed"]
                assert (await s.call_tool("list_items")).content[0].text == "called list_items"

                rec = await s.confirm("get_item")
                assert rec["effect"] == "proceed" and s.consultation.policy_result == "proceed"
                assert (await s.call_tool("get_item", {"id": "1"})).content[0].text == "called get_item"


def _refused_url() -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


@pytest.mark.parametrize(
    "knobs,fault,want",
    [
        (None, "connect_refused", "the issuer could not be reached (the connection was refused or could not be made)"),
        ({"down": "503"}, "http_status 503", "the issuer answered HTTP 503, not 200"),
        ({"down": "hang"}, "timeout", "no answer within 500 ms"),
        ({"down": "garbage"}, "response_malformed", "the answer is not a JSON object"),
    ],
)
async def test_issuer_unavailable_falls_back(knobs: Any, fault: str, want: str, tmp_path: Path) -> None:
    # The fault is the host's, the words the core's.
    with issuer() as live:
        url = live if knobs else _refused_url()
        if knobs:
            set_knobs(live, knobs)
        async with server("http", tmp_path) as srv:
            lock = pin(tmp_path, srv.endpoint)
            async with srv.session(lock, **service(url, timeout=0.5)) as s:
                await s.initialize()
                rec = s.record
                assert rec is not None and rec["effect"] == "pause"
                assert observations(rec) == ["unchanged", "service_unavailable"]
                detail = finding(rec, "service_unavailable")["detail"]
                assert detail["fallback"] == "local_comparison" and detail["error"] == want, detail
                assert s.consultation.unavailable == "lock_check: " + want

            # The operator accepts the local comparison alone: unchanged proceeds,
            # the record still says the issuer was not heard.
            async with srv.session(lock, policy=FALLBACK, **service(url, timeout=0.5)) as s:
                await s.initialize()
                rec = s.record
                assert rec is not None and rec["effect"] == "proceed"
                assert finding(rec, "service_unavailable")["effect"] == "proceed"

            # A rug pull with the issuer down: the changed tool is still withheld.
            srv.mutate(rug_pull())
            async with srv.session(lock, policy=FALLBACK, **service(url, timeout=0.5)) as s:
                await s.initialize()
                rec = s.record
                assert rec is not None and rec["effect"] == "pause_tool"
                assert rec["tools"] == {"get_item": "pause_tool", "list_items": "proceed"}


async def test_late_receipt_refreshes_then_pauses(tmp_path: Path) -> None:
    records: List[Dict[str, Any]] = []
    with issuer() as iss:
        set_knobs(iss, {"late": True})
        async with server("http", tmp_path) as srv:
            lock = pin(tmp_path, srv.endpoint)
            async with srv.session(lock, on_record=lambda r, _: records.append(r), **service(iss)) as s:
                await s.initialize()
    first, second = records
    assert first["effect"] == "refresh" and second["effect"] == "pause"
    assert second["prev_record_sha256"] == first["record_sha256"]
    a, b = finding(first, "evidence_expired"), finding(second, "evidence_expired")
    assert a["detail"]["receipt_sha256"] != b["detail"]["receipt_sha256"], "the refresh asks the issuer again"


@pytest.mark.parametrize(
    "knobs,observation",
    [
        ({"key": "retired"}, "key_retired"),
        ({"key": "unknown"}, "key_unknown"),
        ({"subject": "http://elsewhere.invalid/mcp"}, "server_identity_mismatch"),
    ],
)
async def test_lying_issuer_denies(knobs: Dict[str, Any], observation: str, tmp_path: Path) -> None:
    with issuer() as iss:
        set_knobs(iss, knobs)
        async with server("http", tmp_path) as srv:
            lock = pin(tmp_path, srv.endpoint)
            async with srv.session(lock, **service(iss)) as s:
                await s.initialize()
                rec = s.record
                assert rec is not None and rec["effect"] == "deny"
                assert observations(rec) == ["unchanged", observation]
                assert s.consultation.policy_result == "deny"
                with pytest.raises(ContinuityRefused):
                    await s.call_tool("list_items")


async def test_replayed_nonce_is_seen_through_the_state_file(tmp_path: Path) -> None:
    log = tmp_path / "records.jsonl"
    with issuer() as iss:
        set_knobs(iss, {"reuse_nonce": True})
        async with server("http", tmp_path) as srv:
            lock = pin(tmp_path, srv.endpoint)
            async with srv.session(lock, log_path=str(log), **service(iss)) as s:
                await s.initialize()
                assert s.record is not None and s.record["effect"] == "proceed"
            state = Path(str(log) + ".issuer-nonces.json")
            assert json.loads(state.read_text())["kind"] == "crawlcheck-issuer-nonces"
            assert (state.stat().st_mode & 0o777) == 0o600

            records: List[Dict[str, Any]] = []
            async with srv.session(lock, log_path=str(log), on_record=lambda r, _: records.append(r), **service(iss)) as s:
                await s.initialize()
            assert [r["effect"] for r in records] == ["refresh", "pause"]
            assert "nonce_seen" in json.dumps(finding(records[1], "evidence_expired")["detail"])

            # A state file that does not read is a configuration error.
            state.write_text("{}")
            with pytest.raises(BaseException) as bad:
                async with srv.session(lock, log_path=str(log), **service(iss)):
                    pass
            assert isinstance(leaf(bad.value), ValueError) and "move it aside" in str(leaf(bad.value))


async def test_pinned_keys_with_the_issuers_own_directory(tmp_path: Path) -> None:
    with issuer() as iss:
        async with server("http", tmp_path) as srv:
            lock = pin(tmp_path, srv.endpoint)
            async with srv.session(lock, issuer=Issuer(url=iss, pinned_keys=[ACTIVE_KEY], timeout=3.0)) as s:
                await s.initialize()
                assert s.record is not None and s.record["effect"] == "proceed", observations(s.record)
            with pytest.raises(BaseException) as bad:
                async with srv.session(lock, issuer=Issuer(url=iss)):
                    pass
            assert isinstance(leaf(bad.value), ValueError) and "no key" in str(leaf(bad.value))


_DIRECTORIES = {
    "unreadable": (b'{"kind":"crawlcheck-key-directory","v":1,"keys":"all of them"}', "the key directory it served is not one the core can read"),
    "not JSON": (b"<html>busy</html>", "the answer is not a JSON object"),
}


@pytest.mark.parametrize("directory", sorted(_DIRECTORIES))
@pytest.mark.parametrize("lock_check", [200, 503], ids=["guard reads it", "the check reads it"])
async def test_fetched_directory_the_core_cannot_read(tmp_path: Path, lock_check: int, directory: str) -> None:
    """A key directory fetched from the issuer that the core cannot read, or
    that is not JSON, is the issuer's fault: service_unavailable at the step
    key_directory, in the core's words; the local comparison stands. Whether
    guard reads it first (the lock check answered) or the continuity check
    does (the lock check failed after the fetch), the record is the same:
    the host judges neither."""
    served, error = _DIRECTORIES[directory]
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            keys = self.path == "/api/v1/keys"
            body = served if keys else b"{}"
            self.send_response(200 if keys else lock_check)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        async with server("http", tmp_path) as srv:
            lock = pin(tmp_path, srv.endpoint)
            async with srv.session(lock, issuer=Issuer(url=url, pinned_keys=[ACTIVE_KEY], timeout=3.0)) as s:
                await s.initialize()
                rec = s.record
                assert rec is not None and rec["effect"] == "pause", rec
                assert observations(rec) == ["unchanged", "service_unavailable"]
                assert finding(rec, "service_unavailable")["detail"] == {
                    "issuer": url,
                    "operation": "mcp.lock.check",
                    "step": "key_directory",
                    "error": error,
                    "fallback": "local_comparison",
                }
                assert s.consultation.unavailable == "key_directory: " + error
    finally:
        httpd.shutdown()


def test_no_keys_is_refused() -> None:
    from crawlcheck._issuer import IssuerClient, IssuerConfigError

    with pytest.raises(IssuerConfigError):
        IssuerClient(Issuer(url="http://127.0.0.1:1"), None, None)
    with pytest.raises(IssuerConfigError):
        IssuerClient(Issuer(url="ftp://x", pinned_keys=[ACTIVE_KEY]), None, None)
    assert os.sep  # keep imports honest


async def test_an_issuer_that_redirects_is_unavailable_and_nothing_is_sent_where_it_points(tmp_path: Path) -> None:
    """A redirect would re-send the lockfile and the pages wherever it points:
    it is not followed, and its status is the fault (HTTP 307), for the key
    directory's request and the lock check's alike."""
    import http.server
    import threading

    reached: List[str] = []

    class Elsewhere(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            reached.append(self.path)
            self.send_response(418)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = _answer

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Elsewhere)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        with issuer() as live:
            set_knobs(live, {"redirect": f"http://127.0.0.1:{httpd.server_address[1]}"})
            async with server("http", tmp_path) as srv:
                lock = pin(tmp_path, srv.endpoint)
                for kw in (service(live, timeout=3.0), dict(issuer=Issuer(url=live, pinned_keys=[ACTIVE_KEY], timeout=3.0))):
                    async with srv.session(lock, **kw) as s:
                        await s.initialize()
                        rec = s.record
                        assert rec is not None
                        detail = finding(rec, "service_unavailable")["detail"]
                        assert detail["error"] == "the issuer answered HTTP 307, a redirect, which is not followed", detail
    finally:
        httpd.shutdown()
    assert reached == [], "a request followed the redirect"
