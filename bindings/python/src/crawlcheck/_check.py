"""One continuity check of a session: the issuer consulted (when there is
one), the check request made of the preflight's configuration and the
observation, handed to the core's session engine, and the engine's actions
done: the record appended to the log (and the pilot upload woken), the
checkpoint kept, the handoff kept by its record, observe mode's ``would``
told to a person.

It is apart from preflight.py (the session: when a check runs, what its
record lets through) so that what one check does reads in one place; it
works on the McpPreflight it is handed, whose state it updates.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, Dict, Tuple

from ._core import CoreError
from ._entry import PreflightError, format_time
from ._issuer import Consultation
from ._observation import Observation
from .ops import escape_text

if TYPE_CHECKING:
    from .preflight import McpPreflight

#: The logger observe mode tells a person through (the engine's warn),
#: at WARNING: with logging not configured, Python's last-resort handler
#: writes it to stderr; an application that configures logging routes it.
logger = logging.getLogger("crawlcheck")


async def check(pf: "McpPreflight", obs: Observation, seen: int) -> Tuple[Dict[str, Any], bytes, Consultation, bool]:
    """Runs one check of obs (seen: the list_changed notifications counted
    when it was taken) and answers the record, its bytes, the consultation
    and whether the engine asks for one more check (check_again)."""
    now = format_time(pf.now())
    cons = Consultation()
    observed = obs.observed()
    if pf._issuer is not None:
        cons = await pf._issuer.consult(
            lock=pf._lock_bytes,
            observed=observed,
            now=now,
            server_name=pf.server_name,
            policy=pf.policy,
        )
    req: Dict[str, Any] = {"now": now, "lock": pf._lock_bytes, "observed": observed}
    if pf.mode:
        req["mode"] = pf.mode
    if pf.server_name:
        req["server_name"] = pf.server_name
    if pf.policy is not None:
        req["policy"] = pf.policy
    if pf.expected_policy_version:
        req["expected_policy_version"] = pf.expected_policy_version
    if pf.operator_keys:
        req["operator_keys"] = pf.operator_keys
    if pf.key_directory is not None:
        req["key_directory"] = pf.key_directory
    if pf.require_signed_baseline is not None:
        req["require_signed_baseline"] = pf.require_signed_baseline
    cons.use(req)
    if pf._prev:
        req["prev_record_sha256"] = pf._prev
    if pf._proof and pf._kept is not None:
        req["log"] = await pf._kept.input(pf._proof, pf._issuer)
    try:
        actions = pf._step({"type": "check", "check": req, "seen": seen})
    except CoreError as e:
        if e.code != "input_too_large" or not obs.pages:
            raise
        # The event with the pages was more than the core takes: again
        # without them, and the engine records pages_over_cap (the ABI's
        # rule for an oversized check event).
        observed = {k: v for k, v in req["observed"].items() if k != "pages"}
        actions = pf._step({"type": "check", "check": {**req, "observed": observed}, "seen": seen, "oversized": len(obs.pages)})
    raw, keep, again, notice = b"", "", False, ""
    for a in actions:
        if a["action"] == "append_record":
            raw = a["record"].encode("utf-8")
        elif a["action"] == "hand":
            # The core's answer of what this record lets a host hand
            # over, kept by the record it came with.
            pf._handed = {k: v for k, v in a.items() if k != "action"}
        elif a["action"] == "keep_checkpoint":
            keep = a["checkpoint"]
        elif a["action"] == "check_again":
            again = True
        elif a["action"] == "warn":
            notice = a["text"]
        else:
            raise PreflightError(f"crawlcheck: an action of the session engine this host does not know: {escape_text(text=str(a['action']))['text']}")
    rec = json.loads(raw)
    pf._handoffs = {rec["record_sha256"]: pf._handed}
    if pf._log is not None:
        pf._log.append(raw, rec["record_sha256"], rec.get("prev_record_sha256"))
        if pf._uploader is not None:
            pf._uploader.kick()
    if pf._kept is not None and keep:
        pf._kept.keep(keep)
    pf._prev = rec["record_sha256"]
    pf._records.append(rec)
    if pf.on_record is not None:
        pf.on_record(rec, raw)
    if notice:
        # Observe mode withholds nothing: a person is told on the
        # crawlcheck logger (stderr unless logging is configured) what
        # enforce would have refused, the engine's words, once for each
        # distinct would.
        logger.warning("%s", notice)
    return rec, raw, cons.recorded(rec), again
