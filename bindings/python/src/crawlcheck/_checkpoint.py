"""The issuer's transparency log on the host's side (docs/log.md, What a host
does), as the Go preflight's Checkpoints (internal/preflight/checkpoint.go):
the lockfile's tlog-proof is kept beside it (proof_path), the newest
checkpoint the host has seen beside the record log and its replay state
(checkpoint_path), and every check hands the core both with the consistency
proof between them. The core decides; this module only stores the checkpoint
the record says to keep."""

from __future__ import annotations

import errno
import re
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional

from ._files import read_regular_file
from ._log import write_atomic

if TYPE_CHECKING:
    from ._issuer import IssuerClient

#: a proof is at most 126 hashes and a checkpoint with its signature lines
MAX_PROOF_BYTES = 64 << 10

_SIZE = re.compile(r"(0|[1-9][0-9]{0,17})")


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
        when the two trees differ in size, the consistency proof between them
        asked of the issuer. None to be had (no issuer, or it does not answer)
        is said as consistency_unavailable, and the core records
        log_inconsistent with that reason in its own words: not a fork
        proved."""
        member: Dict[str, Any] = {"proof": proof}
        if not self.kept:
            return member
        member["checkpoint"] = self.kept
        _, sep, note = proof.partition("\n\n")
        have = _note_size(note) if sep else None
        kept = _note_size(self.kept)
        if have is None or kept is None or have == kept:
            return member
        cons = None
        if issuer is not None:
            cons = await issuer.consistency(min(have, kept), max(have, kept))
        if cons is not None:
            member["consistency"] = cons
        else:
            member["consistency_unavailable"] = True
        return member

    def keep(self, rec: Mapping[str, Any]) -> None:
        """Stores the checkpoint the record says to keep (its log.keep),
        atomically when it changed."""
        log = rec.get("log")
        keep = log.get("keep") if isinstance(log, dict) else None
        if not isinstance(keep, str) or not keep or keep == self.kept:
            return
        if self.path:
            write_atomic(self.path, keep.encode("utf-8"), 0o644)
        self.kept = keep


def _note_size(note: str) -> Optional[int]:
    """The tree size of a checkpoint (its second line), only to know which
    consistency proof to ask for: the core verifies the checkpoint, the size
    and the proof."""
    lines = note.split("\n", 2)
    if len(lines) < 3 or not _SIZE.fullmatch(lines[1]):
        return None
    return int(lines[1])
