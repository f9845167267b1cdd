"""The service path (docs/receipts.md, "Service path for SDKs"), as the Go
preflight does it (internal/preflight/issuer.go): ask the issuer for a signed lock
check of exactly the pages read, judge the receipt with the core's guard
against the deployment's own keys, policy and replay state, and hand guard's
observations to continuity_check as evidence. An issuer that cannot be asked
is the evidence service_unavailable; the local comparison stands."""

from __future__ import annotations

import base64
import http.client
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import anyio

from ._core import CoreError
from ._errors import CrawlcheckError
from ._files import read_regular_file
from ._limits import limits
from ._log import write_atomic
from .ops import escape_text, guard, replay_state, session_step



def nonce_state_path(log_path: str) -> str:
    """Where the replay state of a record log is kept: next to the log."""
    return log_path + ".issuer-nonces.json"


@dataclass
class Issuer:
    """Which issuer to ask, and which keys may vouch for its answers."""

    url: str
    #: ``[{"kid": ..., "public_key": ...}]``: used, without the operator's
    #: copy of the key directory, to keep the issuer's own directory to these,
    #: for its answers and for the baseline (docs/keys.md, Following the
    #: issuer's directory).
    pinned_keys: Sequence[Mapping[str, str]] = ()
    #: seconds for one consultation; 0: the core's limits.issuer_timeout_ms
    timeout: float = 0.0


@dataclass
class Consultation:
    """What asking the issuer gave one check."""

    asked: bool = False
    url: str = ""
    #: why the issuer gave no answer, for a person: the record's
    #: issuer.unavailable, the core's words (set by recorded, which a
    #: session does with each record it makes)
    unavailable: str = ""
    #: the step that failed and the fault (connect_refused, timeout,
    #: session_ended, http_status with status, answer_too_large; guard's
    #: response_malformed, keys_invalid), for continuity_check's issuer
    #: member: the core words the service_unavailable evidence from them
    step: str = ""
    fault: str = ""
    status: int = 0
    timeout_ms: int = 0
    guard: Optional[Dict[str, Any]] = None
    policy_result: str = ""
    evidence_level: str = ""
    evidence: List[Dict[str, Any]] = field(default_factory=list)
    #: the issuer keys the baseline is judged by without the operator's copy
    #: of the directory: the pins, and the directory as fetched at this
    #: consultation (None when not fetched, or the core could not read it).
    #: The one fetch serves guard and the baseline alike. Beside the
    #: operator's copy the core lets the pins judge no baseline.
    pins: List[Dict[str, str]] = field(default_factory=list)
    fetched: Optional[bytes] = None

    def use(self, req: Dict[str, Any]) -> None:
        """Hands the continuity check what the consultation gave it: guard's
        evidence, the issuer member, and the pinned keys with the live
        directory fetched (pinned_keys, fetched_key_directory), so the
        baseline follows the issuer's rotation as the receipts do."""
        if self.evidence:
            req["evidence"] = self.evidence
        trace = self.trace()
        if trace is not None:
            req["issuer"] = trace
        if self.pins:
            req["pinned_keys"] = self.pins
        if self.fetched is not None:
            req["fetched_key_directory"] = self.fetched

    def recorded(self, rec: Mapping[str, Any]) -> "Consultation":
        """The consultation as rec, the record made with it, tells it:
        unavailable in the record's words (its issuer.unavailable), never a
        host's own wording of the fault."""
        if self.asked:
            self.unavailable = str((rec.get("issuer") or {}).get("unavailable") or "")
        return self

    def trace(self) -> Optional[Dict[str, Any]]:
        """continuity_check's ``issuer`` member; None when not asked."""
        if not self.asked:
            return None
        t: Dict[str, Any] = {"url": self.url}
        if self.guard is not None:
            t["guard"] = self.guard
        if self.step:
            t["step"] = self.step
            t["fault"] = self.fault
            if self.status:
                t["status"] = self.status
            if self.timeout_ms:
                t["timeout_ms"] = self.timeout_ms
        return t


class IssuerConfigError(CrawlcheckError, ValueError):
    """The service path cannot be configured (URL, keys, replay state)."""


class _Unavailable(Exception):
    """A request to the issuer that gave nothing to judge: the fault the core
    words, never the HTTP client's error text."""

    def __init__(self, what: str, fault: str, status: int = 0) -> None:
        super().__init__(f"{what}: {fault}" + (f" {status}" if status else ""))
        self.fault = fault
        self.status = status


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are not followed: the lockfile and the pages would go
    wherever one points. The 3xx is the answer, and its status the fault."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_opener = urllib.request.build_opener(_NoRedirect)


class IssuerClient:
    """Asks one issuer and keeps the replay state between answers."""

    def __init__(self, cfg: Issuer, key_directory: Optional[bytes], state_path: Optional[str]) -> None:
        u = urllib.parse.urlsplit(cfg.url or "")
        if u.scheme not in ("http", "https") or not u.hostname:
            raise IssuerConfigError(f"issuer URL {cfg.url!r}: not an http(s) URL")
        if key_directory is None and not cfg.pinned_keys:
            raise IssuerConfigError(
                "issuer: no key to judge its answers by: give the operator's copy of its key "
                "directory, or pin its keys"
            )
        for k in cfg.pinned_keys:
            if not k.get("kid") or not k.get("public_key"):
                raise IssuerConfigError(f"issuer: pinned key {dict(k)!r}: a key id and a public key are both required")
        self.url = cfg.url.rstrip("/")
        self.pins = [{"kid": k["kid"], "public_key": k["public_key"]} for k in cfg.pinned_keys]
        self.timeout = cfg.timeout if cfg.timeout > 0 else limits()["issuer_timeout_ms"] / 1000
        #: the largest issuer answer read (the core's limits.issuer_answer_bytes)
        self.max_answer = limits()["issuer_answer_bytes"]
        self.directory = key_directory
        self.state_path = state_path
        self.seen: Any = []
        if state_path and os.path.exists(state_path):
            # The file's format is the core's (replay_state).
            try:
                # A document the core reads: bounded by its request cap.
                self.seen = replay_state(file=read_regular_file(state_path, limits()["request_bytes"]))["seen_nonces"]
            except (OSError, CoreError) as e:
                why = escape_text(text=e.message)["text"] if isinstance(e, CoreError) else str(e)
                raise IssuerConfigError(
                    f"issuer replay state {state_path}: {why}; move it aside (replays it recorded would go unseen)"
                ) from e

    async def consult(
        self,
        *,
        lock: bytes,
        observed: Mapping[str, Any],
        now: str,
        server_name: Optional[str],
        policy: Optional[bytes],
    ) -> Consultation:
        """Asks about the observation and judges the answer. An error (CoreError,
        OSError) means the question could not be put: no record then."""
        endpoint = observed.get("endpoint")
        if not endpoint:
            raise IssuerConfigError("issuer: the observation names no endpoint for a receipt to speak about")
        whole = _whole_list(observed)
        if whole is None:
            return Consultation(pins=self.pins)
        pages, reading = whole
        # Without the operator's copy, the issuer's own directory is fetched;
        # guard keeps of it only the pinned keys (fetched_key_directory).
        fetched: Optional[bytes] = None
        answer: bytes
        step = "key_directory"
        deadline = anyio.current_time() + self.timeout
        try:
            with anyio.fail_after(self.timeout):
                if self.directory is None:
                    fetched = await self._do("GET", "/api/v1/keys", None, deadline)
                step = "lock_check"
                body: Dict[str, Any] = {"lock": _text(lock), "pages": pages, "subject": endpoint}
                if server_name:
                    body["server_name"] = server_name
                answer = await self._do("POST", "/api/v1/mcp/lock/check", body, deadline)
        except TimeoutError:
            return self._unavailable(step, _Unavailable(step, "timeout"), fetched)
        except _Unavailable as e:
            return self._unavailable(step, e, fetched)

        g = guard(
            receipt=answer,
            expected_subject=str(endpoint),
            now=now,
            key_directory=self.directory,
            fetched_key_directory=fetched,
            pinned_keys=self.pins or None,
            seen_nonces=self.seen,
            lock=lock,
            policy=policy,
            observed_tools_sha256=reading,
        )
        fault = g.get("issuer_fault")
        if fault is not None:
            # Answers that are no answers (guard's issuer_fault): the
            # issuer's garbage, not the deployment's mistake. A directory
            # that is none judges no baseline either.
            step = fault["step"]
            return self._unavailable(step, _Unavailable("guard", fault["fault"]), fetched if step == "lock_check" else None)
        self._keep(g.get("seen_nonces"))
        return Consultation(
            asked=True,
            url=self.url,
            guard=dict(g),
            policy_result=str(g.get("policy_result") or ""),
            evidence_level=str(g.get("evidence_level") or ""),
            evidence=list(g.get("observations") or []),
            pins=self.pins,
            fetched=fetched,
        )

    async def consistency(self, start: int, end: int) -> Optional[bytes]:
        """The issuer's answer to GET /api/v1/log/consistency between trees of
        start and end entries, within its timeout, as it sent it (the core
        reads the proof out of it: consistency_answer); None when the issuer
        gives no answer."""
        q = urllib.parse.urlencode({"from": start, "to": end})
        try:
            return await self._do("GET", "/api/v1/log/consistency?" + q, None, anyio.current_time() + self.timeout)
        except _Unavailable:
            return None

    async def _do(self, method: str, path: str, body: Any, deadline: float) -> bytes:
        """One request within the consultation's deadline; the body of a 200
        answer as it came, else _Unavailable."""
        data = None if body is None else json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        left = max(0.05, deadline - anyio.current_time())

        what = f"{method} {path}"

        def send() -> "tuple[int, bytes]":
            # Classified from what the transport saw: the deadline, a
            # connection never made, or one closed before the answer.
            try:
                resp = _opener.open(req, timeout=left)
            except urllib.error.HTTPError as e:
                e.close()
                raise _Unavailable(what, "http_status", e.code) from None
            except urllib.error.URLError as e:
                timed_out = isinstance(e.reason, TimeoutError)
                raise _Unavailable(what, "timeout" if timed_out else "connect_refused") from None
            except TimeoutError:
                raise _Unavailable(what, "timeout") from None
            except (OSError, ValueError):
                raise _Unavailable(what, "session_ended") from None
            with resp:
                try:
                    return resp.status, resp.read(self.max_answer + 1)
                except TimeoutError:
                    raise _Unavailable(what, "timeout") from None
                except (OSError, http.client.HTTPException):
                    raise _Unavailable(what, "session_ended") from None

        status, answer = await anyio.to_thread.run_sync(send, abandon_on_cancel=True)
        if status != 200:
            raise _Unavailable(what, "http_status", status)
        if len(answer) > self.max_answer:
            raise _Unavailable(what, "answer_too_large")
        # Whether the body is a JSON object is the core's to say (guard's
        # issuer_fault, continuity_check's consistency_answer).
        return answer

    def _unavailable(self, step: str, f: _Unavailable, fetched: Optional[bytes] = None) -> Consultation:
        """An issuer that gave no answer to judge: the step that failed and
        the fault, which the core turns into the evidence service_unavailable
        in its own words (continuity_check's issuer step and fault); a
        timeout names the consultation's deadline."""
        return Consultation(
            asked=True,
            url=self.url,
            step=step,
            fault=f.fault,
            status=f.status,
            timeout_ms=int(round(self.timeout * 1000)) if f.fault == "timeout" else 0,
            pins=self.pins,
            fetched=fetched,
        )

    def _keep(self, seen: Any) -> None:
        if not isinstance(seen, list):
            raise IssuerConfigError("issuer: guard's answer holds no seen_nonces")
        changed = seen != self.seen
        self.seen = seen
        if self.state_path and changed:
            write_atomic(self.state_path, replay_state(seen_nonces=seen)["file"].encode("utf-8"), 0o600)


def _text(b: Union[bytes, str]) -> str:
    return b if isinstance(b, str) else b.decode("utf-8", "replace")


def _whole_list(observed: Mapping[str, Any]) -> Optional[tuple]:  # type: ignore[type-arg]
    """The pages as the issuer takes them and the host's own reading, or None
    when there is no whole list to ask about: the session engine's answer
    (issuer), pages the core cannot take asking nothing either."""
    try:
        actions = session_step(event={"type": "issuer", "observed": observed})["actions"]
    except CoreError:
        return None
    if not actions:
        return None
    pages = observed.get("pages") or []
    wire: List[Any] = []
    for p in pages:
        if isinstance(p, (bytes, bytearray)):
            try:
                wire.append(bytes(p).decode("utf-8"))
            except UnicodeDecodeError:
                wire.append({"base64": base64.b64encode(bytes(p)).decode("ascii")})
        else:
            wire.append(p)
    return wire, actions[0]["reading"]
