// The pilot upload (docs/preflight.md, "The pilot upload"), as the Go
// preflight does it: the records a session writes to its log are sent to an
// issuer's pilot (POST /api/v1/pilot/{id}/records) in the background, in
// batches, retried with backoff. The queue is the record log itself; what
// the issuer acknowledged is kept beside it (`<log>.pilot-ack`). Which bytes
// go next, how they are batched, what the issuer's answers make of the ack
// file and when it no longer describes the log are the core's pilot_queue;
// this file reads and writes the files, posts and waits.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { load } from "./core.js";
import { writeFileAtomic } from "./log.js";
import { readCapped } from "./bounded.js";
import { PreflightError } from "./errors.js";

/** Where the acknowledged offset of a record log is kept. */
export const pilotAckPath = (logPath) => `${logPath}.pilot-ack`;

const UPLOAD_TIMEOUT_MS = 30_000;

/** The ack file's first bound + 1 bytes (the core judges them); undefined when there is none. */
function readAck(logPath, bound) {
  let fd;
  try {
    fd = openSync(pilotAckPath(logPath), "r");
  } catch (e) {
    if (e?.code === "ENOENT") return undefined;
    throw new PreflightError(`crawlcheck: pilot: the ack file: ${e.message}`);
  }
  try {
    const buf = Buffer.alloc(bound + 1);
    return buf.subarray(0, readSync(fd, buf, 0, buf.length, 0));
  } finally {
    closeSync(fd);
  }
}

/**
 * Posts one batch: the issuer's status and answer. A pilot with a record key
 * (`pilot.recordKey`, the seed POST /api/v1/pilot?record_key=true answered)
 * signs it with the core's sign_pilot_upload: the issuer takes no upload to
 * that pilot without it (docs/issuer.md, Trust model).
 */
async function post(core, pilot, batch, bound, signal) {
  const url = `${pilot.url.replace(/\/$/, "")}/api/v1/pilot/${encodeURIComponent(pilot.id)}/records`;
  const timeout = AbortSignal.timeout(UPLOAD_TIMEOUT_MS);
  const headers = { "content-type": "application/jsonl", authorization: `Bearer ${pilot.token}` };
  if (pilot.recordKey) {
    headers["x-crawlcheck-pilot-signature"] = core.signPilotUpload({ private_key: pilot.recordKey, pilot_id: pilot.id, records: batch }).signature;
  }
  const resp = await fetch(url, {
    method: "POST",
    headers,
    body: batch,
    redirect: "error",
    signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
  });
  const { bytes, over } = await readCapped(resp.body, bound);
  if (over) throw new PreflightError(`crawlcheck: pilot: the issuer's answer is over ${bound} bytes`);
  return { status: resp.status, body: bytes };
}

/**
 * Runs pilot_queue from a fresh read of the ack file and the log until it
 * answers neither a read nor a batch: what it asks for is read or posted and
 * handed back. {acked, more}: more is the core's (ask again at once).
 */
async function uploadBatch(pilot, logPath, signal) {
  const core = await load();
  const { pilot_ack_bytes: ackBound, pilot_answer_bytes: answerBound } = core.limits;
  const req = {};
  const ack = readAck(logPath, ackBound);
  if (ack !== undefined) req.ack = ack;
  const fd = openSync(logPath, "r");
  try {
    req.log_size = fstatSync(fd).size;
    let window = null;
    for (;;) {
      const q = core.pilotQueue(req);
      if (q.ack !== null) writeFileAtomic(pilotAckPath(logPath), q.ack, 0o600);
      if (q.error) {
        const e = new PreflightError(`crawlcheck: pilot: ${q.error.message}`);
        e.chainGap = q.error.code === "chain_gap";
        throw e;
      }
      if (q.read) {
        window = Buffer.alloc(q.read.length);
        window = window.subarray(0, readSync(fd, window, 0, window.length, q.read.offset));
        req.window_offset = q.read.offset;
        req.window = window;
      } else if (q.batch) {
        const at = q.batch.offset - req.window_offset;
        req.answer = await post(core, pilot, window.subarray(at, at + q.batch.length), answerBound, signal);
      } else {
        return { acked: q.acknowledged, more: q.more };
      }
    }
  } finally {
    closeSync(fd);
  }
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
    // The back-off's bounds, when the deployment (or a test) gives its own:
    // how the wait grows is the core's (pilot_queue's wait).
    this.backoff = {};
    if (pilot.minBackoffMs > 0) this.backoff.min = Math.ceil(pilot.minBackoffMs);
    if (pilot.maxBackoffMs > 0) this.backoff.max = Math.ceil(pilot.maxBackoffMs);
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
      // The wait's bounds are the core's; the draw within them the host's.
      let wait;
      try {
        const req = { failed_passes: this.failures };
        if (Object.keys(this.backoff).length > 0) req.backoff_ms = this.backoff;
        ({ wait } = (await load()).pilotQueue(req));
      } catch (e) {
        // Bounds the core refuses: no wait can be drawn, so no pass is
        // tried again; error says why.
        this.error = e;
        this.again = false;
        return;
      }
      this.schedule(wait.min + Math.random() * (wait.max - wait.min));
    }
    this.again = false;
  }

  /** Stops, abandoning a batch in flight (it is sent again). */
  close() {
    this.abort.abort();
    clearTimeout(this.timer);
  }
}
