// Observing a server: the facts a continuity check is made on (the
// handshake, every tools/list page as received, why the walk stopped (the
// core's next_page answer), a failure), and nothing else. The same steps as bindings/go/preflight's
// Observe, so that the same server gives the same request to the core.

import { CrawlcheckError } from "./errors.js";
import { members, parseMember, utf8 } from "./frames.js";
import { RawJSON, toBase64 } from "./core.js";

/** The bytes as the SDK's JSON.parse reads them, or undefined. */
function sdkParse(b) {
  const text = utf8(b);
  try {
    return text === null ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

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

/** The handshake facts of the capture (and the session's negotiated version). */
export function handshakeFacts(cap, endpoint, client) {
  const obs = { endpoint, handshake: "", protocolVersion: "", serverInfo: null, handshakeResult: null, clientCapabilities: null, pages: [], stop: "", pageCapReached: false, failure: "", failureDetail: "", failureAt: "", failurePage: 0, timeoutMs: 0, strayLines: cap.rec.strayLines };
  // What the client declared: as sent, or (an adapter, whose client
  // connected before the capture) what both SDK majors keep of it.
  obs.clientCapabilities = cap.rec.clientCaps;
  if (obs.clientCapabilities === null && client && client._capabilities && typeof client._capabilities === "object") obs.clientCapabilities = client._capabilities;
  const { method, result } = cap.rec.handshake();
  obs.handshake = method;
  // The bytes the server sent: the core reads serverInfo and instructions
  // of them, and one it cannot read is an observation on the record, never
  // a refused request (issue 22, F6).
  if (method && result) obs.handshakeResult = result;
  const fields = result ? members(result) : null;
  if (method === "initialize") {
    obs.serverInfo = fields?.get("serverInfo") ?? null;
    const v = parseMember(fields, "protocolVersion");
    if (typeof v === "string") obs.protocolVersion = v;
  } else if (method === "server/discover") {
    const meta = fields?.get("_meta") ? members(fields.get("_meta")) : null;
    obs.serverInfo = meta?.get("io.modelcontextprotocol/serverInfo") ?? null;
  }
  if (method === "" && client && typeof client.getServerVersion === "function") {
    // The handshake happened before the capture (an adapter on a connected
    // client): the serverInfo the client kept, not the bytes received.
    const info = client.getServerVersion();
    if (info && typeof info === "object") obs.serverInfo = new TextEncoder().encode(JSON.stringify(info));
  }
  const negotiated = client && typeof client.getNegotiatedProtocolVersion === "function" ? client.getNegotiatedProtocolVersion() : undefined;
  if (typeof negotiated === "string" && negotiated !== "") obs.protocolVersion = negotiated;
  else if (method === "initialize" && result && fields === null) {
    // An answer the strict reader refuses (a repeated key) still set the
    // session's version: SDK 1.x keeps no getter for it, so it is what the
    // SDK's own JSON.parse read of the same bytes, as Go takes go-sdk's
    // and SDK 2.x its getNegotiatedProtocolVersion.
    const v = sdkParse(result)?.protocolVersion;
    if (typeof v === "string") obs.protocolVersion = v;
  }
  return obs;
}

/**
 * Reads every tools/list page of a connected session, following nextCursor
 * as the core's next_page answers after each page: no rule of when to stop
 * lives here.
 * @param {object} o
 * @param {import("./core.js").Core} o.cc the core
 * @param {object} o.cap the capture (attach())
 * @param {(params: object, options: object) => Promise<unknown>} o.listPage sends one tools/list through the SDK
 * @param {Observation} o.obs the handshake facts, filled in here
 * @param {number|undefined} o.pageCap undefined: the core's default
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

async function walkPages({ cc, cap, listPage, obs, pageCap, signal }) {
  let followed = [];
  let cursor;
  // The pages are counted as they arrive: past the core's bound on them
  // together no check could carry them, and a check always leaves a record.
  const maxBytes = cc.limits.pages_bytes;
  let total = 0;
  for (;;) {
    const { page, failure, detail } = await fetchPage(cap, listPage, cursor, signal);
    if (failure) {
      obs.failure = failure;
      obs.failureDetail = detail;
      obs.resourceMetadata = metadataOf(cap.rec, failure);
      if (detail === "" && failure !== FAULT_LIST_CACHED && failure !== FAULT_NOT_CAPTURED) {
        obs.failureAt = "tools/list";
        obs.failurePage = obs.pages.length + 1;
      }
      return obs;
    }
    total += page.length;
    if (total > maxBytes) {
      // None is kept; the record says why (the server's doing).
      overCap(obs, obs.pages.length + 1);
      return obs;
    }
    obs.pages.push(page);
    const req = { page, followed };
    if (pageCap !== undefined) req.page_cap = pageCap;
    let step;
    try {
      step = cc.nextPage(req);
    } catch {
      // The core refused the step itself (a page past its request cap):
      // the walk ends, and the check says what the page is.
      obs.stop = "response_malformed";
      return obs;
    }
    if (step.cursor === null) {
      obs.stop = step.stop;
      obs.pageCapReached = step.page_cap_reached;
      return obs;
    }
    followed = step.followed;
    cursor = step.cursor;
  }
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
 * Makes obs the observation of pages that no check can carry, the fault
 * pages_over_cap at tools/list page n (the core words it): the pages are
 * dropped, as the walk's end with them.
 */
export function overCap(obs, n) {
  Object.assign(obs, { pages: [], stop: "", pageCapReached: false, failure: FAULT_PAGES_OVER_CAP, failureDetail: "", failureAt: "tools/list", failurePage: n });
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
