"""The capture: taps on an mcp ClientSession's read and write streams that
take the handshake's and tools/list's answers below the SDK's types (which
drop fields they do not know and refuse lists they cannot hold), bounded,
and count the server's list_changed notifications; on a transport of
crawlcheck.transport, each frame's bytes from the wire. preflight.py's
module docstring says why the pages are taken this way.

It is apart from the session (preflight.py) because it is the part that
knows the SDK's stream internals: what changes when the SDK does is here.
"""

from __future__ import annotations

import contextvars
import json
from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple

import anyio

from ._entry import PreflightError
from ._frames import members as _raw_members
from ._frames import value as _raw_value
from ._observation import FAILURE_TOO_LARGE, FAULT_TIMEOUT
from .transport import Wire, wire_of


_WATCHED = ("initialize", "server/discover", "tools/list")
#: The requests a raw tap remembers (the abandoned tools/list calls among
#: them, whose late answers are dropped): a bound, not a limit any session meets.
_MAX_CALLS = 1024


#: The _meta member a 2026-07-28 request declares the client's capabilities in.
_META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


def _declared_capabilities(method: Any, params: Any) -> Optional[Dict[str, Any]]:
    """The client capabilities a request declares: initialize's
    params.capabilities, or the params._meta member of a 2026-07-28
    request; None when it declares none."""
    if not isinstance(params, dict):
        return None
    meta = params.get("_meta")
    if isinstance(meta, dict) and isinstance(meta.get(_META_CLIENT_CAPABILITIES), dict):
        return meta[_META_CLIENT_CAPABILITIES]  # type: ignore[no-any-return]
    caps = params.get("capabilities")
    if method == "initialize" and isinstance(caps, dict):
        return caps
    return None


def _message(item: Any) -> Any:
    msg = getattr(item, "message", None)
    return getattr(msg, "root", msg)


def _dump(obj: Any) -> bytes:
    """A decoded JSON value as compact bytes in its key order. A string with
    a lone surrogate (a server's ``\\ud800``) cannot be UTF-8: the value is
    then written with escapes, so the core sees the escape, as on the wire."""
    # check_circular off: a decoded value holds no cycle, and the check was
    # a fifth of the time of a 1,000-tool page's encoding.
    try:
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), check_circular=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _frame_bytes(exc: BaseException) -> bytes:
    """The line a transport could not decode, as its parse error carries it."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            for e in errors():
                inp = e.get("input")
                if isinstance(inp, (str, bytes)):
                    return inp.encode("utf-8", "surrogateescape") if isinstance(inp, str) else inp
        except Exception:  # noqa: BLE001 - a foreign exception's own failure
            pass
    return repr(exc).encode("utf-8", "replace")


def _frame_size(item: Any) -> int:
    """The bytes of a frame as the transport decoded it: a message
    re-encoded compactly, or the line it could not decode."""
    if isinstance(item, BaseException):
        return len(_frame_bytes(item))
    m = _message(item)
    dump = getattr(m, "model_dump_json", None)
    if not callable(dump):
        return 0
    return len(dump(by_alias=True, exclude_none=True).encode("utf-8", "surrogatepass"))


class _Tap:
    """What crossed the session's streams: requests watched by id, their
    answers, undecodable frames and list_changed notifications.

    Every frame is bounded (``limit``): one past it is not taken, the
    session's read stream ends there (the session is broken) and
    ``oversize`` holds the limit, the core's failure_detail."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.oversize = ""
        self.sent: Dict[str, str] = {}  # request id -> method
        self.order: List[str] = []  # ids of tools/list requests, in order
        self.answers: Dict[str, Tuple[str, Any]] = {}  # id -> ("result"|"error", value)
        self.broken: List[bytes] = []  # frames that were not JSON-RPC
        #: the handshake answered: its method and, where the wire's bytes were
        #: not seen (handshake_raw), the SDK's decoded result
        self.handshake: Optional[Tuple[str, Optional[Dict[str, Any]]]] = None
        #: what the newest request declaring the client's capabilities declared
        self.client_capabilities: Optional[Dict[str, Any]] = None
        self.changes = 0
        self._wake: Optional[anyio.Event] = None
        #: awaited with the tool's name before any message with method
        #: tools/call leaves (the preflight's gate); it raises to refuse.
        self.admit: Optional[Callable[[Any], Awaitable[None]]] = None
        #: the transport's read stream ended (the server exited, or the
        #: transport's reader died: mcp 1.x stdio on invalid UTF-8)
        self.ended = False
        #: the frames come from a transport of crawlcheck.transport (the
        #: wire's bytes, bounded before decoding), not from the session's
        #: decoded messages
        self.raw = False
        #: raw: every request sent with an id (key -> [method, answered]),
        #: oldest first, as the Go preflight's recorder keeps its calls
        self.calls: Dict[str, List[Any]] = {}
        #: raw: the handshake's result member, verbatim
        self.handshake_raw: Optional[bytes] = None
        #: the crawlcheck.transport the frames come from, None on mcp's own
        self.wire: Optional[Wire] = None
        #: raw: frames the SDK could not decode (parse errors it was handed)
        self.undecoded = 0
        #: raw: the SDK could not decode the frame that answered the handshake
        self.handshake_refused = False
        self._handshake_last = False
        #: the method besides tools/list whose answers are taken as pages
        #: while the check reads it (prompts/list, resources/list,
        #: resources/templates/list, resources/read: _features.py), None
        #: otherwise: a resources/read of the session's own is not kept
        self.reading: Optional[str] = None
        #: the ui:// URI the preflight itself is reading to check it
        #: against its pin (_features.py): its resources/read passes the gate
        self.reading_uri: Optional[str] = None
        #: awaited with the method and params before a prompts/get or
        #: resources/read leaves (the preflight's item gate); it raises to refuse
        self.admit_item: Optional[Callable[[str, Any], Awaitable[None]]] = None

    def _paged(self, method: Any) -> bool:
        """Whether an answer to method is taken as a page: tools/list's
        always, the list or read the check is reading while it reads it."""
        return method == "tools/list" or (method is not None and method == self.reading)

    def attach_wire(self, wire: Wire) -> None:
        """Takes the frames of a crawlcheck.transport at the wire: each is
        bounded there (``limit``) and routed as the Go preflight routes it."""
        wire.limit = self.limit
        wire.on_frame = self.received_raw
        wire.on_too_large = self.too_large
        self.raw = True
        self.wire = wire

    def fault(self, timed_out: bool = False) -> Tuple[str, str]:
        """The fault that failed a request (docs/continuity.md, Host faults),
        from what the deadline and the transport saw, never an exception's
        text: an answer cut off at the limit (its detail the limit), the
        deadline, what a crawlcheck.transport saw (the command did not
        start, the child exited, no connection was made), the read stream
        ending, else the SDK's own failure."""
        if self.oversize:
            return FAILURE_TOO_LARGE, self.oversize
        if timed_out:
            return FAULT_TIMEOUT, ""
        if self.wire is not None and self.wire.fault:
            return self.wire.fault, ""
        if self.ended:
            return "session_ended", ""
        return "session_failed", ""

    def too_large(self) -> None:
        """A frame went past the limit at the wire."""
        if not self.oversize:
            self.oversize = str(self.limit)
        self._notify()

    def received_raw(self, frame: bytes, to: Optional[str] = None) -> None:
        """A frame as it crossed the wire, routed as the Go preflight's
        recorder routes it: each element of a batch on its own; a
        notification counted when it is list_changed; an answer by its id,
        and a frame no call's id names (not JSON, no id, an unknown id) as
        the answer of the call the transport knows (HTTP), else of the
        newest unanswered tools/list, else of the newest unanswered call.
        A call keeps the first frame taken as its answer."""
        t = frame.lstrip(b" \t\r\n")
        if t[:1] == b"[":
            from ._frames import elements

            batch = elements(frame)
            if batch is not None:
                for elem in batch:
                    self.received_raw(elem, None)
                return
        self._handshake_last = False
        m, repeated = _raw_members(frame)
        parsed = m is not None
        if m is not None and "method" in m:
            method = _raw_value(m["method"])
            if isinstance(method, str):
                if method == "notifications/tools/list_changed":
                    self.changes += 1
                    self._notify()
                return
            parsed = False
        matched = False
        key: Optional[str] = None
        if m is not None and parsed:
            v = _raw_value(m.get("id"))
            if isinstance(v, int) and not isinstance(v, bool) and str(v) in self.calls:
                key, matched = str(v), True
        if key is None:
            key = to if to in self.calls else self._pending()
        if key is None:
            return
        call = self.calls[key]
        if call[1]:
            return
        call[1] = True
        method = str(call[0])
        if method in ("initialize", "server/discover"):
            result = m.get("result") if (m is not None and matched) else None
            if result is not None:
                # The bytes as sent: the session engine reads them, not the tap.
                self.handshake_raw = result
                self._handshake_last = True
                self.handshake = (method, None)
        elif self._paged(method):
            ok = matched and m is not None and "result" in m
            # The page, from the members just read (a 1,000-tool frame is not
            # scanned again): the result member's bytes of a frame with one
            # result member, else the whole frame, which the core refuses as
            # malformed and says why.
            page = m["result"] if m is not None and not repeated and "result" in m else frame
            self.answers[key] = ("raw" if ok else "raw_unmatched", page)
        self._notify()

    def _pending(self) -> Optional[str]:
        """The call an unattributable frame most likely answers."""
        newest: Optional[str] = None
        for key in reversed(list(self.calls)):
            method, answered = self.calls[key]
            if answered:
                continue
            if self._paged(method):
                return key
            if newest is None:
                newest = key
        return newest

    def end(self) -> None:
        """Records that the session's read stream ended."""
        self.ended = True
        self._notify()

    def _notify(self) -> None:
        if self._wake is not None:
            self._wake.set()
            self._wake = None

    async def wait(self) -> None:
        if self._wake is None:
            self._wake = anyio.Event()
        await self._wake.wait()

    async def gate_send(self, item: Any) -> None:
        """The gate at the wire: a request or notification with method
        tools/call waits for the check and raises (it is never sent) unless
        the record lets its tool through, whichever SDK method sent it
        (call_tool, send_request(CallToolRequest), a task-augmented call,
        send_notification, anything reached through the wrapper's
        ``__getattr__``); prompts/get, resources/read and
        completion/complete unless it hands the prompt, resource or
        template over (``admit_item``)."""
        m = _message(item)
        method = getattr(m, "method", None)
        if method in ("prompts/get", "resources/read", "completion/complete") and self.admit_item is not None:
            # The same for a prompt or a resource (issue 35), unless it is
            # the template the preflight is reading to check it.
            params = getattr(m, "params", None)
            uri = params.get("uri") if isinstance(params, dict) else getattr(params, "uri", None)
            if method == "resources/read" and self.reading_uri is not None and str(uri) == self.reading_uri:
                return
            await self.admit_item(str(method), params)
            return
        if method != "tools/call":
            return
        if self.admit is None:
            raise PreflightError("crawlcheck: a tools/call before the preflight was set up")
        params = getattr(m, "params", None)
        name = params.get("name") if isinstance(params, dict) else getattr(params, "name", None)
        await self.admit(name)

    def on_send(self, item: Any) -> None:
        m = _message(item)
        method = getattr(m, "method", None)
        rid = getattr(m, "id", None)
        caps = _declared_capabilities(method, getattr(m, "params", None))
        if caps is not None:
            self.client_capabilities = caps
        if self.raw and method is not None and rid is not None:
            self.calls[str(rid)] = [str(method), False]
        if (method in _WATCHED or self._paged(method)) and rid is not None:
            if not self.raw:
                self.sent[str(rid)] = str(method)
            if self._paged(method):
                self.order.append(str(rid))

    def over(self, item: Any) -> bool:
        """Whether item goes past the limit (or one did before): the
        session's read stream then ends."""
        if not self.raw and not self.oversize and _frame_size(item) > self.limit:
            self.oversize = str(self.limit)
            self._notify()
        return self.oversize != ""

    def on_receive(self, item: Any) -> None:
        if self.raw:
            # The wire's frames were taken as they arrived (received_raw);
            # what is counted is a frame the SDK could not decode, which no
            # call of its own will be answered by.
            if isinstance(item, BaseException):
                self.undecoded += 1
                if self._handshake_last:
                    # The SDK could not decode the handshake's answer: its
                    # handshake will never end on it.
                    self.handshake_refused = True
                self._notify()
            return
        if isinstance(item, BaseException):
            # Kept only while a page is awaited: a server cannot fill memory
            # with frames nobody asked for.
            if self.order:
                self.broken.append(_frame_bytes(item))
                self._notify()
            return
        m = _message(item)
        if getattr(m, "method", None) == "notifications/tools/list_changed":
            self.changes += 1
            self._notify()
            return
        rid = getattr(m, "id", None)
        if rid is None or str(rid) not in self.sent:
            return
        key = str(rid)
        method = self.sent.pop(key)
        if method in ("initialize", "server/discover"):
            if hasattr(m, "result") and isinstance(m.result, dict):
                self.handshake = (method, m.result)
        elif hasattr(m, "result"):
            self.answers[key] = ("result", m.result)
        else:
            frame = m.model_dump(by_alias=True, mode="json", exclude_none=True)
            self.answers[key] = ("error", frame)
        self._notify()


class _ReadTap:
    def __init__(self, inner: Any, tap: _Tap) -> None:
        self._inner = inner
        self._tap = tap

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        if self._tap.oversize:
            raise anyio.EndOfStream
        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._tap.end()
            raise
        if self._tap.over(item):
            raise anyio.EndOfStream
        self._tap.on_receive(item)
        return item

    def __aiter__(self) -> "_ReadTap":
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> "_ReadTap":
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


class _WriteTap:
    def __init__(self, inner: Any, tap: _Tap) -> None:
        self._inner = inner
        self._tap = tap

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def send(self, item: Any) -> None:
        await self._tap.gate_send(_unwrap(item))
        self._tap.on_send(_unwrap(item))
        await self._inner.send(item)

    async def __aenter__(self) -> "_WriteTap":
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


def _install_tap(session: Any, tap: _Tap) -> None:
    """Puts the tap on an unstarted session's streams: mcp 2.x keeps them on
    its dispatcher, 1.x on the session itself."""
    owner = getattr(session, "_dispatcher", None)
    if owner is None or not hasattr(owner, "_read_stream"):
        owner = session
    if not hasattr(owner, "_read_stream") or not hasattr(owner, "_write_stream"):
        raise PreflightError(
            "crawlcheck: cannot reach this ClientSession's streams: pass an mcp ClientSession "
            "(mcp 1.18 or later, or 2.x) before entering it"
        )
    wire = wire_of(owner._read_stream)
    if wire is not None:
        tap.attach_wire(wire)
    owner._read_stream = _ReadTap(owner._read_stream, tap)
    owner._write_stream = _WriteTap(owner._write_stream, tap)


def _unwrap(item: Any) -> Any:
    """An item as the session sees it: mcp 2.x's context streams carry
    (contextvars.Context, item) envelopes below their wrapper."""
    if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], contextvars.Context):
        return item[1]
    return item


def _patchable(stream: Any) -> Any:
    """The stream itself, or the one it wraps, whose methods can be replaced
    on the instance (a wrapper with __slots__ cannot)."""
    s = stream
    while s is not None and not hasattr(s, "__dict__"):
        s = getattr(s, "_inner", None)
    if s is None:
        raise PreflightError(f"crawlcheck: cannot tap a stream of type {type(stream).__name__}")
    return s


def _attach_tap(session: Any, tap: _Tap) -> None:
    """Puts the tap on a running session's streams by replacing their
    instances' receive and send (the session's loop looks them up on every
    message). A receive already waiting when this runs is not tapped: the
    caller sends a ping first, whose answer it takes."""
    owner = getattr(session, "_dispatcher", None)
    if owner is None or not hasattr(owner, "_read_stream"):
        owner = session
    if not hasattr(owner, "_read_stream") or not hasattr(owner, "_write_stream"):
        raise PreflightError("crawlcheck: cannot reach this ClientSession's streams")
    wire = wire_of(owner._read_stream)
    if wire is not None:
        tap.attach_wire(wire)
    rs, ws = _patchable(owner._read_stream), _patchable(owner._write_stream)
    receive, send = rs.receive, ws.send

    async def tapped_receive() -> Any:
        if tap.oversize:
            raise anyio.EndOfStream
        try:
            item = await receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            tap.end()
            raise
        if tap.over(_unwrap(item)):
            raise anyio.EndOfStream
        tap.on_receive(_unwrap(item))
        return item

    async def tapped_send(item: Any) -> None:
        await tap.gate_send(_unwrap(item))
        tap.on_send(_unwrap(item))
        await send(item)

    rs.receive = tapped_receive
    ws.send = tapped_send
