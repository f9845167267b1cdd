// The issuer's transparency log on the host's side (docs/log.md, What a
// host does), as bindings/go/preflight's Checkpoints: the lockfile's
// tlog-proof is kept beside it (proofPath), the newest checkpoint the host
// has seen beside the record log and its replay state (checkpointPath), and
// every check hands the core both with the consistency proof between them.
// The core decides; this file only stores the checkpoint the record says to
// keep.

import { CrawlcheckError } from "./errors.js";
import { readRegularFile } from "./files.js";
import { writeFileAtomic } from "./log.js";

/** Where a lockfile's tlog-proof is kept: beside it. */
export const proofPath = (lockPath) => `${lockPath}.tlog-proof`;

/** Where the newest checkpoint of the issuer's log is kept for a record log: beside it. */
export const checkpointPath = (logPath) => `${logPath}.log-checkpoint`;

// A proof is at most 126 hashes and a checkpoint with its signature lines.
const MAX_PROOF_BYTES = 64 << 10;

const dec = new TextDecoder();

/** The tlog-proof beside a lockfile, "" when there is none. */
export function readProof(lockPath) {
  try {
    return dec.decode(readRegularFile(proofPath(lockPath), MAX_PROOF_BYTES));
  } catch (e) {
    if (e.code === "ENOENT") return "";
    throw new CrawlcheckError(`crawlcheck: the lockfile's tlog-proof: ${e.message}`, { cause: e });
  }
}

/**
 * The newest checkpoint kept: in memory, and in a file when one is named
 * ("" keeps it in memory only). A file that cannot be read is an error: the
 * history it held would be forgotten. Its content is judged by the core at
 * the next check.
 */
export class Checkpoints {
  constructor(path) {
    this.path = path;
    this.kept = "";
    if (!path) return;
    try {
      this.kept = dec.decode(readRegularFile(path, MAX_PROOF_BYTES));
    } catch (e) {
      if (e.code !== "ENOENT") throw new CrawlcheckError(`crawlcheck: the kept log checkpoint: ${e.message}`, { cause: e });
    }
  }

  /**
   * continuity_check's log member for proof: the checkpoint kept and, when
   * the two trees differ in size, the issuer's answer asked for the
   * consistency proof between them (the core reads the proof out of it). No
   * answer to be had (no issuer, or it does not answer) is said as
   * consistency_unavailable, and the core records log_inconsistent with that
   * reason in its own words: not a fork proved.
   */
  async input(proof, issuer, cc) {
    const input = { proof };
    if (!this.kept) return input;
    input.checkpoint = this.kept;
    // The session engine reads the trees' sizes (log_proof): none asked for
    // when they are the same tree, or a size the log check will refuse.
    const [ask] = cc.sessionStep({ event: { type: "log_proof", proof, checkpoint: this.kept } }).actions;
    if (!ask) return input;
    const { from, to } = ask;
    try {
      // The issuer's answer as it came: the core reads the proof out of it.
      if (issuer) input.consistency_answer = await issuer.consistency(from, to);
    } catch {
      // No answer: said below, and the core fails the check closed.
    }
    if (input.consistency_answer === undefined) input.consistency_unavailable = true;
    return input;
  }

  /** Stores the checkpoint the engine says to keep (keep_checkpoint), atomically when it changed. */
  keep(keep) {
    if (keep === this.kept) return;
    if (this.path) {
      try {
        writeFileAtomic(this.path, keep, 0o644);
      } catch (e) {
        throw new CrawlcheckError(`crawlcheck: keeping the log checkpoint: ${e.message}`, { cause: e });
      }
    }
    this.kept = keep;
  }
}
