"""with_preflight / McpPreflight: the continuity check in front of an official
``mcp`` ClientSession (mcp 1.x ≥ 1.18 and 2.x).

The preflight observes what the server offers, hands the facts to the
core's continuity_check and follows the record; it never decides. It is the
Python counterpart of the Go preflight (bindings/go/preflight, docs/preflight.md):
the same requests to the core, so the same server state at the same clock
gives the same record bytes.

The capture. The SDK's typed ``ListToolsResult`` drops fields it does not
know (2.x) and refuses lists it cannot hold, so the pages are taken below
it: the preflight puts a tap on the session's read and write streams before
the session starts. The write tap learns the ids of ``initialize``,
``server/discover`` and ``tools/list`` requests; the read tap takes each
answer's ``result`` member as the transport decoded it, and a frame the
transport could not decode (the SDK hands the session the parse error, with
the line it could not read) as that page's bytes. A page is the result
re-encoded compactly with its key order, so every hash equals the one of
the bytes on the wire; what a decoded JSON value cannot carry (a repeated
key, number spelling) is lost before the session sees it, in every Python
client (docs/decisions.md) — unless the session runs on a transport of
crawlcheck.transport: the tap then takes each frame's bytes from the wire,
bounded there before anything decodes them, and routes them as the Go
preflight's recorder does (``_Tap.received_raw``).

The parts: _capture.py (the taps), _observation.py (what was seen), _check.py
(one check), _entry.py (lock forms, errors), _features.py (prompts, resources
and UI templates); this module runs the session.
"""

from __future__ import annotations

import json
import os
from collections import deque
from datetime import datetime, timezone
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import anyio

from ._core import CoreError
from ._checkpoint import Checkpoints, checkpoint_path, proof_path, read_proof
from ._check import check, logger
from ._confirm import approved_lock
from ._features import FeaturesMixin, _no_cursor, observe_features
from ._features import ItemRefused as ItemRefused
from ._capture import _MAX_CALLS, _Tap, _attach_tap, _dump, _install_tap
from ._entry import ContinuityRefused as ContinuityRefused
from ._entry import Lock as Lock
from ._entry import PreflightError as PreflightError
from ._entry import _HandshakeRefused, _lock_source
from ._entry import endpoint_of as endpoint_of
from ._entry import format_time as format_time
from ._entry import show as show
from ._errors import CrawlcheckError
from ._issuer import Consultation, Issuer, IssuerClient, nonce_state_path
from ._files import read_regular_file
from ._limits import limits
from ._log import RecordLog, write_atomic
from ._pilot import Pilot as Pilot, PilotError as PilotError, PilotUploader, pilot_ack_path as pilot_ack_path, upload_pending as upload_pending
from ._observation import FAILURE_TOO_LARGE as FAILURE_TOO_LARGE, FAULT_PAGES_OVER_CAP as FAULT_PAGES_OVER_CAP, FAULT_TIMEOUT as FAULT_TIMEOUT
from ._observation import _Walk
from ._observation import FAULT_FORBIDDEN, FAULT_LIST_CACHED, FAULT_NOT_CAPTURED, FAULT_UNAUTHORIZED, Observation as Observation, _sdk_tool
from .ops import escape_text, refusal, session_step, verify_lock
from .transport import is_transport as _is_transport
from .transport import unwrapped as _unwrapped

#: Background re-checks on notifications/tools/list_changed are paced by the
#: core's session engine (session_step; the constants say its numbers):
#: the first starts at once, one more no sooner than RECHECK_MIN seconds
#: after the one before, with every notification in between coalesced into
#: it; one that starts as soon as it may (the server announced a change
#: again within the wait) doubles the wait up to RECHECK_MAX, and a quiet
#: spell resets it. A server announcing a change after every listing gets
#: about 7 records in its first two minutes and one a minute after that
#: (docs/decisions.md). A call never waits out the hold-off: it re-checks at
#: once when a change was announced since the record it would be judged by.
RECHECK_MIN = 1.0
RECHECK_MAX = 60.0
#: The records a preflight keeps in memory (``records``), newest last; the
#: log holds them all. A long session, or a server announcing changes without
#: end, cannot grow the process with them.
MAX_KEPT_RECORDS = 100

#: Effects, weakest to strongest, as the core's rule table orders them. They
#: name what a record says; what a session does after a check is the core's
#: handoff, never a ranking of these.
PROCEED, PROCEED_RECORDED, REFRESH, PAUSE_TOOL, PAUSE, DENY = (
    "proceed",
    "proceed_recorded",
    "refresh",
    "pause_tool",
    "pause",
    "deny",
)


def _at_ms() -> int:
    """The session engine's clock: anyio's monotonic time in milliseconds."""
    return round(anyio.current_time() * 1000)


class McpPreflight(FeaturesMixin):
    """An mcp ClientSession whose tools pass a continuity check before the
    model sees them (docs/preflight.md has the Go twin).

    The check runs after the handshake (``initialize``/``discover`` through
    this object) and before the first ``call_tool``. A tool whose effect is
    pause_tool or stronger is left out of ``list_tools`` and refused by
    ``call_tool`` with ContinuityRefused; a session effect of pause or deny
    refuses every call; refresh checks once more. A
    ``notifications/tools/list_changed`` starts a check in the background,
    and calls wait for it. ``list_tools`` answers from the pages the current record was made
    from: the tools handed to the model are the tools that were compared.
    Prompts, resources, resource templates and ui:// templates are handed
    over the same way (``list_prompts``, ``get_prompt``, ``list_resources``,
    ``list_resource_templates``, ``read_resource``: _features.py).
    Every other attribute is the session's.
    """

    #: the handoff of the newest record by its record_sha256, set by each
    #: check (_check.py); _handoff reads it
    _handoffs: Dict[str, Dict[str, Any]]

    def __init__(
        self,
        session: Any,
        lock: Lock,
        *,
        endpoint: Union[str, Sequence[str], Any, None] = None,
        mode: Optional[str] = None,
        policy: Union[bytes, str, None] = None,
        expected_policy_version: Optional[str] = None,
        operator_keys: Optional[Sequence[str]] = None,
        key_directory: Union[bytes, str, None] = None,
        require_signed_baseline: Optional[bool] = None,
        server_name: Optional[str] = None,
        issuer: Union[Issuer, str, None] = None,
        on_record: Optional[Callable[[Dict[str, Any], bytes], None]] = None,
        log_path: Optional[str] = None,
        page_cap: int = 0,
        timeout: float = 0.0,
        signing_key: Optional[str] = None,
        now: Optional[Callable[[], datetime]] = None,
        max_answer_bytes: int = 0,
        pilot: Union[Pilot, Mapping[str, Any], None] = None,
    ) -> None:
        #: the transport to start on entering (with_preflight(stdio_client(params), …)),
        #: and then the ClientSession made on its streams; else the session given
        self._transport: Any = session if _is_transport(session) else None
        self.session: Any = None if self._transport is not None else session
        #: the lockfile's path; None when it was given as bytes or a value
        #: (confirm then cannot rewrite it)
        self.lock_path, self._lock_given = _lock_source(lock)
        self.endpoint = endpoint_of(endpoint) if endpoint is not None else ""
        self.mode = mode
        self.policy = policy.encode("utf-8") if isinstance(policy, str) else policy
        self.expected_policy_version = expected_policy_version
        self.operator_keys = list(operator_keys) if operator_keys else None
        self.key_directory = key_directory.encode("utf-8") if isinstance(key_directory, str) else key_directory
        self.require_signed_baseline = require_signed_baseline
        self.server_name = server_name
        self.on_record = on_record
        self.log_path = log_path
        # pilot={"url": …, "id": …, "token": …} as JS takes it, or a Pilot.
        self.pilot = Pilot(**pilot) if isinstance(pilot, Mapping) else pilot
        self.page_cap: Optional[int] = page_cap if page_cap > 0 else None  # None: the core's default
        # The bounds left unset (0) are the core's (version's limits), as in
        # every host.
        #: one check's deadline in seconds
        self.timeout = timeout if timeout > 0 else limits()["check_timeout_ms"] / 1000
        #: the largest frame taken from the server
        self.max_answer_bytes = max_answer_bytes if max_answer_bytes > 0 else limits()["answer_bytes"]
        self.signing_key = signing_key
        self.now = now or (lambda: datetime.now(timezone.utc))
        self._issuer_cfg = Issuer(url=issuer) if isinstance(issuer, str) else issuer

        self._tap = _Tap(self.max_answer_bytes)
        self._tap.admit = self._admit
        self._tap.admit_item = self._admit_item
        self._check_lock = anyio.Lock()
        self._lock_bytes = b""
        self._log: Optional[RecordLog] = None
        self._uploader: Optional[PilotUploader] = None  # the pilot upload (_pilot.py)
        self._issuer: Optional[IssuerClient] = None
        self._proof = ""  # the lockfile's tlog-proof
        self._kept: Optional[Checkpoints] = None  # the log checkpoint kept, with a proof
        self._prev = ""
        self._obs = Observation()
        self._rec: Optional[Dict[str, Any]] = None
        self._raw = b""
        self._cons = Consultation()
        self._seen = 0
        self._err: Optional[BaseException] = None
        self._connected = False
        self._entered = False
        self._records: "deque[Dict[str, Any]]" = deque(maxlen=MAX_KEPT_RECORDS)
        # The core's session engine: its state, kept as the text it answered
        # (session_step), and the newest handoff (its hand action).
        self._engine: Optional[str] = None
        self._handed: Dict[str, Any] = {}
        self._untapped_handshake = False
        # The SDK's typed handshake result: the version it settled on, for
        # an SDK (mcp 1.x) that keeps it nowhere else.
        self._sdk_result: Any = None
        # The lockfile is read and verified here, before any session or
        # transport exists: a missing or bad one is PreflightError itself,
        # never an error inside a transport's task group.
        self._read_lock()

    # -- lifecycle

    async def __aenter__(self) -> "McpPreflight":
        """Opens the log, starts the transport when one was given (the
        lockfile was read and judged before: nothing starts for a bad one),
        taps the session's streams and enters the session. An error of a
        transport's or the session's task group that wraps one exception is
        raised as that exception."""
        if self._transport is None:
            return await self._enter()
        streams = await _unwrapped(self._transport.__aenter__())
        try:
            from mcp import ClientSession

            self.session = ClientSession(streams[0], streams[1])
            return await self._enter()
        except BaseException as e:
            await _unwrapped(self._transport.__aexit__(type(e), e, e.__traceback__))
            raise

    async def _enter(self) -> "McpPreflight":
        self._load()
        _install_tap(self.session, self._tap)
        try:
            await _unwrapped(self.session.__aenter__())
        except BaseException:
            self._close_log()
            raise
        self._entered = True
        # The record follows the server even when no call is made: a
        # list_changed starts a re-check in the background (the Go
        # preflight's watcher), run in the session's own task group so that
        # it ends with the session; calls wait for it on the check lock.
        # Without that group (another SDK), the next call re-checks first.
        group = getattr(self.session, "_task_group", None)
        if group is not None and hasattr(group, "start_soon"):
            group.start_soon(self._watch)
        return self

    async def _watch(self) -> None:
        while True:
            await self._tap.wait()
            if not self._connected:
                continue
            # The engine paces it: a re-check now, or a wake later (the
            # notifications that arrive while this waits are coalesced
            # into the one re-check, which the record says).
            try:
                actions = self._step({"type": "list_changed", "at_ms": _at_ms(), "seen": self._tap.changes})
                for a in actions:
                    if a["action"] == "wake":
                        await anyio.sleep(max(0.0, (a["at_ms"] - _at_ms()) / 1000))
                        actions = self._step({"type": "timer", "at_ms": _at_ms()})
            except CoreError as e:
                self._err = e
                continue
            if not any(a["action"] == "recheck" for a in actions):
                continue
            async with self._check_lock:
                try:
                    # A call may have re-checked since: the engine says
                    # whether the record covers the notifications now.
                    await self._up_to_date()
                except Exception as e:  # noqa: BLE001 - never into the session's group
                    # Every call is refused with it until a check succeeds.
                    self._err = e

    async def attach(self, initialize_result: Any = None, *, initialized: bool = True) -> None:
        """For a session that is already running (the framework adapters):
        loads the configuration and taps the streams in place. With
        ``initialized`` the handshake was made and its facts are taken from
        its typed result (``recheck`` then makes the check); without, call
        ``initialize`` next, which captures the handshake as it crosses."""
        self._load()
        _attach_tap(self.session, self._tap)
        if not initialized:
            # Nothing may be sent before the handshake (a stateful
            # streamable HTTP server answers 400 to a request without its
            # session id). The receive the session's loop may be waiting in
            # from before the tap takes the handshake's answer, so
            # ``_handshake`` takes its facts from the typed result.
            self._untapped_handshake = True
            return
        # The session's loop may be waiting in a receive from before the tap:
        # a ping's answer is the one message that wait takes. Any answer will
        # do, an error too (a stateless 2026-07-28 server has no ping).
        try:
            with anyio.fail_after(self.timeout):
                await self.session.send_ping()
        except Exception:  # noqa: BLE001, S110 - only the message's arrival matters
            pass
        how = "initialize"
        if initialize_result is None:
            initialize_result = getattr(self.session, "initialize_result", None)
        if initialize_result is None:
            how, initialize_result = "server/discover", getattr(self.session, "discover_result", None)
        self._typed_handshake(how, initialize_result)
        self._sdk_result = initialize_result
        self._connected = True

    def _typed_handshake(self, method: str, result: Any) -> None:
        """The handshake's facts from the SDK's typed result, where the tap
        could not see its answer."""
        if result is not None and hasattr(result, "model_dump"):
            self._tap.handshake = (method, result.model_dump(by_alias=True, mode="json", exclude_none=True))

    def _read_lock(self) -> None:
        """Reads the lockfile (a regular file of at most 64 MiB) or takes the
        bytes given, and verifies it: PreflightError when it cannot be had."""
        if self.lock_path is None:
            self._lock_bytes = self._lock_given or b""
        else:
            try:
                # A document the core reads: bounded by its request cap.
                self._lock_bytes = read_regular_file(self.lock_path, limits()["request_bytes"])
            except OSError as e:
                raise PreflightError(f"crawlcheck: reading the lockfile: {e}") from e
        where = f"lockfile {self.lock_path}" if self.lock_path is not None else "lockfile"
        try:
            self.baseline = verify_lock(
                lock=self._lock_bytes,
                now=format_time(self.now()),
                key_directory=self.key_directory,
                operator_keys=self.operator_keys,
                server_name=self.server_name,
            )
        except CoreError as e:
            raise PreflightError(f"crawlcheck: {where}: {e}") from e

    def _load(self) -> None:
        """Opens what a session needs beside the lockfile (read already):
        the issuer, the proof and kept checkpoint, the record log, the pilot."""
        if self._issuer_cfg is not None:
            state = nonce_state_path(self.log_path) if self.log_path else None
            self._issuer = IssuerClient(self._issuer_cfg, self.key_directory, state)
        # The issuer's transparency log (docs/log.md): a tlog-proof beside the
        # lockfile is verified at every check, against the checkpoint kept
        # beside the record log (in memory without log_path).
        try:
            self._proof = read_proof(self.lock_path) if self.lock_path is not None else ""
            if self._proof:
                # Judged by the baseline's keys: key_directory, or the pins
                # with the directory fetched at each check (docs/log.md).
                if self.key_directory is None and not (self._issuer is not None and self._issuer.pins):
                    raise PreflightError(
                        f"crawlcheck: {proof_path(str(self.lock_path))} is verified against the issuer's log "
                        "by its keys: give key_directory or Issuer(url, pinned_keys=...)"
                    )
                self._kept = Checkpoints(checkpoint_path(self.log_path) if self.log_path else None)
        except OSError as e:
            raise PreflightError(f"crawlcheck: {e}") from e
        if self.log_path:
            self._log = RecordLog(self.log_path)
            self._prev = self._log.head
        if self.pilot is not None:
            if not self.log_path:
                raise PreflightError("crawlcheck: pilot uploads the record log: give log_path")
            self._uploader = PilotUploader(self.pilot, self.log_path)

    async def __aexit__(self, *exc: Any) -> Any:
        """Leaves the session (and stops the transport it started). What the
        body raised, which anyio's task groups wrap in an exception group,
        comes out as itself: ``except crawlcheck.CrawlcheckError`` catches a
        refusal."""
        try:
            try:
                suppress = await _unwrapped(self.session.__aexit__(*exc))
            finally:
                self._entered = False
                self._close_log()
        except BaseException as e:
            if self._transport is not None:
                await _unwrapped(self._transport.__aexit__(type(e), e, e.__traceback__))
            raise
        if self._transport is not None:
            again = (None, None, None) if suppress else exc
            if await _unwrapped(self._transport.__aexit__(*again)):
                return True
        return suppress

    def close(self) -> None:
        """Closes the log (an attached preflight; entered ones close on exit)."""
        self._close_log()

    def _close_log(self) -> None:
        if self._uploader is not None:
            self._uploader.close()
            self._uploader = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)

    # -- the handshake and the check

    async def initialize(self) -> Any:
        """The session's ``initialize``, then the check. A server that cannot
        be connected is ContinuityRefused carrying the record."""
        return await self._handshake("initialize")

    async def discover(self) -> Any:
        """The session's ``discover`` (protocol 2026-07-28), then the check."""
        return await self._handshake("discover")

    async def _sdk_handshake(self, how: str) -> Any:
        """The session's own handshake; _HandshakeRefused as soon as the SDK
        could not decode the answer (it would wait for another until the
        timeout)."""
        tap = self._tap
        state: Dict[str, Any] = {}

        async def run() -> None:
            try:
                state["result"] = await getattr(self.session, how)()
            except Exception as e:  # noqa: BLE001 - raised below, as the SDK raised it
                state["err"] = e
            finally:
                tap._notify()

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            while "result" not in state and "err" not in state:
                if tap.handshake_refused:
                    # Raised below, outside the group (which would wrap it).
                    state["err"] = _HandshakeRefused("the SDK could not decode the server's handshake answer")
                    tg.cancel_scope.cancel()
                    break
                await tap.wait()
        if "err" in state:
            raise state["err"]
        return state["result"]

    async def _handshake(self, how: str) -> Any:
        async with self._check_lock:
            result = None
            fault = ("", "")
            obs = Observation(endpoint=self.endpoint, timeout_ms=self._timeout_ms())
            try:
                with anyio.fail_after(self.timeout):
                    result = await self._sdk_handshake(how)
                self._sdk_result = result
                if self._untapped_handshake and self._tap.handshake is None:
                    self._typed_handshake("initialize" if how == "initialize" else "server/discover", result)
                self._connected = True
            except TimeoutError:
                fault = self._tap.fault(timed_out=True)
            except Exception:  # noqa: BLE001 - whatever the SDK raised, the server was not connected
                fault = self._tap.fault()
            except anyio.get_cancelled_exc_class():
                # The transport's task group failed (a refused connection, a
                # server that exited) and cancels everything inside it, this
                # check too: the record is still made, shielded, so the log
                # and on_record show that nothing was compared. (The
                # timeout's own cancellation is TimeoutError above.)
                with anyio.CancelScope(shield=True):
                    self._handshake_failed(obs, self._tap.fault())
                    await self._settle(obs)
                raise
            if self._connected:
                await self._recheck()
            else:
                self._handshake_failed(obs, fault)
                await self._settle(obs)
            rec = self._current()
            if not self._connected:
                raise ContinuityRefused(rec[0], rec[1], effect=str(rec[0].get("effect", "")))
            return self._as_checked(result)

    def _as_checked(self, result: Any) -> Any:
        """The SDK's handshake result with its instructions the core's
        (the handoff's ``instructions``): the SDK's own copy is its parse of
        the answer (a case variant or a repeated key decides it differently
        from the bytes the core covered), and a changed or uncovered text is
        withheld (None) as the handoff says."""
        if result is None or not hasattr(result, "instructions"):
            return result
        return result.model_copy(update={"instructions": self.instructions})

    @property
    def instructions(self) -> Optional[str]:
        """The server's instructions the model may be given: the newest
        record's handoff (``instructions``, the bytes the core covered), None
        when it gives none. Frameworks that read ``session.instructions``
        read this, never the SDK's copy."""
        if self._rec is None:
            return None
        handed = self._handoff(self._rec).get("instructions")
        return handed if isinstance(handed, str) else None

    @property
    def initialize_result(self) -> Any:
        """The SDK's InitializeResult with the handoff's instructions."""
        return self._as_checked(getattr(self.session, "initialize_result", None))

    @property
    def discover_result(self) -> Any:
        """The SDK's DiscoverResult with the handoff's instructions."""
        return self._as_checked(getattr(self.session, "discover_result", None))

    @property
    def record(self) -> Optional[Dict[str, Any]]:
        """The newest record (a dict); None before the first check."""
        return self._rec

    @property
    def records(self) -> List[Dict[str, Any]]:
        """The session's newest records (MAX_KEPT_RECORDS at most), oldest
        first; the log holds every one."""
        return list(self._records)

    @property
    def record_raw(self) -> bytes:
        """The newest record's canonical bytes, as logged."""
        return self._raw

    @property
    def consultation(self) -> Consultation:
        """What the issuer gave the newest record."""
        return self._cons

    async def recheck(self) -> Dict[str, Any]:
        """Observes the tool list again and checks it."""
        async with self._check_lock:
            await self._recheck()
            return self._current()[0]

    def _timeout_ms(self) -> int:
        """The check's deadline in milliseconds, as a timeout's record names it."""
        return int(round(self.timeout * 1000))

    def _current(self) -> Tuple[Dict[str, Any], bytes]:
        if self._err is not None:
            raise PreflightError(f"crawlcheck: the check could not be made: {self._err}") from self._err
        assert self._rec is not None
        return self._rec, self._raw

    async def _recheck(self) -> None:
        """Observes the list and checks it: the engine puts on the record the
        notifications it covers and how long its pace held it back."""
        obs, seen = await self._observe()
        await self._settle(obs, seen)

    async def _settle(self, obs: Observation, seen: Optional[int] = None) -> None:
        wire = self._tap.wire
        if wire is not None:
            # The lines skipped up to the check's end: the core records them.
            obs.stray_lines = wire.stray_lines
        try:
            rec, raw, cons, again = await self._check(obs, self._seen if seen is None else seen)
            if again:
                # The engine's check_again (a refresh): once more, the
                # issuer asked too (spec §4); it marks the check refreshed.
                if self._connected:
                    obs, seen = await self._observe()
                rec, raw, cons, _ = await self._check(obs, self._seen if seen is None else seen)
        except (CoreError, OSError, PreflightError, ValueError) as e:
            self._err = e
            return
        self._err = None
        self._obs, self._rec, self._raw, self._cons = obs, rec, raw, cons
        if seen is not None:
            self._seen = seen

    def _handshake_event(self, fault: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """The session engine's handshake event: the answer as the tap saw
        it (the wire's bytes, or where the tap saw the SDK's decoded result,
        that as JSON, ASCII-escaped so that a lone surrogate reaches the core
        as the escape the server sent), the version the SDK settled on, the
        page cap, and the fault that ended the handshake."""
        ev: Dict[str, Any] = {"type": "handshake"}
        hs = self._tap.handshake
        if hs is not None:
            ev["handshake"] = hs[0]
            ev["result"] = self._tap.handshake_raw if self._tap.handshake_raw is not None else json.dumps(hs[1], ensure_ascii=True)
        negotiated = getattr(self.session, "_negotiated_version", None)
        if not isinstance(negotiated, str) or not negotiated:
            negotiated = getattr(self._sdk_result, "protocolVersion", None)
        if isinstance(negotiated, str) and negotiated:
            ev["negotiated"] = negotiated
        if self.page_cap is not None:
            ev["page_cap"] = self.page_cap
        if fault is not None:
            ev["fault"] = fault
        return ev

    def _fault(self, failure: str, detail: str) -> Dict[str, Any]:
        """A fault as the engine's events take it: the code and what the
        transport knows of it (the check's deadline, the command, a child's
        exit and stderr, an auth fault's metadata URL when the failure is
        the fault it saw). Which of them the record carries is the engine's."""
        f: Dict[str, Any] = {"failure": failure}
        if detail:
            f["failure_detail"] = detail
        if self._timeout_ms() > 0:
            f["timeout_ms"] = self._timeout_ms()
        wire = self._tap.wire
        if wire is not None:
            if wire.command:
                f["failure_command"] = wire.command
            if wire.exit_status is not None and wire.exit_status >= 0:
                f["exit_status"] = wire.exit_status
            tail = wire.stderr_tail()
            if tail:
                f["stderr_tail"] = tail
            if failure in (FAULT_UNAUTHORIZED, FAULT_FORBIDDEN) and failure == wire.fault and wire.resource_metadata:
                f["resource_metadata"] = wire.resource_metadata
        return f

    def _handshake_failed(self, obs: Observation, fault: Tuple[str, str]) -> None:
        """The observation of a handshake that did not end: the engine's."""
        obs.client_capabilities = self._tap.client_capabilities
        ev = self._handshake_event(self._fault(*fault))
        obs.apply(_Walk().step(ev), [], ev.get("result"))

    async def _observe(self) -> Tuple[Observation, int]:
        """Reads the tools/list pages the session engine asks for, within
        the timeout: the handshake event, then each page (read_page), until
        it answers the observation (observed). No rule of when to stop lives
        here."""
        obs = Observation(endpoint=self.endpoint, timeout_ms=self._timeout_ms())
        obs.client_capabilities = self._tap.client_capabilities
        seen = self._tap.changes
        hs = self._handshake_event()
        pages: List[bytes] = []
        walk = _Walk()
        a = walk.step(hs)
        deadline = anyio.current_time() + self.timeout
        try:
            with anyio.fail_after(self.timeout):
                while a["action"] == "read_page":
                    try:
                        page, failure, detail = await self._fetch_page(a["cursor"])
                    finally:
                        self._fetched()
                    if failure:
                        a = walk.step({"type": "page", "fault": self._fault(failure, detail)})
                        continue
                    assert page is not None
                    pages.append(page)
                    a = walk.page(page)
        except TimeoutError:
            a = walk.step({"type": "page", "fault": self._fault(*self._tap.fault(timed_out=True))})
        except anyio.get_cancelled_exc_class():
            if not self._tap.ended:
                raise
            # The transport died mid-listing (mcp 1.x's stdio reader on one
            # invalid UTF-8 byte) and its task group cancels the session's
            # body, this check too: the record is still made, shielded.
            a = walk.step({"type": "page", "fault": self._fault(*self._tap.fault())})
            obs.apply(a, pages, hs.get("result"))
            with anyio.CancelScope(shield=True):
                await self._settle(obs, seen)
            raise
        obs.apply(a, pages, hs.get("result"))
        # After a whole tool list, what the server offers beside it, within
        # what is left of the deadline (_features.py).
        if obs.stop == "list_end":
            await observe_features(self, obs, seen, deadline)
        return obs, seen

    async def _fetch_page(self, cursor: Optional[str], send: Optional[Callable[[], Awaitable[Any]]] = None) -> Tuple[Optional[bytes], str, str]:
        """Sends one tools/list through the SDK (or, with send, the request
        the tap is reading: _features.py) and returns the answer the tap
        saw. A frame that could not be decoded is taken as the answer of the
        newest unanswered tools/list, and that call is abandoned."""
        from mcp import types

        tap = self._tap
        # One page at a time (the check lock): what an earlier, abandoned
        # call left behind is no answer to this one.
        tap.order.clear()
        tap.broken.clear()
        tap.answers.clear()
        mark, broken_mark = 0, 0
        undecoded = tap.undecoded
        state: Dict[str, Any] = {}

        async def run() -> None:
            try:
                if send is not None:
                    await send()
                else:
                    await self.session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
                state["ok"] = True
            except Exception as e:  # noqa: BLE001 - kept and classified below
                state["err"] = e
            finally:
                tap._notify()

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            while True:
                rid = tap.order[mark] if len(tap.order) > mark else None
                if (
                    rid is not None
                    and tap.answers.get(rid, ("",))[0] == "raw"
                    and "ok" not in state
                    and "err" not in state
                    and tap.undecoded == undecoded
                ):
                    # The wire's answer names this call: the SDK's own call
                    # ends with it (answered, or refused by its types), unless
                    # the SDK could not decode the frame at all (then below).
                    await tap.wait()
                    continue
                if rid is not None and rid in tap.answers:
                    kind, value = tap.answers.pop(rid)
                    # raw: the frame's result member verbatim (the wire's
                    # bytes); else the decoded result re-encoded.
                    page = value if kind.startswith("raw") else _dump(value)
                    # An answer the SDK will not take as this call's (an
                    # error, or a frame its id does not name) abandons the call.
                    if "ok" not in state and "err" not in state and kind in ("error", "raw", "raw_unmatched"):
                        tg.cancel_scope.cancel()
                    return page, "", ""
                if rid is not None and len(tap.broken) > broken_mark:
                    tg.cancel_scope.cancel()
                    return tap.broken[broken_mark], "", ""
                if tap.oversize or tap.ended:
                    tg.cancel_scope.cancel()
                    return (None, *tap.fault())
                if "ok" in state or "err" in state:
                    err = state.get("err")
                    if rid is None and err is None:
                        return None, FAULT_LIST_CACHED, ""
                    if err is not None:
                        return (None, *tap.fault())
                    return None, FAULT_NOT_CAPTURED, ""
                await tap.wait()
        raise AssertionError("unreachable: the loop returns")

    def _fetched(self) -> None:
        """Forgets the fetch's requests: a late answer to an abandoned call is
        dropped on arrival."""
        tap = self._tap
        for rid in tap.order:
            tap.sent.pop(rid, None)
            if rid in tap.calls:
                # Kept, as answered: a late answer naming it is dropped,
                # not taken for the next call's.
                tap.calls[rid][1] = True
        for rid in [k for k, c in tap.calls.items() if c[1] and k not in tap.order]:
            del tap.calls[rid]
        while len(tap.calls) > _MAX_CALLS:
            del tap.calls[next(iter(tap.calls))]
        self._tap.order.clear()
        self._tap.broken.clear()
        self._tap.answers.clear()

    def _step(self, event: Dict[str, Any]) -> List[Dict[str, Any]]:
        """Hands the session engine one event (session_step) and keeps the
        state it answers; returns the actions, in the order they are done."""
        answer = session_step(event=event, state=None if self._engine is None else self._engine.encode("utf-8"))
        self._engine = answer["state"]
        return list(answer["actions"])

    async def _check(self, obs: Observation, seen: int) -> Tuple[Dict[str, Any], bytes, Consultation, bool]:
        """One check and its record (_check.py)."""
        return await check(self, obs, seen)

    # -- the gate

    def _handoff(self, rec: Dict[str, Any]) -> Dict[str, Any]:
        """The core's handoff of rec (continuity_handoff); an empty one, which
        hands over nothing and lets no call through, for any other record."""
        handoffs: Dict[str, Dict[str, Any]] = getattr(self, "_handoffs", {})
        return handoffs.get(str(rec.get("record_sha256")), {})

    def _allowed(self, rec: Dict[str, Any], name: str) -> bool:
        """Whether a call of name may reach the server: the engine answers by
        the newest record; any other record lets no call through."""
        if self._handoff(rec) is not self._handed or not isinstance(name, str):
            return False
        return bool(self._step({"type": "call", "name": name})[0]["action"] == "allow")

    async def _gate(self) -> Tuple[Dict[str, Any], bytes, Observation]:
        async with self._check_lock:
            if self._rec is None and self._err is None:
                raise PreflightError("crawlcheck: call initialize() (or discover()) on the preflight first")
            a = await self._up_to_date()
            rec, raw = self._current()
            # Nothing is handed over or called unless the engine allows it
            # (the session proceeds).
            if a["action"] != "allow":
                raise ContinuityRefused(rec, raw, effect=str(rec.get("effect")))
            return rec, raw, self._obs

    async def _up_to_date(self) -> Dict[str, Any]:
        """Asks the engine whether the record covers every list_changed seen
        (use), re-checking first when it does not (a session without its
        transport cannot, and is refused); answers the engine's allow or
        refuse. Callers hold the check lock."""
        seen = self._tap.changes
        a = self._step({"type": "use", "seen": seen})[0]
        if a["action"] == "recheck" and self._connected:
            await self._recheck()
            a = self._step({"type": "use", "seen": seen})[0]
        return a

    async def list_tools(self, *args: Any, params: Any = None, cursor: Optional[str] = None) -> Any:
        """The tools of the checked list the record lets through, in one result
        without a cursor. A tool the SDK's type cannot hold is never handed
        over changed: the engine says so (unheld), once, on the crawlcheck
        logger."""
        from mcp import types

        _no_cursor(args, params, cursor)
        rec, _, _ = await self._gate()
        handed = self._handoff(rec).get("tools") or []
        # The core's bytes, parsed by the SDK's own type: what the model
        # reads is what the record covers (never the SDK's parse of a page,
        # which takes mcp 2.x's input_schema for inputSchema). All of them
        # in one validation (pydantic's cost per call was a tenth of it at
        # 1,000 tools); only when one cannot be held, each on its own.
        try:
            parsed = types.ListToolsResult.model_validate_json('{"tools":[' + ",".join(h["tool"] for h in handed) + "]}").tools
        except Exception:  # noqa: BLE001 - pydantic's error: a tool the SDK cannot hold
            parsed = [_sdk_tool(types, h["tool"]) for h in handed]
        tools = [t for t, h in zip(parsed, handed) if t is not None and t.name == h["name"]]
        if len(tools) < len(handed):
            held = {t.name for t in tools}
            for a in self._step({"type": "unheld", "names": [h["name"] for h in handed if h["name"] not in held]}):
                logger.warning("%s", a["text"])
        return types.ListToolsResult(tools=tools)

    async def call_tool(self, name: str, arguments: Optional[Dict[str, Any]] = None, *args: Any, **kwargs: Any) -> Any:
        """Calls a tool the record lets through; refuses any other with
        ContinuityRefused, before the SDK is asked (a paused session whose
        transport is gone still answers with the record). Every other path
        to a tools/call is refused the same way at the session's write
        stream (``_Tap.gate_send``), which this call crosses too."""
        await self._admit(name)
        return await self.session.call_tool(name, arguments, *args, **kwargs)

    async def _admit(self, name: Any) -> None:
        """Returns when the current record lets a call of name through;
        raises ContinuityRefused (or the check's error) when not."""
        rec, raw, _ = await self._gate()
        if not isinstance(name, str):
            raise ContinuityRefused(rec, raw, tool=repr(name))
        if not self._allowed(rec, name):
            raise ContinuityRefused(rec, raw, tool=name, effect=str((rec.get("tools") or {}).get(name, "")))

    def allowed_names(self) -> List[str]:
        """Names of the offered tools the newest record lets through."""
        rec = self._rec or {}
        return sorted(n for n in (rec.get("tools") or {}) if self._allowed(rec, n))

    # -- re-approval

    async def confirm(self, *names: str) -> Dict[str, Any]:
        """Re-approves the named tools, as a person's act, after a person read
        what changed: the core's approval op makes the new lockfile from the
        pages of the current record (refusing unless every changed tool is
        named and the list was read whole), it is signed with signing_key when
        one is set, written atomically over the lockfile, and the same pages
        are checked against it. Returns that record. A change of the
        server's instructions is no tool's: it is refused unnamed here, and
        approved by confirm_instructions."""
        return await self._confirm(list(names), False)

    async def confirm_instructions(self, *names: str) -> Dict[str, Any]:
        """confirm that also approves a change of the server's instructions
        (``instructions_changed``; the core's ``approve_instructions``): a
        person read the record's ``instructions_diff``, each segment escaped
        (``crawlcheck.escape_text``), and approved the new instructions with the
        tools named. The new lockfile pins the instructions and the server
        as the handshake gave them. Prompts and resources: confirm_features."""
        return await self._confirm(list(names), True)

    async def _confirm(self, names: List[str], instructions: bool, features: bool = False) -> Dict[str, Any]:
        async with self._check_lock:
            rec, raw = self._current()
            obs = self._obs
            now = format_time(self.now())
            if self.lock_path is None:
                raise PreflightError("crawlcheck: confirm: the lockfile was given as bytes; give its path to rewrite it")
            data = approved_lock(
                rec, raw, self._lock_bytes, obs, names, now,
                instructions=instructions, features=features, server_name=self.server_name, signing_key=self.signing_key,
            ).encode("utf-8")
            write_atomic(self.lock_path, data, 0o644)
            self._lock_bytes = data
            # The proof beside the lockfile was of the one just replaced: the
            # issuer's log holds no entry of the new one.
            if self._proof:
                try:
                    os.remove(proof_path(self.lock_path))
                except FileNotFoundError:
                    pass
                self._proof = ""
            await self._settle(obs)
            return self._current()[0]


class CheckedTools(List[Any]):
    """The tools an adapter hands its framework (a list), with the records of
    the check that chose them: ``records`` (oldest first, MAX_KEPT_RECORDS at
    most; the log holds every one) and ``record`` (the newest), as JS puts
    ``.continuity`` on its adapters' tool arrays."""

    def __init__(self, tools: Sequence[Any], records: Sequence[Dict[str, Any]]) -> None:
        super().__init__(tools)
        self.records: List[Dict[str, Any]] = list(records)[-MAX_KEPT_RECORDS:]

    @property
    def record(self) -> Optional[Dict[str, Any]]:
        """The newest record; None when there is none."""
        return self.records[-1] if self.records else None


def with_preflight(
    session: Any,
    lock: Lock,
    *,
    endpoint: Union[str, Sequence[str], Any, None] = None,
    mode: Optional[str] = None,
    policy: Union[bytes, str, None] = None,
    expected_policy_version: Optional[str] = None,
    operator_keys: Optional[Sequence[str]] = None,
    key_directory: Union[bytes, str, None] = None,
    require_signed_baseline: Optional[bool] = None,
    server_name: Optional[str] = None,
    issuer: Union[Issuer, str, None] = None,
    on_record: Optional[Callable[[Dict[str, Any], bytes], None]] = None,
    log_path: Optional[str] = None,
    page_cap: int = 0,
    timeout: float = 0.0,
    signing_key: Optional[str] = None,
    now: Optional[Callable[[], datetime]] = None,
    max_answer_bytes: int = 0,
    pilot: Union[Pilot, Mapping[str, Any], None] = None,
) -> McpPreflight:
    """Wraps an (unentered) transport, or an (unentered) mcp ClientSession,
    in the continuity check::

        async with with_preflight(stdio_client(params), "crawlcheck.lock.json",
                                  endpoint=params) as session:
            await session.initialize()

    The lockfile is read and judged here: a bad one is PreflightError before
    the transport starts. Given a transport, entering starts it and makes the
    ClientSession on its streams; what the body raises comes out as itself,
    not in an ExceptionGroup of a task group.
    """
    return McpPreflight(
        session,
        lock,
        endpoint=endpoint,
        mode=mode,
        policy=policy,
        expected_policy_version=expected_policy_version,
        operator_keys=operator_keys,
        key_directory=key_directory,
        require_signed_baseline=require_signed_baseline,
        server_name=server_name,
        issuer=issuer,
        on_record=on_record,
        log_path=log_path,
        page_cap=page_cap,
        timeout=timeout,
        signing_key=signing_key,
        now=now,
        max_answer_bytes=max_answer_bytes,
        pilot=pilot,
    )


__all__ = [
    "CheckedTools",
    "ContinuityRefused",
    "Lock",
    "Issuer",
    "McpPreflight",
    "Observation",
    "PreflightError",
    "endpoint_of",
    "format_time",
    "with_preflight",
]

