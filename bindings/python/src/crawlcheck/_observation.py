"""The observation: what the preflight saw of a server (the handshake, the
pages of tools/list, a fault and where it happened), as the facts the core's
continuity check decides on, and the host fault codes the preflight can
report (the core words them on the record).

It is apart from the capture (_capture.py: how the bytes are taken from the
session's streams) and from the session (preflight.py: when a check runs
and what its record lets through), since it is the one shape both hand
each other.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Union

from ._core import CoreError
from .ops import session_step

#: A frame went past max_answer_bytes; the failure's detail is the limit in
#: bytes, from which the core words the record's server_unavailable detail.
FAILURE_TOO_LARGE = "answer_too_large"
#: The check's deadline passed (a host fault the core words, with the
#: deadline: docs/continuity.md, Host faults).
FAULT_TIMEOUT = "timeout"
#: The pages so far are more bytes together than one check carries (the
#: core's limits.pages_bytes, above; FAULT_PAGES_OVER_CAP).
#: Capture failures: the SDK produced a tools/list answer the tap did not see
#: on the wire (its own list cache, or an answer the tap missed), so nothing
#: was observed. Codes the core words behind capture_failed, with no
#: failure_at: they say nothing of where.
FAULT_PAGES_OVER_CAP = "pages_over_cap"
#: The server answered HTTP 401 / 403 (Observation.resource_metadata: the
#: URL its WWW-Authenticate named).
FAULT_UNAUTHORIZED = "unauthorized"
FAULT_FORBIDDEN = "forbidden"
FAULT_LIST_CACHED = "list_cached"
FAULT_NOT_CAPTURED = "answer_not_captured"


@dataclass
class Observation:
    """What the preflight saw: the facts the core decides on."""

    endpoint: str = ""
    handshake: str = ""
    protocol_version: str = ""
    server_info: Any = None
    #: what the client declared (initialize, or a 2026-07-28 request's _meta)
    client_capabilities: Optional[Dict[str, Any]] = None
    #: the handshake's result as JSON text, for the core to read serverInfo
    #: and instructions of (one it cannot read is an observation on the
    #: record, never a refused request: issue 22, F6)
    handshake_result: Union[str, bytes, None] = None
    pages: List[bytes] = field(default_factory=list)
    #: why the walk ended, the session engine's: list_end,
    #: page_cap_reached, cursor_repeated, response_malformed; "" when a
    #: failure ended it.
    stop: str = ""
    #: the walk ended at the page cap (the engine's, for the check).
    page_cap_reached: bool = False
    #: "", a host fault (connect_refused, timeout, process_exited,
    #: session_ended, session_failed, pages_over_cap), a capture failure
    #: (list_cached, answer_not_captured) or answer_too_large
    failure: str = ""
    #: answer_too_large's limit; "" with a fault
    failure_detail: str = ""
    #: where a fault happened: "handshake" or "tools/list" (page failure_page)
    failure_at: str = ""
    failure_page: int = 0
    #: the check's deadline in milliseconds, named in a timeout's record
    timeout_ms: int = 0
    #: stdio lines that were no JSON-RPC message, skipped by the transport
    #: (docs/mcpserver.md, Stray lines); the core records the count
    stray_lines: int = 0
    #: the program a command_not_found could not find
    command: str = ""
    #: a process_exited child's exit status (None: not known) and the end
    #: of its stderr, given at the handshake only, as every host gives them
    exit_status: Optional[int] = None
    stderr_tail: str = ""
    #: with unauthorized or forbidden: the resource metadata URL the
    #: server's WWW-Authenticate named (RFC 9728), "" for none
    resource_metadata: str = ""
    #: what was read beside the tools after a whole tool list (_features.py):
    #: observed.features as the core reads it; None when nothing was read
    features: Optional[Dict[str, Any]] = None

    def apply(self, a: Dict[str, Any], pages: List[bytes], result: Union[str, bytes, None]) -> None:
        """Takes in the session engine's observed action (the walk's end,
        docs/abi.md): the facts it decided, the handshake's result when it
        says so, and the first ``pages`` of the pages read."""
        o = a["observed"]
        self.handshake = o.get("handshake", "")
        self.protocol_version = o.get("protocol_version", "")
        self.page_cap_reached = o.get("page_cap_reached", False)
        self.failure = o.get("failure", "")
        self.failure_detail = o.get("failure_detail", "")
        self.failure_at = o.get("failure_at", "")
        self.failure_page = o.get("failure_page", 0)
        self.resource_metadata = o.get("resource_metadata", "")
        self.timeout_ms = o.get("timeout_ms", self.timeout_ms)
        self.command = o.get("failure_command", "")
        self.exit_status = o.get("exit_status")
        self.stderr_tail = o.get("stderr_tail", "")
        self.handshake_result = result if a["handshake_result"] else None
        self.pages = [] if a["pages"] is None else pages[: a["pages"]]
        self.stop = a["stop"] or ""

    def observed(self) -> Dict[str, Any]:
        """continuity_check's ``observed`` member (as bindings/go/preflight builds it)."""
        o: Dict[str, Any] = {}
        if self.endpoint:
            o["endpoint"] = self.endpoint
        if self.protocol_version:
            o["protocol_version"] = self.protocol_version
        if self.handshake_result is not None:
            o["handshake_result"] = self.handshake_result
        elif self.server_info is not None:
            o["server_info"] = self.server_info
        if self.handshake:
            o["handshake"] = self.handshake
        if self.client_capabilities is not None:
            o["client_capabilities"] = self.client_capabilities
        if self.pages or not self.failure:
            o["pages"] = list(self.pages)
        if self.page_cap_reached:
            o["page_cap_reached"] = True
        if self.stray_lines > 0:
            o["stray_lines"] = self.stray_lines
        if self.features is not None:
            o["features"] = self.features
        # The failure goes as it is, a code (a capture failure included):
        # the core decides how a record carries it.
        if self.failure:
            o["failure"] = self.failure
            if self.failure_detail:
                o["failure_detail"] = self.failure_detail
            if self.failure_at:
                o["failure_at"] = self.failure_at
            if self.failure_page > 0:
                o["failure_page"] = self.failure_page
            if self.resource_metadata:
                o["resource_metadata"] = self.resource_metadata
            if self.failure == FAULT_TIMEOUT and self.timeout_ms > 0:
                o["timeout_ms"] = self.timeout_ms
            if self.failure == "command_not_found":
                o["failure_command"] = self.command
            if self.failure == "process_exited" and self.failure_at == "handshake":
                if self.exit_status is not None:
                    o["exit_status"] = self.exit_status
                if self.stderr_tail:
                    o["stderr_tail"] = self.stderr_tail
        return o


def _sdk_tool(types: Any, text: str) -> Any:
    """The SDK's Tool of the core's text of one tool, None when its type
    cannot hold it (the tool is then left out, not handed over changed)."""
    try:
        return types.Tool.model_validate_json(text)
    except Exception:  # noqa: BLE001 - pydantic's error: the SDK cannot hold it
        return None


def _members(page: bytes) -> Optional[Dict[str, Any]]:
    """A page's members, or None when it is not one JSON object (repeated keys
    refused, so no caller picks one of two answers)."""

    def pairs(ps: List[Tuple[str, Any]]) -> Dict[str, Any]:
        d: Dict[str, Any] = {}
        for k, v in ps:
            if k in d:
                raise ValueError(f"duplicate key {k!r}")
            d[k] = v
        return d

    try:
        v = json.loads(page, object_pairs_hook=pairs)
    except ValueError:
        return None
    return v if isinstance(v, dict) else None


class _Walk:
    """The session engine's steps for one walk (the handshake and page
    events), in a state of its own: a walk needs none of the session's
    state, and the session's holds its newest record, which every page's
    step would otherwise read and write again."""

    def __init__(self) -> None:
        self._state: Optional[str] = None

    def step(self, event: Dict[str, Any]) -> Dict[str, Any]:
        """Hands the engine one event; answers its one action (read_page,
        or observed at the walk's end)."""
        answer = session_step(event=event, state=None if self._state is None else self._state.encode("utf-8"))
        self._state = answer["state"]
        action: Dict[str, Any] = answer["actions"][0]
        return action

    def page(self, page: bytes) -> Dict[str, Any]:
        """Hands the engine one page; a page the core cannot take in one
        request goes again as oversized (the engine records pages_over_cap)."""
        try:
            return self.step({"type": "page", "page": page})
        except CoreError as e:
            if e.code != "input_too_large":
                raise
            return self.step({"type": "page", "oversized": True})
