"""The issuer's transparency log on the host's side (docs/log.md, What a host
does), as the Go preflight's Checkpoints (internal/preflight/checkpoint.go):
the lockfile's tlog-proof is kept beside it (proof_path), the newest
checkpoint the host has seen beside the record log and its replay state
(checkpoint_path), and every check hands the core both with the consistency
proof between them. The core decides; this module only stores the checkpoint
the record says to keep."""

from __future__ import annotations

import errno
from typing import TYPE_CHECKING, Any, Dict, Optional

from ._files import read_regular_file
from ._log import write_atomic
from .ops import session_step

if TYPE_CHECKING:
    from ._issuer import IssuerClient

#: a proof is at most 126 hashes and a checkpoint with its signature lines
MAX_PROOF_BYTES = 64 << 10



def proof_path(lock_path: str) -> str:
    """Where a lockfile's tlog-proof is kept: beside it."""
    return lock_path + ".tlog-proof"


def checkpoint_path(log_path: str) -> str:
    """Where the newest checkpoint of the issuer's log is kept for a record
    log: beside it."""
    return log_path + ".log-checkpoint"


def read_proof(lock_path: str) -> str:
    """The tlog-proof beside a lockfile, "" when there is none."""
    try:
        return read_regular_file(proof_path(lock_path), MAX_PROOF_BYTES).decode("utf-8", "replace")
    except OSError as e:
        if e.errno == errno.ENOENT:
            return ""
        raise OSError(e.errno, f"the lockfile's tlog-proof: {e}") from e


class Checkpoints:
    """The newest checkpoint kept: in memory, and in a file when one is named
    (None keeps it in memory only). A file that cannot be read is an error:
    the history it held would be forgotten. Its content is judged by the core
    at the next check."""

    def __init__(self, path: Optional[str]) -> None:
        self.path = path
        self.kept = ""
        if not path:
            return
        try:
            self.kept = read_regular_file(path, MAX_PROOF_BYTES).decode("utf-8", "replace")
        except OSError as e:
            if e.errno != errno.ENOENT:
                raise OSError(e.errno, f"the kept log checkpoint: {e}") from e

    async def input(self, proof: str, issuer: Optional["IssuerClient"]) -> Dict[str, Any]:
        """continuity_check's log member for proof: the checkpoint kept and,
        when the two trees differ in size, the issuer's answer asked for the
        consistency proof between them (the core reads the proof out of it).
        No answer to be had (no issuer, or it does not answer) is said as
        consistency_unavailable, and the core records log_inconsistent with
        that reason in its own words: not a fork proved."""
        member: Dict[str, Any] = {"proof": proof}
        if not self.kept:
            return member
        member["checkpoint"] = self.kept
        # The session engine reads the trees' sizes (log_proof): none asked
        # for when they are the same tree, or a size the log check refuses.
        ask = session_step(event={"type": "log_proof", "proof": proof, "checkpoint": self.kept})["actions"]
        if not ask:
            return member
        answer = None
        if issuer is not None:
            answer = await issuer.consistency(ask[0]["from"], ask[0]["to"])
        if answer is not None:
            # The issuer's answer as it came: the core reads the proof out of it.
            member["consistency_answer"] = answer
        else:
            member["consistency_unavailable"] = True
        return member

    def keep(self, keep: str) -> None:
        """Stores the checkpoint the engine says to keep (keep_checkpoint),
        atomically when it changed."""
        if keep == self.kept:
            return
        if self.path:
            write_atomic(self.path, keep.encode("utf-8"), 0o644)
        self.kept = keep
