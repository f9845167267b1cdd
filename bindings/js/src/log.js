// The record log: an append-only JSON-lines file of continuity records,
// chained (each record's prev_record_sha256 names the line before it), the
// same file bindings/go/preflight's Log writes (docs/preflight.md, The record log).

import { CrawlcheckError } from "./errors.js";
import { closeSync, fsyncSync, ftruncateSync, openSync, renameSync, writeSync } from "node:fs";
import { dirname, basename, join } from "node:path";
import { readRegular } from "./files.js";

export class RecordLog {
  #fd;
  #head;

  /**
   * Opens (or creates) the log at path and finds its head: the
   * record_sha256 of its last good record, which the next record must name.
   *
   * A last line cut off mid-write (no newline, not JSON: a crash during an
   * append) is the one damage tolerated: it is truncated (the core's
   * keep_bytes), since it never was a record. Any other damage (an edited record, a broken link) is an
   * error: appending to a log that no longer verifies would hide where it
   * broke.
   * @param {string} path
   * @param {import("./core.js").Core} cc
   */
  constructor(path, cc) {
    this.path = path;
    this.#fd = openSync(path, "a+", 0o644);
    try {
      this.#head = this.#open(cc);
    } catch (e) {
      closeSync(this.#fd);
      throw new CrawlcheckError(`crawlcheck: record log ${path}: ${e.message}`, { cause: e });
    }
  }

  #open(cc) {
    // The bound is the core's (limits.record_log_bytes): the chain is
    // verified in one request to it.
    const max = cc.limits.record_log_bytes;
    let data;
    try {
      data = readRegular(this.#fd, this.path, max);
    } catch (e) {
      throw new CrawlcheckError(`${e.message}: a record log is a regular file of at most ${max} bytes (move a longer one aside to start a new log)`, { cause: e });
    }
    const size = data.length;
    if (size === 0) return "";
    const chain = cc.verifyChain({ records: data });
    if (!chain.valid) {
      throw new CrawlcheckError(`broken at record ${chain.broken_at + 1}: ${cc.shown(chain.reason ?? "")}; move it aside to start a new log`);
    }
    // What to keep of it and whether to end its last line are the core's
    // (keep_bytes: a torn last line cut; add_newline: a whole last record
    // whose newline was never written).
    if (chain.keep_bytes !== size) ftruncateSync(this.#fd, chain.keep_bytes);
    if (chain.add_newline) writeSync(this.#fd, "\n");
    fsyncSync(this.#fd);
    return chain.head ?? "";
  }

  /** The record_sha256 of the last record, "" for an empty log. */
  get head() {
    return this.#head;
  }

  /**
   * Writes the record and a newline in one write and syncs before
   * returning, so a record acted on is on disk. The record must name the
   * log's head as its prev_record_sha256.
   * @param {{raw: string, sha256: string, prev: string}} record
   */
  append(record) {
    if (this.#fd === null) throw new CrawlcheckError("crawlcheck: record log: closed");
    const prev = record.prev_record_sha256 ?? "";
    if (prev !== this.#head) {
      throw new CrawlcheckError(`crawlcheck: record log: record ${record.record_sha256} names ${JSON.stringify(prev)} as the record before it, but the log's last record is ${JSON.stringify(this.#head)}`);
    }
    const line = Buffer.from(record.raw + "\n");
    let at = 0;
    while (at < line.length) at += writeSync(this.#fd, line, at, line.length - at);
    fsyncSync(this.#fd);
    this.#head = record.record_sha256;
  }

  close() {
    if (this.#fd !== null) {
      closeSync(this.#fd);
      this.#fd = null;
    }
  }
}

/**
 * Writes a file atomically: a temporary file in the same directory, fsync,
 * rename over the target, fsync of the directory.
 */
export function writeFileAtomic(path, data, mode = 0o644) {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${Date.now()}.tmp`);
  const fd = openSync(tmp, "wx", mode);
  try {
    const buf = typeof data === "string" ? Buffer.from(data) : data;
    let at = 0;
    while (at < buf.length) at += writeSync(fd, buf, at, buf.length - at);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  const dfd = openSync(dir, "r");
  try {
    fsyncSync(dfd);
  } finally {
    closeSync(dfd);
  }
}
