// The service path (docs/receipts.md, "Service path for SDKs"): before the
// continuity check, the issuer is asked for a signed lock check of exactly
// the pages the host read; the core's guard judges the receipt against the
// deployment's own keys, policy and replay state; guard's observations go
// into the check as evidence. The same steps as bindings/go/preflight's IssuerClient.

import { CrawlcheckError } from "./errors.js";
import { readRegularFile } from "./files.js";
import { readCapped } from "./bounded.js";
import { writeFileAtomic } from "./log.js";
import { pagesForWire } from "./observe.js";
import { CoreError, RawJSON } from "./core.js";
import { DIAL_CODES } from "./capture.js";

/**
 * A request to the issuer that gave nothing to judge: the fault the core
 * words (continuity_check's issuer fault: connect_refused, timeout,
 * session_ended, http_status with the status, answer_too_large; the
 * core's guard says response_malformed and keys_invalid), never the
 * fetch's error text; the
 * message is for a person (log reconciliation, which makes no record).
 */
class IssuerFault extends CrawlcheckError {
  constructor(what, fault, status = 0) {
    super(`${what}: ${fault}${status ? ` ${status}` : ""}`);
    this.fault = fault;
    this.status = status;
  }
}


/** Where the replay state of a record log is kept: next to the log. */
export const nonceStatePath = (logPath) => `${logPath}.issuer-nonces.json`;

export class IssuerClient {
  #seen = [];

  /**
   * @param {import("./core.js").Core} cc
   * @param {{url: string, pinnedKeys?: {kid: string, public_key: string}[], timeout?: number, fetch?: typeof fetch}} cfg
   * @param {Uint8Array|null} keyDirectory the operator's copy of the issuer's key directory
   * @param {string} statePath "" keeps the replay state in memory only
   */
  constructor(cc, cfg, keyDirectory, statePath) {
    this.cc = cc;
    let u;
    try {
      u = new URL(cfg.url);
    } catch {
      u = null;
    }
    if (!u || (u.protocol !== "http:" && u.protocol !== "https:")) throw new CrawlcheckError(`crawlcheck: issuer URL ${JSON.stringify(cfg.url)}: not an http(s) URL`);
    const pins = cfg.pinnedKeys ?? [];
    if (!keyDirectory && pins.length === 0) {
      throw new CrawlcheckError("crawlcheck: issuer: no key to judge its answers by: give the operator's copy of its key directory, or pin its keys");
    }
    for (const k of pins) {
      if (!k?.kid || !k?.public_key) throw new CrawlcheckError("crawlcheck: issuer: a pinned key needs both kid and public_key");
    }
    this.url = String(cfg.url).replace(/\/$/, "");
    this.pins = pins.map((k) => ({ kid: k.kid, public_key: k.public_key }));
    this.timeout = cfg.timeout > 0 ? cfg.timeout : cc.limits.issuer_timeout_ms;
    this.maxAnswer = cc.limits.issuer_answer_bytes;
    this.fetch = cfg.fetch ?? ((...a) => globalThis.fetch(...a));
    this.directory = keyDirectory;
    this.statePath = statePath;
    if (!statePath) return;
    let file;
    try {
      // A document the core reads: bounded by its request cap.
      file = readRegularFile(statePath, cc.limits.request_bytes);
    } catch (e) {
      if (e.code === "ENOENT") return;
      throw new CrawlcheckError(`crawlcheck: issuer replay state: ${e.message}`, { cause: e });
    }
    // The file's format is the core's (replay_state).
    try {
      this.#seen = cc.replayState({ file }).seen_nonces;
    } catch (e) {
      const why = e instanceof CoreError ? cc.shown(e.coreMessage) : e.message;
      throw new CrawlcheckError(`crawlcheck: issuer replay state ${statePath}: ${why}; move it aside (replays it recorded would go unseen)`, { cause: e });
    }
  }

  /**
   * Asks the issuer about the observation and judges its answer with the
   * core's guard. Throws when the question could not be put at all (the
   * deployment's own lockfile, policy or key directory refused by guard, a
   * replay state that cannot be written): there must be no record then.
   * @returns {Promise<Consultation>}
   */
  async consult({ lock, serverName, policy, obs, now, observedPages }) {
    if (!obs.endpoint) throw new CrawlcheckError("crawlcheck: issuer: the observation names no endpoint for a receipt to speak about");
    const whole = this.#wholeList(obs, observedPages);
    if (!whole) return { asked: false, pins: this.pins };
    const deadline = AbortSignal.timeout(this.timeout);

    // Without the operator's copy, the issuer's own directory is fetched;
    // guard keeps of it only the pinned keys (fetched_key_directory).
    let fetched = null;
    if (!this.directory) {
      try {
        fetched = await this.#get("/api/v1/keys", deadline);
      } catch (e) {
        return this.#unavailable("key_directory", this.#faultOf(e));
      }
    }

    const body = { lock: new TextDecoder().decode(lock), pages: pagesForWire(obs.pages), subject: obs.endpoint };
    if (serverName) body.server_name = serverName;
    let answer;
    try {
      answer = await this.#post("/api/v1/mcp/lock/check", body, deadline);
    } catch (e) {
      return { ...this.#unavailable("lock_check", this.#faultOf(e)), fetched };
    }

    const req = {
      receipt: answer,
      expected_subject: obs.endpoint,
      now,
      seen_nonces: this.#seen,
      lock,
      observed_tools_sha256: whole.reading,
    };
    if (this.directory) req.key_directory = this.directory;
    else req.fetched_key_directory = fetched;
    if (this.pins.length > 0) req.pinned_keys = this.pins;
    if (policy) req.policy = policy;
    let raw;
    try {
      raw = this.cc.callResultText("guard", req);
    } catch (e) {
      throw new CrawlcheckError(`crawlcheck: issuer: judging its answer: ${e.message}`, { cause: e });
    }
    const g = JSON.parse(raw);
    if (g.issuer_fault) {
      // Answers that are no answers (guard's issuer_fault): the issuer's
      // garbage, not the deployment's mistake. A directory that is none
      // judges no baseline either.
      const { step, fault } = g.issuer_fault;
      const cons = this.#unavailable(step, { fault });
      return step === "lock_check" ? { ...cons, fetched } : cons;
    }
    this.#keep(g.seen_nonces);
    return {
      asked: true,
      url: this.url,
      unavailable: "",
      guard: raw,
      policyResult: g.policy_result,
      evidenceLevel: g.evidence_level,
      evidence: g.observations ?? [],
      pins: this.pins,
      fetched,
    };
  }

  /**
   * The issuer's answer to GET /api/v1/log/consistency between trees of from
   * and to entries, within its timeout, as it sent it: the core reads the
   * proof out of it (consistency_answer), or finds none.
   */
  async consistency(from, to) {
    const q = new URLSearchParams({ from: String(from), to: String(to) });
    return this.#get(`/api/v1/log/consistency?${q}`, AbortSignal.timeout(this.timeout));
  }

  // The host's own reading of the list (its tools_sha256), or null when
  // there is no whole list to ask about: the session engine's answer
  // (issuer); pages the core cannot take ask nothing either.
  #wholeList(obs, observedPages) {
    const observed = { failure: obs.failure || null, page_cap_reached: !!obs.pageCapReached, pages: observedPages };
    let actions;
    try {
      ({ actions } = this.cc.call("session_step", { event: { type: "issuer", observed } }));
    } catch {
      return null;
    }
    return actions.length ? { reading: actions[0].reading } : null;
  }

  // The consultation of an issuer that gave no answer to judge: the step
  // that failed and the fault, which the core turns into the evidence
  // service_unavailable in its own words (continuity_check's issuer step
  // and fault); its unavailable is the record's (recordedConsultation).
  #unavailable(step, f) {
    return { asked: true, url: this.url, unavailable: "", step, fault: f, guard: null, evidence: [], pins: this.pins, fetched: null };
  }

  // The fault of a failed request, a timeout naming the consultation's
  // deadline; anything #do did not classify reached no issuer.
  #faultOf(e) {
    const f = e instanceof IssuerFault ? { fault: e.fault, status: e.status } : { fault: "connect_refused", status: 0 };
    if (f.fault === "timeout") f.timeoutMs = this.timeout;
    return f;
  }

  #get(path, signal) {
    return this.#do(path, { method: "GET", signal, redirect: "manual" });
  }

  #post(path, body, signal) {
    return this.#do(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body), signal, redirect: "manual" });
  }

  // One request within the consultation's deadline; the body of a 200
  // answer, as it came. Anything else is an IssuerFault: the
  // issuer gave nothing to judge. Redirects are not followed ("manual":
  // Node answers the 3xx itself): the lockfile and the pages would go
  // wherever it points; its status is the fault.
  async #do(path, init) {
    const what = `${init.method} ${path}`;
    // Classified from what the transport saw: the deadline first, then a
    // dial that failed; anything else closed the connection.
    const failed = (e) => new IssuerFault(what, init.signal.aborted ? "timeout" : DIAL_CODES.has(e?.cause?.code) ? "connect_refused" : "session_ended");
    let resp;
    try {
      resp = await this.fetch(this.url + path, init);
    } catch (e) {
      throw failed(e);
    }
    if (resp.status !== 200) {
      await resp.body?.cancel().catch(() => {});
      throw new IssuerFault(what, "http_status", resp.status);
    }
    let body, over;
    try {
      ({ bytes: body, over } = await readCapped(resp.body, this.maxAnswer));
    } catch (e) {
      throw new IssuerFault(what, init.signal.aborted ? "timeout" : "session_ended");
    }
    if (over) throw new IssuerFault(what, "answer_too_large");
    // Whether the body is a JSON object is the core's to say (guard's
    // issuer_fault, continuity_check's consistency_answer).
    return body;
  }

  #keep(seen) {
    if (!Array.isArray(seen)) throw new CrawlcheckError("crawlcheck: issuer: guard's answer holds no seen_nonces");
    const changed = JSON.stringify(seen) !== JSON.stringify(this.#seen);
    this.#seen = seen;
    if (!this.statePath || !changed) return;
    try {
      writeFileAtomic(this.statePath, this.cc.replayState({ seen_nonces: seen }).file, 0o600);
    } catch (e) {
      throw new CrawlcheckError(`crawlcheck: issuer replay state: ${e.message}`, { cause: e });
    }
  }
}

/**
 * Hands the continuity check what a consultation gave it: guard's evidence,
 * the issuer member, the pinned keys and the live directory fetched at this
 * consultation (pinned_keys, fetched_key_directory), so the baseline
 * follows the issuer's rotation as the receipts do (docs/keys.md). The one
 * fetch serves guard and the baseline: both are judged by the same
 * directory. Beside the operator's copy of the directory the core lets the
 * pins judge no baseline.
 */
export function useConsultation(req, c) {
  if (c.asked) {
    if (c.evidence.length > 0) req.evidence = c.evidence;
    req.issuer = issuerTrace(c);
  }
  if (c.pins?.length > 0) req.pinned_keys = c.pins;
  if (c.fetched) req.fetched_key_directory = c.fetched;
}

/**
 * The consultation as rec, the record made with it, tells it: unavailable
 * in the record's words (its issuer.unavailable, the core's), never a
 * host's own wording of the fault.
 */
export function recordedConsultation(c, rec) {
  return c?.asked ? { ...c, unavailable: rec.json.issuer?.unavailable ?? "" } : c;
}

/**
 * What a consultation gives the continuity check's issuer member: the
 * receipt relied on and guard's verdict, or why the issuer could not be
 * asked; null when it was not asked.
 */
export function issuerTrace(c) {
  if (!c?.asked) return null;
  const t = { url: c.url };
  if (c.guard) t.guard = new RawJSON(new TextEncoder().encode(c.guard));
  if (c.step) {
    t.step = c.step;
    t.fault = c.fault.fault;
    if (c.fault.status) t.status = c.fault.status;
    if (c.fault.timeoutMs) t.timeout_ms = c.fault.timeoutMs;
  }
  return t;
}
