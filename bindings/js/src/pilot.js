// The pilot upload (docs/preflight.md, "The pilot upload"), as the Go
// preflight does it: the records a session writes to its log are sent to an
// issuer's pilot (POST /api/v1/pilot/{id}/records) in the background, in
// batches, retried with backoff. The queue is the record log itself; what
// the issuer acknowledged is kept beside it (`<log>.pilot-ack`: the byte
// offset where the last answered line ends, a space, its record_sha256), so
// a record not acknowledged is never dropped and a line sent twice is the
// issuer's duplicate. The issuer judges every line; this file moves bytes
// and keeps an offset.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { writeFileAtomic } from "./log.js";
import { readRegularFile } from "./files.js";
import { readCapped } from "./bounded.js";
import { PreflightError } from "./errors.js";

/** Where the acknowledged offset of a record log is kept. */
export const pilotAckPath = (logPath) => `${logPath}.pilot-ack`;

const MAX_UPLOAD_BYTES = 4 << 20;
const MAX_UPLOAD_LINES = 500;
const MAX_RECORD_BYTES = 8 << 20; // the issuer's bound: a record up to it goes alone
const MAX_PILOT_ANSWER = 8 << 20;
const UPLOAD_TIMEOUT_MS = 30_000;

/** The acknowledged offset (0 when none or unreadable: a line sent again is a duplicate). */
function readAck(logPath) {
  try {
    const off = Number.parseInt(Buffer.from(readRegularFile(pilotAckPath(logPath), 256)).toString("latin1").split(" ")[0], 10);
    return Number.isSafeInteger(off) && off >= 0 ? off : 0;
  } catch {
    return 0;
  }
}

/** Sends one batch from the acknowledged offset: {acked, more}. */
async function uploadBatch(pilot, logPath, signal) {
  let off = readAck(logPath);
  const fd = openSync(logPath, "r");
  let buf;
  let size;
  try {
    size = fstatSync(fd).size;
    if (size < off) off = 0; // the log was replaced: send it all
    buf = Buffer.alloc(Math.min(size - off, MAX_RECORD_BYTES));
    buf = buf.subarray(0, readSync(fd, buf, 0, buf.length, off));
  } finally {
    closeSync(fd);
  }
  let end = 0;
  let lines = 0;
  while (end < buf.length && lines < MAX_UPLOAD_LINES) {
    const i = buf.indexOf(10, end);
    if (i < 0 || (lines > 0 && i + 1 > MAX_UPLOAD_BYTES)) break;
    end = i + 1;
    lines++;
  }
  if (lines === 0 && buf.length === MAX_RECORD_BYTES) {
    throw new PreflightError(`crawlcheck: pilot: the record at byte ${off} of the log is over ${MAX_RECORD_BYTES} bytes, more than the issuer takes: it stays in the log`);
  }
  if (lines === 0) return { acked: 0, more: false };
  const batch = buf.subarray(0, end);
  const url = `${pilot.url.replace(/\/$/, "")}/api/v1/pilot/${encodeURIComponent(pilot.id)}/records`;
  const timeout = AbortSignal.timeout(UPLOAD_TIMEOUT_MS);
  const resp = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/jsonl", authorization: `Bearer ${pilot.token}` },
    body: batch,
    redirect: "error",
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
  });
  const { bytes, over } = await readCapped(resp.body, MAX_PILOT_ANSWER);
  if (over) throw new PreflightError(`crawlcheck: pilot: the issuer's answer is over ${MAX_PILOT_ANSWER} bytes`);
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (resp.status !== 200) {
    let code = "";
    try {
      code = JSON.parse(body.toString("utf8")).code ?? "";
    } catch {
      // not a problem document
    }
    throw new PreflightError(`crawlcheck: pilot: the issuer answered HTTP ${resp.status} ${code}`.trimEnd());
  }
  const { results } = JSON.parse(body.toString("utf8"));
  let pos = 0;
  let acked = 0;
  let last = "";
  let gap = null;
  for (const r of results) {
    const i = batch.indexOf(10, pos);
    if (i < 0) break;
    if (r.status === "chain_gap") {
      gap = new PreflightError(`crawlcheck: pilot: the issuer's chain for this pilot does not lead to the next record: ${r.reason}`);
      gap.chainGap = true;
      break;
    }
    pos = i + 1;
    acked++;
    last = r.record_sha256 ?? "";
  }
  if (acked > 0) writeFileAtomic(pilotAckPath(logPath), `${off + pos} ${last}\n`, 0o600);
  if (gap) throw gap;
  if (acked < lines) throw new PreflightError(`crawlcheck: pilot: the issuer answered ${acked} of ${lines} records`);
  return { acked, more: off + end < size };
}

/**
 * Sends the records of the log the issuer has not acknowledged, batch after
 * batch, until none is left; throws when the issuer cannot take them (the
 * offset kept is where its answers stopped). Answers how many lines were
 * acknowledged.
 */
export async function uploadPending(pilot, logPath, signal) {
  let done = 0;
  for (;;) {
    const { acked, more } = await uploadBatch(pilot, logPath, signal);
    done += acked;
    if (!more) return done;
  }
}

/**
 * Uploads a record log in the background: kick() after each record,
 * close() when done. It never blocks or fails a session: what it could not
 * send waits in the log for the next try (`error` says why). Its timers do
 * not keep the process alive.
 */
export class PilotUploader {
  constructor(pilot, logPath) {
    for (const k of ["url", "id", "token"]) {
      if (typeof pilot?.[k] !== "string" || pilot[k] === "") throw new TypeError(`crawlcheck: pilot needs ${k}`);
    }
    this.pilot = pilot;
    this.logPath = logPath;
    this.minBackoff = pilot.minBackoffMs > 0 ? pilot.minBackoffMs : 1000;
    this.maxBackoff = pilot.maxBackoffMs > 0 ? pilot.maxBackoffMs : 300_000;
    this.poll = 60_000;
    this.failures = 0;
    this.next = 0;
    this.error = null;
    this.running = false;
    this.again = false;
    this.timer = null;
    this.abort = new AbortController();
    this.schedule(0);
  }

  /** A record was appended: send it, unless a backoff is running. */
  kick() {
    if (this.failures > 0 && Date.now() < this.next) return; // the issuer asked for room
    this.schedule(0);
  }

  schedule(ms) {
    if (this.abort.signal.aborted) return;
    clearTimeout(this.timer);
    this.next = Date.now() + ms;
    this.timer = setTimeout(() => this.run(), ms);
    this.timer.unref?.();
  }

  async run() {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      await uploadPending(this.pilot, this.logPath, this.abort.signal);
      this.error = null;
      this.failures = 0;
    } catch (e) {
      if (this.abort.signal.aborted) return;
      this.error = e;
      this.failures++;
    } finally {
      this.running = false;
    }
    if (this.failures === 0) {
      this.schedule(this.again ? 0 : this.poll);
    } else {
      const d = Math.min(this.maxBackoff, this.minBackoff * 2 ** Math.min(this.failures - 1, 20));
      this.schedule(d / 2 + Math.random() * (d / 2));
    }
    this.again = false;
  }

  /** Stops, abandoning a batch in flight (it is sent again). */
  close() {
    this.abort.abort();
    clearTimeout(this.timer);
  }
}
