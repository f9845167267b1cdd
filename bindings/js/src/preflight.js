// withPreflight: an official TypeScript MCP client (@modelcontextprotocol/sdk
// 1.x Client, @modelcontextprotocol/client 2.x Client) whose tools pass a
// continuity check before the model sees them. The check runs after the
// handshake and before the first tools/call; the core decides, this file
// follows the record (docs/preflight.md describes the Go twin it matches).

import { load, CoreError } from "./core.js";
import { CrawlcheckError, PreflightError } from "./errors.js";
import { attach } from "./capture.js";
import { hostFacts, handshakeEvent, faultEvent, endWalk, observePages, observedRequest, classify, walker } from "./observe.js";
import { RecordLog, writeFileAtomic } from "./log.js";
import { readRegularFile } from "./files.js";
import { IssuerClient, nonceStatePath, useConsultation, recordedConsultation } from "./issuer.js";
import { Checkpoints, checkpointPath, proofPath, readProof } from "./checkpoint.js";
import { PilotUploader } from "./pilot.js";
import { observeFeatures, installFeatures } from "./features.js";
import { rmSync } from "node:fs";

/**
 * The records a session keeps in memory (`continuity.records`), newest
 * last; the log holds them all. A long session, or a server announcing
 * changes without end, cannot grow the process with them.
 */
export const MAX_KEPT_RECORDS = 100;

/**
 * Background re-checks on notifications/tools/list_changed are paced by the
 * core's session engine (session_step): the first starts at once, and one
 * more starts no sooner than RECHECK_MIN_MS after the one before; every
 * notification in between is coalesced into it. A re-check that starts as
 * soon as it may (the server announced a change again within the wait)
 * doubles the wait, up to RECHECK_MAX_MS; a quiet spell resets it. A call
 * never waits out the hold-off: it re-checks at once when a change was
 * announced since the record it would be judged by. The constants say the
 * engine's numbers; the engine does not read them.
 */
export const RECHECK_MIN_MS = 1000;
export const RECHECK_MAX_MS = 60000;

const enc = new TextEncoder();
const EMPTY_PAGE = enc.encode('{"tools":[]}');
/** The module instances whose check code has run (Gate.warm). */
const warmed = new WeakSet();
/** Node's fetch, loaded and its code run once in this process (Gate.warmFetch). */
let fetchWarmed = null;


/**
 * A crawlcheck-continuity-record: every member under the record's own name
 * (`record_sha256`, `prev_record_sha256`, `effect`, `tools`, …, as
 * docs/continuity.md defines them; none renamed, none defaulted, so what a
 * program reads is what the log holds), and `raw`, the canonical line
 * record_sha256 covers.
 */
export class ContinuityRecord {
  /**
   * @param {string} raw the record's canonical line
   * @param {object} [parsed] raw already parsed (the handoff answer's record
   *   member, the same text), so a check's record is not parsed twice
   */
  constructor(raw, parsed = JSON.parse(raw)) {
    const r = parsed;
    if (r?.kind !== "crawlcheck-continuity-record" || !r.record_sha256 || !r.effect) {
      throw new PreflightError("crawlcheck: not a crawlcheck-continuity-record");
    }
    Object.assign(this, r);
    this.raw = raw;
    this.json = r;
  }

  /** Whether the whole tool list was read and parsed. */
  get complete() {
    const o = this.observed ?? {};
    return !o.failure && !o.truncated && !o.malformed;
  }
}

/**
 * The error of a call the check refused: a tool withheld (`tool` set) or a
 * session paused or denied. It carries the record that decided.
 */
export class ContinuityRefused extends CrawlcheckError {
  constructor(message, { tool = null, effect = null, record = null, cause } = {}) {
    super(message, { cause });
    this.name = "ContinuityRefused";
    this.tool = tool;
    this.effect = effect;
    this.record = record;
  }
}

function toBytes(v, what) {
  if (v === undefined || v === null) return null;
  if (v instanceof Uint8Array) return v;
  if (typeof v === "string") return enc.encode(v);
  if (typeof v === "object") return enc.encode(JSON.stringify(v));
  throw new TypeError(`crawlcheck: ${what}: bytes, text or a JSON value`);
}

/**
 * The settings of a check that come from the deployment, as the core's
 * request members.
 */
export function settingsRequest(c) {
  const out = {};
  if (c.mode) out.mode = c.mode;
  if (c.serverName) out.server_name = c.serverName;
  if (c.policy !== undefined && c.policy !== null) out.policy = toBytes(c.policy, "policy");
  if (c.expectedPolicyVersion) out.expected_policy_version = c.expectedPolicyVersion;
  if (c.operatorKeys?.length) out.operator_keys = c.operatorKeys;
  if (c.keyDirectory !== undefined && c.keyDirectory !== null) out.key_directory = toBytes(c.keyDirectory, "keyDirectory");
  if (c.requireSignedBaseline !== undefined) out.require_signed_baseline = !!c.requireSignedBaseline;
  return out;
}

/**
 * The session state of one wrapped client: the lockfile, the newest
 * record and the observation it was made from, the chain, the log.
 */
class Gate {
  constructor(client, lockOpt, cont) {
    this.client = client;
    this.cont = cont;
    this.lockPath = typeof lockOpt === "string" || lockOpt instanceof URL ? lockOpt : null;
    this.lockBytes = this.lockPath ? null : toBytes(lockOpt, "lock");
    if (!this.lockPath && !this.lockBytes) throw new TypeError("crawlcheck: withPreflight needs lock: the lockfile's path (or its bytes)");
    this.pageCap = cont.pageCap > 0 ? cont.pageCap : undefined; // undefined: the core's default
    this.maxAnswerBytes = 0; // set by open(): the caller's, or the core's limits
    this.timeout = 0;
    this.now = cont.now ?? (() => new Date());
    this.records = [];
    this.recheckTimer = null;
    // The core's session engine: its state, kept as the text it answered
    // (session_step), and the zero of its monotonic clock.
    this.engineState = null;
    this.engineZero = performance.now();
    this.record = null;
    this.obs = null;
    this.consultation = null;
    this.err = null;
    this.seen = 0;
    this.prev = "";
    this.queue = Promise.resolve();
    this.cap = null;
    this.log = null;
    this.uploader = null; // the pilot upload (pilot.js)
    this.issuer = null;
    this.proof = ""; // the lockfile's tlog-proof
    this.kept = null; // the log checkpoint kept, with a proof
    this.connected = false;
    this.closed = false;
  }

  nowText() {
    const d = this.now();
    return (d instanceof Date ? d : new Date(d)).toISOString();
  }

  /** Reads and verifies the lockfile, opens the log and the issuer: before any byte is sent. */
  async open() {
    this.cc = await load(this.cont.core);
    // The defaults are the core's (version's limits), as in every host.
    const limits = this.cc.limits;
    this.maxAnswerBytes = this.cont.maxAnswerBytes > 0 ? this.cont.maxAnswerBytes : limits.answer_bytes;
    this.timeout = this.cont.timeout > 0 ? this.cont.timeout : limits.check_timeout_ms;
    if (this.lockPath) {
      try {
        // A document the core reads: bounded by its request cap.
        this.lock = readRegularFile(this.lockPath, limits.request_bytes);
      } catch (e) {
        throw new PreflightError(`crawlcheck: reading the lockfile: ${e.message}`, { cause: e });
      }
    } else {
      this.lock = this.lockBytes;
    }
    const s = settingsRequest(this.cont);
    const vreq = { lock: this.lock, now: this.nowText() };
    if (s.operator_keys) vreq.operator_keys = s.operator_keys;
    if (s.key_directory) vreq.key_directory = s.key_directory;
    try {
      this.cc.verifyLock(vreq);
    } catch (e) {
      const where = this.lockPath ? `lockfile ${this.lockPath}` : "lockfile";
      throw new PreflightError(`crawlcheck: ${where}: ${e instanceof CoreError ? `${e.code}: ${this.cc.shown(e.coreMessage)}` : e.message}`, { cause: e });
    }
    if (this.cont.issuer) {
      const state = this.cont.logPath ? nonceStatePath(this.cont.logPath) : "";
      this.issuer = new IssuerClient(this.cc, this.cont.issuer, s.key_directory ?? null, state);
    }
    // The issuer's transparency log (docs/log.md): a tlog-proof beside the
    // lockfile is verified at every check, against the checkpoint kept
    // beside the record log (in memory without logPath).
    this.proof = this.lockPath ? readProof(this.lockPath) : "";
    if (this.proof) {
      // Judged by the baseline's keys: keyDirectory, or the pins with the
      // directory fetched at each check (docs/log.md).
      if (!s.key_directory && !(this.issuer?.pins.length > 0)) throw new PreflightError(`crawlcheck: ${proofPath(this.lockPath)} is verified against the issuer's log by its keys: give keyDirectory or issuer.pinnedKeys`);
      this.kept = new Checkpoints(this.cont.logPath ? checkpointPath(this.cont.logPath) : "");
    }
    if (this.cont.logPath) {
      this.log = new RecordLog(this.cont.logPath, this.cc);
      this.prev = this.log.head;
    }
    if (this.cont.pilot) {
      if (!this.cont.logPath) throw new PreflightError("crawlcheck: pilot uploads the record log: give logPath");
      this.uploader = new PilotUploader(this.cont.pilot, this.cont.logPath);
    }
  }

  /**
   * Puts the capture on the transport, names the endpoint, and gates every
   * tools/call that leaves through it (see gateSends).
   */
  /**
   * Runs the check the session will make, against an empty list, while the
   * server starts: Node compiles the module's functions on their first call
   * and tiers up the hot ones as they run, so a fresh process's first check
   * paid for that after the handshake; the server's start-up (a process
   * spawned, a connection opened) is time the client only waits in. The
   * lockfile is parsed and digested into the core's cache on the way. An
   * error here is nobody's: the check proper reports every one. Once per
   * module instance: in a process that has checked before, the code is
   * compiled and tiered up already, and a warm-up would only add a check.
   */
  warm() {
    if (warmed.has(this.cc)) return;
    warmed.add(this.cc);
    try {
      this.cc.callResultText("continuity_handoff", { now: this.nowText(), lock: this.lock, observed: { endpoint: this.endpoint, pages: [EMPTY_PAGE] }, ...settingsRequest(this.cont) });
    } catch {
      // only a warm-up
    }
  }

  /**
   * Runs Node's fetch once on a data: URL (no byte leaves the process)
   * before the deadline of a session over HTTP (or over a transport an
   * adapter has yet to hand over) starts: its first call in a process
   * loads and compiles the HTTP client, which on a loaded host took longer
   * than a check's deadline and made a refused connection a timeout
   * (docs/decisions.md). Once per process; an error here is nobody's.
   */
  async warmFetch() {
    if (this.cap?.kind === "stdio" || typeof fetch !== "function") return;
    fetchWarmed ??= fetch("data:,").then((r) => r.arrayBuffer()).catch(() => {});
    await fetchWarmed;
  }

  attach(transport) {
    this.transport = transport;
    this.cap = attach(transport, { maxAnswerBytes: this.maxAnswerBytes });
    this.gateSends(transport);
    this.endpoint = this.cap.kind === "stdio" ? endpointOf(this.cc, { command: this.cap.command }) : endpointOf(this.cc, { url: this.cap.url });
    this.cap.rec.onListChanged = () => this.scheduleRecheck();
  }

  /**
   * Waits for the handshake connecting() starts on the captured transport
   * (attach, before any byte is sent), within the check's timeout, and
   * answers what it resolves to. A session that could not be made is a
   * record of why and the ContinuityRefused carrying it (the Go
   * preflight's Open error); an error before a transport was captured is
   * the caller's own, rethrown.
   */
  async handshake(connecting) {
    // The deadline is the server's: the host's own first-use work (Node's
    // HTTP client, the engine's warm-up) is done before it starts, so that
    // a loaded host's start-up is never recorded as the server's timeout.
    await this.warmFetch();
    let p;
    try {
      p = connecting();
    } catch (e) {
      p = Promise.reject(e);
    }
    if (this.cap) this.warm(); // while the server starts
    const signal = AbortSignal.timeout(this.timeout);
    let failure = null;
    let made;
    try {
      made = await Promise.race([
        p,
        new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true })),
      ]);
    } catch (e) {
      if (!this.cap) throw e;
      failure = classify(this.cap.rec, signal, e);
    }
    if (!failure) return made;
    const facts = hostFacts(this.cap, this.endpoint, null);
    const hs = handshakeEvent(this.cap, null, this.pageCap);
    try {
      await this.transport.close?.();
    } catch {
      // the connection failed already
    }
    // The engine ends the observation at the handshake: the fault and what
    // the capture knows of a stdio command that did not start or exited at
    // once (the child has been closed by now).
    const rec0 = this.cap.rec;
    hs.fault = faultEvent(rec0, failure.failure, failure.detail, this.timeout);
    if (typeof rec0.command === "string" && rec0.command !== "") hs.fault.failure_command = rec0.command;
    if (Number.isInteger(rec0.exitStatus) && rec0.exitStatus >= 0) hs.fault.exit_status = rec0.exitStatus;
    const tail = failure.failure === "process_exited" ? rec0.stderrTail() : "";
    if (tail) hs.fault.stderr_tail = tail;
    const obs = endWalk(facts, walker(this.cc)(hs)[0], [], hs.result ?? null);
    const [rec] = await this.serial(() => this.check(obs, this.cap.rec.listChanged));
    this.record = rec;
    this.shutdown();
    const why = this.refusalText(rec).replace(/^crawlcheck: /, "");
    throw new ContinuityRefused(`crawlcheck: no session with ${this.cc.shown(this.endpoint)}: ${why}`, { effect: rec.effect, record: rec });
  }

  /** The first check of a session just made (the record every call waits for). */
  async start() {
    this.connected = true;
    await this.serial(() => this.recheck());
  }

  /** Ends the session's checks: no re-check starts, the log and the pilot upload close. */
  shutdown() {
    this.closed = true;
    this.connected = false;
    clearTimeout(this.recheckTimer);
    this.uploader?.close();
    this.log?.close();
  }

  /**
   * Hands the session engine one event (session_step) and keeps the state
   * it answers; returns the actions, in the order they are to be done.
   */
  step(event) {
    const { state, actions } = this.cc.sessionStep(this.engineState === null ? { event } : { event, state: enc.encode(this.engineState) });
    this.engineState = state;
    return actions;
  }

  /** The engine's clock: monotonic milliseconds of this session. */
  atMs() {
    return Math.round(performance.now() - this.engineZero);
  }

  /**
   * A list_changed arrived: the engine answers a re-check now or a wake
   * later (the notifications before it are coalesced into it). The
   * re-check runs after the SDK has handled the notification (the frame is
   * seen first); calls wait for it.
   */
  scheduleRecheck() {
    if (this.closed) return;
    this.paced({ type: "list_changed", at_ms: this.atMs(), seen: this.cap?.rec.listChanged ?? 0 });
  }

  /** Does what the engine answers a list_changed or a wake. */
  paced(event) {
    let actions;
    try {
      actions = this.step(event);
    } catch (e) {
      this.err = e;
      return;
    }
    for (const a of actions) {
      const wait = a.action === "wake" ? Math.max(0, a.at_ms - this.atMs()) : 0;
      if (a.action !== "wake" && a.action !== "recheck") continue;
      this.recheckTimer = setTimeout(() => {
        this.recheckTimer = null;
        if (this.closed || !this.connected) return;
        if (a.action === "wake") return this.paced({ type: "timer", at_ms: this.atMs() });
        // A call may have re-checked since: the engine says whether the
        // record covers the notifications now (use).
        this.serial(() => this.upToDate());
      }, wait);
      // A pending re-check does not keep the process alive.
      this.recheckTimer.unref?.();
    }
  }

  /**
   * The gate at the wire: every message the client sends with method
   * tools/call (a request, a task-augmented request, a notification, an
   * element of a batch) waits for the check and is refused unless the
   * record lets its tool through, whichever SDK method sent it (callTool,
   * request, requestStream, experimental.tasks.callToolStream, notification,
   * the transport's own send). A refused message is never sent: the SDK's
   * call fails with ContinuityRefused.
   */
  gateSends(transport) {
    const send = transport.send;
    const g = this;
    transport.send = async function (message, options) {
      for (const m of Array.isArray(message) ? message : [message]) {
        if (m && typeof m === "object" && m.method === "tools/call") await g.admit(m.params?.name);
      }
      return send.call(this, message, options);
    };
  }

  /** Resolves when the current record lets a call of name through; throws why not. */
  async admit(name) {
    if (typeof name !== "string") throw new TypeError("crawlcheck: a tools/call that names no tool");
    const { rec } = await this.gate();
    if (!this.allowed(rec, name)) throw this.refusedTool(rec, name);
    return rec;
  }

  /** Runs fn after every check before it: never two checks at once. */
  serial(fn) {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => {});
    return run;
  }

  /**
   * Asks the engine whether the record covers every list_changed seen
   * (use), re-checking first when it does not; answers the engine's allow
   * or refuse. Callers run it in serial().
   */
  async upToDate() {
    const seen = this.cap?.rec.listChanged ?? 0;
    let [a] = this.step({ type: "use", seen });
    if (a.action === "recheck") {
      try {
        await this.recheck();
        [a] = this.step({ type: "use", seen });
      } catch (e) {
        this.err = e;
      }
    }
    return a;
  }

  /**
   * Observes the list again (deadline: the check's timeout) and checks it;
   * the engine asks for one more when a refresh effect says so
   * (check_again), and puts on the record the notifications it covers.
   */
  async recheck() {
    let seen = this.cap.rec.listChanged;
    let obs = await this.observe();
    let [rec, cons, again] = await this.check(obs, seen);
    if (again) {
      seen = this.cap.rec.listChanged;
      obs = await this.observe();
      [rec, cons] = await this.check(obs, seen);
    }
    this.obs = obs;
    this.record = rec;
    this.consultation = cons;
    this.seen = seen;
    this.err = null;
  }

  async observe() {
    const signal = AbortSignal.timeout(this.timeout);
    const obs = hostFacts(this.cap, this.endpoint, this.client);
    const handshake = handshakeEvent(this.cap, this.client, this.pageCap);
    const walked = await observePages({ step: walker(this.cc), cap: this.cap, listPage: this.listPage, obs, handshake, timeoutMs: this.timeout, signal });
    // After a whole tool list, the prompts, resources and UI templates (features.js).
    return observeFeatures(this, walked, signal);
  }

  /**
   * Asks the issuer (on the service path), hands the engine the check of
   * obs (begun when seen notifications had arrived), chains, logs and hands
   * on the record; answers [record, consultation, check_again]. A record
   * that cannot be logged is an error: a decision must not be acted on
   * without its record.
   */
  async check(obs, seen) {
    const now = this.nowText();
    const observed = observedRequest(obs);
    const req = { now, lock: this.lock, observed, ...settingsRequest(this.cont) };
    let cons = null;
    if (this.issuer) {
      cons = await this.issuer.consult({
        lock: this.lock,
        serverName: this.cont.serverName,
        policy: req.policy,
        obs,
        now,
        observedPages: observed.pages ?? [],
      });
      useConsultation(req, cons);
    }
    if (this.prev) req.prev_record_sha256 = this.prev;
    if (this.proof) req.log = await this.kept.input(this.proof, this.issuer, this.cc);
    let rec;
    let again = false;
    let keep = "";
    let notice = "";
    try {
      // The record and the core's handoff: what this record lets a host
      // hand over and call (docs/continuity.md, The handoff).
      warmed.add(this.cc);
      let actions;
      try {
        actions = this.step({ type: "check", check: req, seen });
      } catch (e) {
        if (!(e instanceof CoreError && e.code === "input_too_large" && obs.pages.length > 0)) throw e;
        // The event with the pages was more than the core takes: again
        // without them, and the engine records pages_over_cap (the ABI's
        // rule for an oversized check event).
        const { pages: _, ...observed } = req.observed;
        actions = this.step({ type: "check", check: { ...req, observed }, seen, oversized: obs.pages.length });
      }
      let handoff = null;
      for (const a of actions) {
        if (a.action === "append_record") rec = new ContinuityRecord(a.record, JSON.parse(a.record));
        else if (a.action === "hand") {
          handoff = { ...a };
          delete handoff.action;
        }
        else if (a.action === "keep_checkpoint") keep = a.checkpoint;
        else if (a.action === "check_again") again = true;
        else if (a.action === "warn") notice = a.text;
        else throw new PreflightError(`crawlcheck: an action of the session engine this host does not know: ${this.cc.shown(a.action)}`);
      }
      Object.defineProperty(rec, "handoff", { value: handoff, enumerable: false });
    } catch (e) {
      throw new PreflightError(`crawlcheck: continuity check: ${e instanceof CoreError ? `${e.code}: ${this.cc.shown(e.coreMessage)}` : e.message}`, { cause: e });
    }
    this.log?.append(rec);
    this.uploader?.kick();
    if (keep) this.kept?.keep(keep);
    this.prev = rec.record_sha256;
    this.records.push(rec);
    if (this.records.length > MAX_KEPT_RECORDS) this.records.splice(0, this.records.length - MAX_KEPT_RECORDS);
    this.cont.onRecord?.(rec);
    // Observe mode withholds nothing: a person is told on console.warn
    // what enforce would have refused, the engine's words, once for each
    // distinct would.
    if (notice) console.warn(notice);
    return [rec, recordedConsultation(cons, rec), again];
  }

  /** The handoff's instructions of the newest record, undefined for none. */
  instructions() {
    const handed = this.record?.handoff?.instructions;
    return typeof handed === "string" ? handed : undefined;
  }

  /**
   * Whether a call of name may reach the server: the engine answers by the
   * newest record, the rec a caller read from gate() with no await between.
   */
  allowed(rec, name) {
    if (typeof name !== "string") return false;
    const [a] = this.step({ type: "call", name });
    return a.action === "allow";
  }

  /**
   * Brings the check up to date with the server's list_changed
   * notifications and returns the record with the observation it was made
   * from, or throws what every call gets while the session is stopped.
   */
  async gate() {
    if (!this.connected) throw new PreflightError("crawlcheck: the client is not connected");
    const a = await this.serial(() => this.upToDate());
    if (this.err) throw this.err;
    const rec = this.record;
    // Nothing is handed over or called unless the engine allows it (the
    // session proceeds).
    if (a.action !== "allow") throw new ContinuityRefused(a.text, { effect: rec.effect, record: rec });
    return { rec, obs: this.obs };
  }

  refusedTool(rec, name) {
    const effect = Object.hasOwn(rec.tools, name) ? rec.tools[name] : null;
    return new ContinuityRefused(this.refusalText(rec, String(name)), { tool: name, effect, record: rec });
  }

  /** The core's words for a refusal (refusal): the effect, the observations, what differed. */
  refusalText(rec, tool) {
    const req = { record: enc.encode(rec.raw) };
    if (tool !== undefined) req.tool = tool;
    return this.cc.refusal(req).text;
  }

  /**
   * The tools the core's handoff of rec lets the model be offered: each the
   * object the core wrote from what it hashed, never this host's parse of a
   * page (issue 18). A plain object holds every tool the core wrote: none
   * is left out here (a typed SDK's is the engine's unheld event).
   */
  toolsOf(rec) {
    return (rec.handoff?.tools ?? []).map((h) => JSON.parse(h.tool));
  }

  /**
   * Re-approves the current record's tool list through the core's approve
   * op, writes the lockfile atomically (signed with signingKey when set)
   * and checks the same pages against it. instructions approves a change
   * of the server's instructions too (approve_instructions): the person
   * was shown its word diff; the core then pins the observed handshake.
   * features approves the prompts, resources, resource templates and
   * ui:// templates as offered now (approve_features): the person was
   * shown each changed item and its scan; the core pins them from the
   * observation the record was made from (its features), which is the
   * reading the items were shown from.
   */
  confirm(names, { instructions = false, features = false } = {}) {
    return this.serial(async () => {
      if (this.err) throw this.err;
      const rec = this.record;
      const obs = this.obs;
      if (!rec) throw new PreflightError("crawlcheck: confirm: no record yet");
      if (!this.lockPath) throw new PreflightError("crawlcheck: confirm: the lockfile was given as bytes; give its path to rewrite it");
      const observed = observedRequest(obs);
      const req = { record: enc.encode(rec.raw), lock: this.lock, names, approved_at: this.nowText() };
      if (instructions || features) {
        // The instructions and items approved are the ones the handshake
        // and the lists gave: the core reads them of the observed facts.
        req.observed = observed;
        if (instructions) req.approve_instructions = true;
        if (features) req.approve_features = true;
      } else {
        if (observed.pages) req.pages = observed.pages;
        if (observed.page_cap_reached) req.page_cap_reached = true;
      }
      if (this.cont.serverName) req.server_name = this.cont.serverName;
      let a;
      try {
        a = this.cc.approve(req);
      } catch (e) {
        throw new PreflightError(`crawlcheck: confirm: ${e instanceof CoreError ? `${e.code}: ${this.cc.shown(e.coreMessage)}` : e.message}`, { cause: e });
      }
      if (!a.approved) {
        const unnamed = (a.unnamed ?? []).map((u) => (u.tool === null ? u.observation : `${this.cc.shown(u.tool)} (${u.observation})`));
        const parts = [this.cc.shown(a.reason ?? "not approved")];
        if (unnamed.length) parts.push(`also changed: ${unnamed.join(", ")}`);
        if (a.not_changed?.length) parts.push(`no change to approve: ${a.not_changed.map((n) => this.cc.shown(n)).join(", ")}`);
        throw new PreflightError(`crawlcheck: confirm: not approved; ${parts.join("; ")} (record ${rec.record_sha256})`);
      }
      let lock = a.lock;
      if (this.cont.signingKey) {
        // The core's sign_lock refuses an agentgate.lock (lock_unsupported).
        try {
          lock = this.cc.signLock({ lock: enc.encode(lock), private_key: this.cont.signingKey }).lock;
        } catch (e) {
          throw new PreflightError(`crawlcheck: confirm: ${e instanceof CoreError ? `${e.code}: ${this.cc.shown(e.coreMessage)}` : e.message}`, { cause: e });
        }
      }
      const bytes = enc.encode(lock);
      writeFileAtomic(this.lockPath, bytes, 0o644);
      this.lock = bytes;
      // The proof beside the lockfile was of the one just replaced: the
      // issuer's log holds no entry of the new one.
      if (this.proof) {
        rmSync(proofPath(this.lockPath), { force: true });
        this.proof = "";
      }
      try {
        // A check_again is followed here as after every check.
        let [next, cons, again] = await this.check(obs, this.seen);
        if (again) {
          const seen = this.cap.rec.listChanged;
          const fresh = await this.observe();
          [next, cons] = await this.check(fresh, seen);
          this.obs = fresh;
          this.seen = seen;
        }
        this.record = next;
        this.consultation = cons;
        this.err = null;
        return next;
      } catch (e) {
        this.err = e;
        throw e;
      }
    });
  }
}

/**
 * Wraps an official MCP client (before connect) so that its tools pass a
 * continuity check against the approved lockfile. The client is returned,
 * changed in place: connect checks after the handshake, listTools answers
 * the checked tools the record lets through, callTool refuses the others
 * with ContinuityRefused, and client.continuity holds the records,
 * confirm() and recheck().
 *
 * @template C
 * @param {C} client a Client of @modelcontextprotocol/sdk 1.x or @modelcontextprotocol/client 2.x
 * @param {{lock: string|URL|Uint8Array, continuity?: object}} options
 * @returns {C}
 */
export function withPreflight(client, { lock, continuity = {} } = {}) {
  if (!client || typeof client.connect !== "function" || typeof client.callTool !== "function") {
    throw new TypeError("crawlcheck: withPreflight needs an MCP Client (before connect)");
  }
  if (client.continuity) throw new PreflightError("crawlcheck: this client already has a preflight");
  const g = new Gate(client, lock, continuity);
  // The module is read and compiled from now on, while the caller builds
  // its transport (connect waits for it; a failure is connect's).
  load(continuity.core).catch(() => {});
  const orig = {
    connect: client.connect,
    listTools: client.listTools,
    callTool: client.callTool,
    close: client.close,
    request: client.request,
  };
  g.listPage = pageLister(client, orig);
  // listPrompts, getPrompt, listResources, listResourceTemplates and
  // readResource answer what the record covers (features.js).
  installFeatures(client, g, orig.request);

  client.connect = async function (transport, opts) {
    if (g.connected || g.cap) throw new PreflightError("crawlcheck: this client was already connected once");
    await g.open();
    g.attach(transport);
    await g.handshake(() => orig.connect.call(this, transport, opts));
    try {
      await g.start();
    } catch (e) {
      g.err = e;
      await this.close();
      throw e;
    }
  };

  client.listTools = async function (params) {
    if (params?.cursor !== undefined) throw new PreflightError(`crawlcheck: unknown cursor ${JSON.stringify(g.cc.shown(String(params.cursor)))}: listTools answers in one page`);
    const { rec, obs } = await g.gate();
    return { tools: g.toolsOf(rec, obs) };
  };

  // Refused before the SDK is asked (a paused session whose transport is
  // gone still answers with the record); the call then crosses the wire
  // gate (gateSends) too.
  client.callTool = async function (params, ...rest) {
    if (!params || typeof params.name !== "string") throw new TypeError("crawlcheck: callTool names no tool");
    await g.admit(params.name);
    return orig.callTool.call(this, params, ...rest);
  };

  // A 1.x request tied to a task (options.relatedTask) is queued for
  // delivery inside a later answer, not sent, so the wire gate would not
  // see it: such a tools/call is refused before the SDK takes it.
  client.request = async function (req, ...rest) {
    if (req?.method === "tools/call" && rest.some((o) => o && typeof o === "object" && o.relatedTask)) await g.admit(req.params?.name);
    return orig.request.call(this, req, ...rest);
  };

  client.close = async function (...a) {
    g.closed = true;
    g.connected = false;
    clearTimeout(g.recheckTimer);
    try {
      return await orig.close.call(this, ...a);
    } finally {
      g.shutdown();
    }
  };

  // The server's instructions a framework reads are the core's handoff
  // (the bytes it covered, or none), never the SDK's own parse of the
  // handshake answer.
  client.getInstructions = function () {
    return g.instructions();
  };

  client.continuity = continuityApi(g);
  return client;
}

/**
 * One tools/list page through the SDK, with an explicit cursor so that a
 * 2.x client neither aggregates pages nor answers from its cache.
 */
function pageLister(client, orig = client) {
  const modern = typeof client.getNegotiatedProtocolVersion === "function";
  return modern
    ? (params, opts) => orig.request.call(client, { method: "tools/list", params }, opts)
    : (params, opts) => orig.listTools.call(client, params, opts);
}

/**
 * A preflight on a client an agent framework has already connected (its
 * handshake was not seen: the record's handshake facts are what the client
 * kept of it). The capture starts now, before the first check's listing.
 * @returns {Promise<Gate>}
 */
export async function preflightConnected(client, transport, lock, continuity) {
  if (!client || !transport) throw new PreflightError("crawlcheck: the MCP server is not connected: connect it first");
  const g = new Gate(client, lock, continuity);
  g.listPage = pageLister(client);
  await g.open();
  g.attach(transport);
  await g.start();
  return g;
}

/**
 * A preflight on a session an adapter makes through its framework, which
 * sees the handshake as withPreflight does: the lockfile is read before any
 * byte is sent, then connecting(capture) runs the framework's connect,
 * calling capture(transport) with the transport before the handshake
 * starts on it, and resolves to the connected client. The records are
 * those of withPreflight on that client (byte-identical to the Go
 * preflight's and the CLI's).
 * @param {(capture: (transport: object) => void) => Promise<object>} connecting
 * @returns {Promise<Gate>}
 */
export async function preflightConnecting(lock, continuity, connecting) {
  const g = new Gate(null, lock, continuity);
  await g.open();
  const client = await g.handshake(() => connecting((transport) => g.attach(transport)));
  if (!g.cap) {
    // The framework connected without handing its transport over (a
    // version whose connect this adapter does not know): a check blind to
    // the handshake is not what the caller asked for.
    g.shutdown();
    throw new PreflightError("crawlcheck: the framework connected without the capture seeing its transport; connect it first to check a connected session (blind to the handshake)");
  }
  g.client = client;
  g.listPage = pageLister(client);
  try {
    await g.start();
  } catch (e) {
    g.err = e;
    await Promise.resolve(g.transport.close?.()).catch(() => {});
    g.shutdown();
    throw e;
  }
  return g;
}

/** What a client (or adapter) exposes as .continuity. */
export function continuityApi(g) {
  return {
    /** The session's newest records (MAX_KEPT_RECORDS at most), oldest first; the log holds every one. */
    get records() {
      return g.records;
    },
    /** The newest record. */
    get record() {
      return g.record;
    },
    /** What the issuer gave the newest record (service path), or null. */
    get consultation() {
      return g.consultation;
    },
    /**
     * The bounds this session's checks apply, once connected: the caller's
     * maxAnswerBytes and timeout, else the core's limits (version's
     * limits member); the issuer's deadline likewise.
     */
    get limits() {
      return { maxAnswerBytes: g.maxAnswerBytes, timeout: g.timeout, issuerTimeout: g.issuer?.timeout ?? null };
    },
    /**
     * The server's instructions the model may be given: the newest record's
     * handoff (its instructions, the bytes the core covered), undefined when
     * it gives none (not covered, changed, or the session does not proceed).
     */
    get instructions() {
      return g.instructions();
    },
    /** Re-approves the named tools' changes (a person's act) and returns the new record. */
    confirm: (...names) => g.confirm(names),
    /**
     * confirm that also approves a change of the server's instructions
     * (instructions_changed): the person was shown the record's
     * instructions_diff, escaped, and approved it with the tools named.
     */
    confirmInstructions: (...names) => g.confirm(names, { instructions: true }),
    /**
     * confirm that also approves the prompts, resources, resource templates
     * and ui:// templates as offered now (the core's approve_features): the
     * person was shown each changed item, escaped, with its scan, and
     * approved them with the tools named.
     */
    confirmFeatures: (...names) => g.confirm(names, { features: true }),
    /** Observes and checks again, whether or not the server announced a change. */
    recheck: () =>
      g.serial(async () => {
        await g.recheck().catch((e) => {
          g.err = e;
          throw e;
        });
        return g.record;
      }),
    /** The tools of the checked list the record lets through (what listTools answers). */
    tools: async () => {
      const { rec, obs } = await g.gate();
      return g.toolsOf(rec, obs);
    },
    /** Throws ContinuityRefused unless the record lets the tool through. */
    assertAllowed: (name) => g.admit(name),
  };
}

/** The endpoint string a record carries (the core's endpoint op): the URL as given, or "stdio:" and the command line. */
export function endpointOf(cc, req) {
  return cc.endpoint(req).endpoint;
}
