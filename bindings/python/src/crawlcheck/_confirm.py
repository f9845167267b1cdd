"""The lockfile a person's re-approval makes (McpPreflight.confirm): the
core's approve op on the current record and its pages, signed when the
preflight has a signing key, as the Go preflight asks it
(internal/preflight, Approve). Kept apart from preflight.py, which runs the
session; this is the one act that writes a new baseline."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ._core import CoreError
from ._entry import PreflightError, show
from ._observation import Observation
from .ops import approve as _approve_op
from .ops import sign_lock


def approved_lock(
    rec: Dict[str, Any],
    raw: bytes,
    lock_bytes: bytes,
    obs: Observation,
    names: List[str],
    now: str,
    *,
    instructions: bool,
    features: bool = False,
    server_name: Optional[str],
    signing_key: Optional[str],
) -> str:
    """The new lockfile's text: the core's approval of the named tools (and
    of the instructions, when ``instructions``; of the prompts, resources,
    resource templates and ui:// templates as offered now, when
    ``features``) against the record ``raw`` and the lockfile it was checked
    against; PreflightError in the core's words when it is not approved."""
    req: Dict[str, Any] = {"record": raw, "lock": lock_bytes, "names": names, "approved_at": now}
    if instructions or features:
        # The instructions and items approved are the ones the handshake and
        # the lists gave (obs is the observation the record was made from,
        # features included): the core reads them of the observed facts.
        req["observed"] = obs.observed()
        if instructions:
            req["approve_instructions"] = True
        if features:
            req["approve_features"] = True
    elif not obs.failure:
        facts = obs.observed()
        for k in ("pages", "page_cap_reached"):
            if k in facts:
                req[k] = facts[k]
    if server_name:
        req["server_name"] = server_name
    a = _approve_op(**req)
    if not a.get("approved") or a.get("lock") is None:
        unnamed = ", ".join(
            (show(str(u.get("tool"))) + f" ({u.get('observation')})") if u.get("tool") is not None else str(u.get("observation"))
            for u in a.get("unnamed") or []
        )
        not_changed = ", ".join(show(str(n)) for n in a.get("not_changed") or [])
        raise PreflightError(
            f"crawlcheck: confirm (record {rec.get('record_sha256')}): not approved: {show(str(a.get('reason')))}"
            + (f"; also changed: {unnamed}" if unnamed else "")
            + (f"; no change to approve: {not_changed}" if not_changed else "")
        )
    lock = str(a["lock"])
    if signing_key:
        # The core's sign_lock refuses an agentgate.lock (lock_unsupported).
        try:
            lock = str(sign_lock(lock=lock.encode("utf-8"), private_key=signing_key)["lock"])
        except CoreError as e:
            raise PreflightError(f"crawlcheck: confirm: {e.code}: {show(e.message)}") from e
    return lock
