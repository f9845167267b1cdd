// Observing a server: the facts a continuity check is made on (the
// handshake, every tools/list page as received, why the walk stopped, a
// failure), and nothing else. The walk is the session engine's (docs/abi.md,
// The session engine: the handshake and page events): this host sends what
// arrived and reads the page the engine asks for, as the Go preflight's
// Observe does, so that the same server gives the same request to the core.

import { CrawlcheckError } from "./errors.js";
import { utf8 } from "./frames.js";
import { CoreError, RawJSON, toBase64 } from "./core.js";

/**
 * Capture failures: the SDK produced a tools/list answer the capture did not
 * see on the wire (its own list cache, or an answer the capture missed), so
 * nothing was observed. Codes the core words behind capture_failed, with no
 * failureAt: they say nothing of where.
 */
export const FAULT_LIST_CACHED = "list_cached";
export const FAULT_NOT_CAPTURED = "answer_not_captured";
/**
 * A frame went past maxAnswerBytes and was cut off; failureDetail is the
 * limit in bytes (decimal), from which the core words the record's
 * server_unavailable detail, as for the Go preflight.
 */
export const FAILURE_TOO_LARGE = "answer_too_large";

/**
 * Host faults: what went wrong at the transport, as codes the core words
 * (docs/continuity.md, Host faults), so that a down server or a timeout gives
 * the same record bytes as the Go and Python preflights. An Observation with
 * one says where (failureAt, failurePage) and has no failureDetail: the
 * SDK's error text never reaches a record.
 */
export const FAULT_CONNECT_REFUSED = "connect_refused";
/** No program of the stdio command's name exists (a mistyped command). */
export const FAULT_COMMAND_NOT_FOUND = "command_not_found";
export const FAULT_TIMEOUT = "timeout";
export const FAULT_PROCESS_EXITED = "process_exited";
export const FAULT_SESSION_ENDED = "session_ended";
export const FAULT_SESSION_FAILED = "session_failed";
/** The server answered HTTP 401 (Observation.resourceMetadata: the URL its WWW-Authenticate named). */
export const FAULT_UNAUTHORIZED = "unauthorized";
/** The server answered HTTP 403 (Observation.resourceMetadata as for FAULT_UNAUTHORIZED). */
export const FAULT_FORBIDDEN = "forbidden";
/** The pages so far are more bytes together than one check carries (the core's limits.pages_bytes). */
export const FAULT_PAGES_OVER_CAP = "pages_over_cap";

/**
 * The fault that failed a request, from what the deadline and the
 * transport saw; err, the SDK's, decides only whether the connection closed
 * (the SDK's own code, 1.x and 2.x), and its text goes nowhere. An answer
 * cut off at the limit is FAILURE_TOO_LARGE, its detail the limit.
 * @returns {{failure: string, detail: string}}
 */
export function classify(rec, signal, err) {
  if (rec.oversize !== "") return { failure: FAILURE_TOO_LARGE, detail: rec.oversize };
  if (signal.aborted) return { failure: FAULT_TIMEOUT, detail: "" };
  if (rec.fault !== "") return { failure: rec.fault, detail: "" };
  if (err?.code === -32000 || err?.code === "CONNECTION_CLOSED") return { failure: FAULT_SESSION_ENDED, detail: "" };
  return { failure: FAULT_SESSION_FAILED, detail: "" };
}

/**
 * The resource metadata URL of an auth fault recorded as failure (the
 * capture's, when failure is the fault it saw), "" for any other.
 */
export function metadataOf(rec, failure) {
  return (failure === FAULT_UNAUTHORIZED || failure === FAULT_FORBIDDEN) && failure === rec.fault ? rec.resourceMetadata : "";
}

/**
 * @typedef {object} Observation
 * @property {string} endpoint
 * @property {string} handshake "initialize", "server/discover" or ""
 * @property {string} protocolVersion
 * @property {Uint8Array|null} serverInfo the verbatim serverInfo bytes
 * @property {object|null} clientCapabilities what the client declared (initialize, or a 2026-07-28 request's _meta)
 * @property {Uint8Array[]} pages each tools/list answer as received
 * @property {string} stop why the walk ended, the core's next_page answer ("" when a failure ended it)
 * @property {boolean} pageCapReached the walk ended at the page cap (next_page's answer)
 * @property {string} failure "", a FAULT_* code or FAILURE_TOO_LARGE
 * @property {string} failureDetail FAILURE_TOO_LARGE's limit; "" with a fault
 * @property {string} failureAt where a fault happened: "handshake" or "tools/list" ("" for a capture failure)
 * @property {number} failurePage the tools/list page of a fault (from 1), 0 in the handshake
 * @property {number} timeoutMs the check's deadline, named in a timeout's record
 * @property {string} [command] the program a command_not_found could not find
 * @property {number|null} [exitStatus] a process_exited child's exit status, when known
 * @property {string} [stderrTail] the end of a process_exited child's stderr (when piped)
 * @property {string} [resourceMetadata] with FAULT_UNAUTHORIZED or FAULT_FORBIDDEN: the resource metadata URL the server's WWW-Authenticate named, "" for none
 * @property {number} strayLines stdio lines that were no JSON-RPC message, skipped (docs/mcpserver.md, Stray lines)
 */

/**
 * The observation's facts of the host's own: the endpoint, the capabilities
 * the client declared, the stray lines so far, and (an adapter, whose client
 * connected before the capture) the serverInfo the client kept. The rest is
 * the engine's, at the walk's end (observePages, endWalk).
 */
export function hostFacts(cap, endpoint, client) {
  const obs = { endpoint, handshake: "", protocolVersion: "", serverInfo: null, handshakeResult: null, clientCapabilities: null, pages: [], stop: "", pageCapReached: false, failure: "", failureDetail: "", failureAt: "", failurePage: 0, timeoutMs: 0, strayLines: cap.rec.strayLines };
  // What the client declared: as sent, or what both SDK majors keep of it.
  obs.clientCapabilities = cap.rec.clientCaps;
  if (obs.clientCapabilities === null && client && client._capabilities && typeof client._capabilities === "object") obs.clientCapabilities = client._capabilities;
  if (cap.rec.handshake().method === "" && client && typeof client.getServerVersion === "function") {
    // The handshake happened before the capture: the serverInfo the client
    // kept, not the bytes received (the engine has none to read).
    const info = client.getServerVersion();
    if (info && typeof info === "object") obs.serverInfo = new TextEncoder().encode(JSON.stringify(info));
  }
  return obs;
}

/**
 * The engine's handshake event: the handshake's answer as the capture saw
 * it (its result's bytes), the version the SDK settled on, and the page cap
 * (undefined: the core's default).
 */
export function handshakeEvent(cap, client, pageCap) {
  const { method, result } = cap.rec.handshake();
  const ev = { type: "handshake" };
  if (method) {
    ev.handshake = method;
    if (result) ev.result = result;
  }
  const negotiated = client && typeof client.getNegotiatedProtocolVersion === "function" ? client.getNegotiatedProtocolVersion() : sdkVersion(client, method, result);
  if (typeof negotiated === "string" && negotiated !== "") ev.negotiated = negotiated;
  if (pageCap !== undefined) ev.page_cap = pageCap;
  return ev;
}

/**
 * The version SDK 1.x settled on, which it keeps nowhere a host can ask:
 * its own JSON.parse of the initialize answer's bytes (the SDK reads them so,
 * last member of a repeated name winning), as the Go preflight takes
 * go-sdk's and SDK 2.x its getter's. The engine reads the same answer
 * strictly, and an answer that repeats a key gives it no version of its
 * own (docs/decisions.md, Issue 33 (engine, handshake and pages)).
 */
function sdkVersion(client, method, result) {
  if (!client || method !== "initialize" || !result) return undefined;
  try {
    return JSON.parse(new TextDecoder().decode(result))?.protocolVersion;
  } catch {
    return undefined;
  }
}

/**
 * A fault as the engine's events take it: the code and the facts only the
 * transport knows; where it happened, and which facts the record carries,
 * are the engine's.
 */
export function faultEvent(rec, failure, detail, timeoutMs) {
  const f = { failure };
  if (detail) f.failure_detail = detail;
  const md = metadataOf(rec, failure);
  if (md) f.resource_metadata = md;
  if (timeoutMs > 0) f.timeout_ms = timeoutMs;
  return f;
}

/**
 * Writes the engine's observed action into obs: its facts, the handshake's
 * result bytes when it says so, and the first `pages` pages read.
 */
export function endWalk(obs, a, pages, result) {
  const o = a.observed;
  obs.handshake = o.handshake ?? "";
  obs.protocolVersion = o.protocol_version ?? "";
  obs.pageCapReached = o.page_cap_reached === true;
  obs.failure = o.failure ?? "";
  obs.failureDetail = o.failure_detail ?? "";
  obs.failureAt = o.failure_at ?? "";
  obs.failurePage = o.failure_page ?? 0;
  obs.resourceMetadata = o.resource_metadata ?? "";
  if (o.timeout_ms !== undefined) obs.timeoutMs = o.timeout_ms;
  if (o.failure_command !== undefined) obs.command = o.failure_command;
  if (o.exit_status !== undefined) obs.exitStatus = o.exit_status;
  if (o.stderr_tail !== undefined) obs.stderrTail = o.stderr_tail;
  obs.handshakeResult = a.handshake_result ? result : null;
  obs.pages = a.pages === null ? [] : pages.slice(0, a.pages);
  obs.stop = a.stop ?? "";
  return obs;
}

/**
 * The session engine's step for one walk, in a state of its own: a walk
 * needs none of the session's state, and the session's holds its newest
 * record, which every page's step would otherwise read and write again.
 * @param {import("./core.js").Core} cc the core
 * @returns {(event: object) => object[]} the step: an event in, the actions out
 */
export function walker(cc) {
  let state = null;
  return (event) => {
    const answer = cc.sessionStep(state === null ? { event } : { event, state: new TextEncoder().encode(state) });
    state = answer.state;
    return answer.actions;
  };
}

/**
 * Reads the tools/list pages of a connected session as the session engine
 * asks: the handshake event, then each page it asks for (read_page), until
 * it answers the observation (observed). No rule of when to stop lives here.
 * @param {object} o
 * @param {(event: object) => object[]} o.step the engine's step for this walk (walker())
 * @param {object} o.cap the capture (attach())
 * @param {(params: object, options: object) => Promise<unknown>} o.listPage sends one tools/list through the SDK
 * @param {Observation} o.obs the host's facts (hostFacts), filled in here
 * @param {object} o.handshake the handshake event (handshakeEvent)
 * @param {number} o.timeoutMs the check's deadline, which a timeout's record names
 * @param {AbortSignal} o.signal the check's deadline
 */
export async function observePages(o) {
  try {
    return await walkPages(o);
  } finally {
    // The lines skipped up to the check's end: the core records them.
    o.obs.strayLines = o.cap.rec.strayLines;
  }
}

async function walkPages({ step, cap, listPage, obs, handshake, timeoutMs, signal }) {
  const pages = [];
  let [a] = step(handshake);
  while (a.action === "read_page") {
    const { page, failure, detail } = await fetchPage(cap, listPage, a.cursor ?? undefined, signal);
    if (failure) {
      [a] = step({ type: "page", fault: faultEvent(cap.rec, failure, detail, timeoutMs) });
      continue;
    }
    pages.push(page);
    try {
      [a] = step({ type: "page", page });
    } catch (e) {
      if (!(e instanceof CoreError && e.code === "input_too_large")) throw e;
      // A page as large as a request: the engine records pages_over_cap.
      [a] = step({ type: "page", oversized: true });
    }
  }
  if (a.action !== "observed") throw new CrawlcheckError(`crawlcheck: the session engine answered a walk with ${a.action}`);
  return endWalk(obs, a, pages, handshake.result ?? null);
}

// fetchPage sends one tools/list through the SDK and returns the answer
// captured on the wire.
function fetchPage(cap, listPage, cursor, signal) {
  const params = cursor === undefined ? {} : { cursor };
  return fetchAnswer(cap, "tools/list", (options) => listPage(params, options), signal);
}

/**
 * Sends one request of method through the SDK (send, given the SDK's
 * request options) and returns the answer captured on the wire as {page}
 * (its result member's bytes, or the whole frame), or the fault that kept
 * it from arriving ({failure, detail}). An answer that names the call's id
 * is left for the SDK to finish; one the SDK cannot route (not JSON, no
 * id, a wrong id) would leave it waiting, so that call is abandoned at once.
 */
export async function fetchAnswer(cap, method, send, signal) {
  const rec = cap.rec;
  const mark = rec.count(method);
  const abandon = new AbortController();
  // One listener on the check's deadline per request, removed at its end:
  // a check sends many (the tool pages, then the features' reads).
  let stop;
  const stopped = new Promise((resolve) => (stop = resolve));
  const onAbort = () => {
    abandon.abort(signal.reason);
    stop();
  };
  if (signal.aborted) stop();
  signal.addEventListener("abort", onAbort, { once: true });
  let sdkDone = false;
  let sdkErr = null;
  const sdk = Promise.resolve()
    .then(() => send({ signal: abandon.signal, timeout: 2 ** 31 - 1 }))
    .then(
      () => {
        sdkDone = true;
      },
      (e) => {
        sdkDone = true;
        sdkErr = e;
      },
    );
  try {
    for (;;) {
      const wake = rec.changed();
      const c = rec.nth(method, mark);
      if (c && c.answer !== null) {
        if (!c.matched) abandon.abort(new CrawlcheckError("crawlcheck: the answer could not be routed"));
        if (!sdkDone) await Promise.race([sdk, stopped]).catch(() => {});
        // A view of the answer's own copy (the capture's), not copied again.
        const page = pageOf(c);
        rec.release(c);
        return { page };
      }
      if (rec.oversize !== "") {
        abandon.abort(new CrawlcheckError("crawlcheck: an answer went past the limit"));
        return classify(rec, signal, null);
      }
      if (sdkDone) {
        if (signal.aborted || sdkErr !== null) return classify(rec, signal, sdkErr);
        if (c === null) return { failure: FAULT_LIST_CACHED, detail: "" };
        return { failure: FAULT_NOT_CAPTURED, detail: "" };
      }
      if (signal.aborted) {
        abandon.abort(signal.reason);
        return classify(rec, signal, null);
      }
      await Promise.race([wake, sdk, stopped]);
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

/**
 * The page a tools/list call's answer carries: its result member's bytes
 * when the frame is an object with a result member, else the whole frame
 * (the core refuses it as malformed and says why). The members are the
 * ones the capture read as the frame arrived.
 */
export function pageOf(call) {
  return call.fields?.get("result") ?? call.answer;
}


/**
 * The request's observed member: the facts as the capture saw them. Pages
 * stay bytes (attachments on ABI 2). The failure goes as it is, a code
 * (a capture failure included): the core decides how a record carries it.
 */
export function observedRequest(o) {
  const out = {};
  if (o.endpoint) out.endpoint = o.endpoint;
  if (o.protocolVersion) out.protocol_version = o.protocolVersion;
  if (o.handshakeResult) out.handshake_result = o.handshakeResult;
  else if (o.serverInfo !== null) out.server_info = new RawJSON(o.serverInfo);
  if (o.handshake) out.handshake = o.handshake;
  if (o.clientCapabilities) out.client_capabilities = o.clientCapabilities;
  if (o.pages.length > 0 || !o.failure) out.pages = o.pages;
  if (o.pageCapReached) out.page_cap_reached = true;
  if (o.strayLines > 0) out.stray_lines = o.strayLines;
  // The prompts, resources, templates and UI templates read (features.js),
  // already in the request's form.
  if (o.features) out.features = o.features;
  if (o.failure) {
    out.failure = o.failure;
    if (o.failureDetail) out.failure_detail = o.failureDetail;
    if (o.failureAt) out.failure_at = o.failureAt;
    if (o.failurePage > 0) out.failure_page = o.failurePage;
    if (o.resourceMetadata) out.resource_metadata = o.resourceMetadata;
    if (o.failure === FAULT_TIMEOUT && o.timeoutMs > 0) out.timeout_ms = o.timeoutMs;
    if (o.failure === FAULT_COMMAND_NOT_FOUND) out.failure_command = o.command ?? "";
    // At the handshake only, as every host: whether the child has been
    // reaped at a later fault is a race (docs/continuity.md, Host faults).
    if (o.failure === FAULT_PROCESS_EXITED && o.failureAt === "handshake") {
      if (Number.isInteger(o.exitStatus)) out.exit_status = o.exitStatus;
      if (o.stderrTail) out.stderr_tail = o.stderrTail;
    }
  }
  return out;
}

/** Pages as the issuer's request takes them: a string, or {"base64": …}. */
export function pagesForWire(pages) {
  return pages.map((p) => {
    const t = utf8(p);
    return t === null ? { base64: toBase64(p) } : t;
  });
}
