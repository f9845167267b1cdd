// The capture: every JSON-RPC frame a client session receives, as the bytes
// the server sent, matched to the call that asked for it. Both majors of the
// official TypeScript SDK parse a frame (and drop or reject fields) before
// anything above the transport sees it, so the capture sits below that:
//
// - stdio (StdioClientTransport): the chunks the child's stdout delivers to
//   the transport's read buffer, split into lines as the SDK splits them;
// - streamable HTTP (StreamableHTTPClientTransport): the fetch the transport
//   sends its POSTs and GETs with, each body read as it arrives (an
//   application/json body is one frame, a text/event-stream one frame per
//   event);
// - the legacy HTTP+SSE transport of protocol 2024-11-05 (SSEClientTransport
//   of sdk 1.x): the same fetch, its event stream's message events the
//   frames; a POST's response (202 Accepted) is none, its answer arrives on
//   the stream. The SDK itself refuses a message endpoint of another origin.
//   On a transport already started (an adapter's; client 2.x's
//   SSEClientTransport under @openai/agents) the open stream is read by
//   the SDK's EventSource, and the frames are its message events' data.
//
// Outgoing requests are seen at the transport's send. This is the same
// capture as bindings/go/preflight's Transport (docs/mcpserver.md, The Go capture).
//
// Every frame is bounded (maxAnswerBytes, 16 MiB by default as in Go): a
// longer one is not read further by the capture nor handed to the SDK, the
// transport is closed (the session is broken there), and the observation
// says so (FAILURE_TOO_LARGE, which the core records as server_unavailable).

import { CrawlcheckError } from "./errors.js";
import { load } from "./core.js";
import { capped } from "./bounded.js";
import { idKey, members, parseMember } from "./frames.js";

const enc = new TextEncoder();

/** The answer of a call whose bytes are no longer kept. */
const RELEASED = new Uint8Array(0);

/** One request the client sent, and the frame that answered it. */
class Call {
  constructor(method) {
    this.method = method;
    /** @type {Uint8Array|null} the whole answering frame, verbatim */
    this.answer = null;
    /**
     * @type {Map<string, Uint8Array>|null} the answer's members (frames.js
     * members, slices of answer), null when it is not one JSON object: read
     * once as the frame arrives, so a page is not scanned again to be found
     */
    this.fields = null;
    /** whether the answer named this call's id (the SDK can route it too) */
    this.matched = false;
  }
}

// The calls whose answers the check reads; any other call is forgotten once
// answered, so a long session's tool results are not kept. A
// resources/read's answer is kept only while a read of a ui:// template
// waits for it (Recorder.want, features.js); its call stays counted.
const KEPT = new Set(["tools/list", "initialize", "server/discover", "prompts/list", "resources/list", "resources/templates/list", "resources/read"]);
const WANTED_ONLY = new Set(["resources/read"]);

/** The _meta member a 2026-07-28 request declares the client's capabilities in. */
const META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";

const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * The client capabilities a request declares: initialize's
 * params.capabilities, or the params._meta member of a 2026-07-28
 * request; null when it declares none.
 */
function declaredCapabilities(message) {
  const meta = message.params?._meta?.[META_CLIENT_CAPABILITIES];
  if (isObject(meta)) return meta;
  if (message.method === "initialize" && isObject(message.params?.capabilities)) return message.params.capabilities;
  return null;
}

export class Recorder {
  /** @param {number} maxAnswerBytes the largest frame taken from the server */
  constructor(maxAnswerBytes) {
    /** @type {Call[]} */
    this.calls = [];
    this.byId = new Map();
    this.listChanged = 0;
    this.waiters = new Set();
    /** called on every notifications/tools/list_changed */
    this.onListChanged = null;
    /** the largest frame taken from the server */
    this.limit = maxAnswerBytes;
    /** the limit a frame went past (decimal bytes, the core's failure_detail), "" if none did */
    this.oversize = "";
    /** called once, when a frame first goes past the limit */
    this.onTooLarge = null;
    /** the capabilities the newest request declaring any declared, null if none did */
    this.clientCaps = null;
    /** the first fault the transport itself saw (observe.js FAULT_*), "" if none */
    this.fault = "";
    /** with an auth fault (unauthorized, forbidden): the resource metadata URL its WWW-Authenticate named, else "" */
    this.resourceMetadata = "";
    /** the reads of a WANTED_ONLY method waiting for their answers, by method */
    this.wanted = new Map();
    /** stdio lines that were no JSON-RPC message, skipped (startsMessage) */
    this.strayLines = 0;
    /** the program a command_not_found could not find */
    this.command = "";
    /** the stdio child's exit status once it exited (not by a signal), else null */
    this.exitStatus = null;
    /** the end of the child's stderr (STDERR_TAIL_BYTES at most), when the transport pipes it */
    this.stderr = [];
    this.stderrBytes = 0;
  }

  /** Keeps the end of the child's stderr. */
  stderrChunk(chunk) {
    this.stderr.push(Buffer.from(chunk));
    this.stderrBytes += chunk.length;
    while (this.stderrBytes - this.stderr[0].length >= STDERR_TAIL_BYTES) this.stderrBytes -= this.stderr.shift().length;
  }

  /** The end of the child's stderr as text (at most STDERR_TAIL_BYTES). */
  stderrTail() {
    const all = Buffer.concat(this.stderr);
    return all.subarray(Math.max(0, all.length - STDERR_TAIL_BYTES)).toString("utf8");
  }

  /**
   * Records what the transport saw go wrong (the command did not start, the
   * child's stdout ended, a connection could not be made): the fact a
   * failure is classified by, never the SDK's error text. The first is kept.
   */
  transportFault(code) {
    if (this.fault === "") {
      this.fault = code;
      this.#notify();
    }
  }

  /**
   * Records an HTTP 401 or 403 (the faults unauthorized and forbidden) and
   * the resource metadata URL its WWW-Authenticate named ("" for none), as
   * the Go capture does: the header's value is read for that URL only and
   * kept nowhere else, so no credential of a challenge reaches a record.
   */
  authFault(code, resourceMetadata) {
    if (this.fault === "") {
      this.fault = code;
      this.resourceMetadata = resourceMetadata;
      this.#notify();
    }
  }

  /**
   * Records that a frame went past the limit and returns the error the
   * reader of that frame fails with.
   */
  tooLarge() {
    if (this.oversize === "") {
      this.oversize = String(this.limit);
      this.#notify();
      this.onTooLarge?.();
    }
    return new CrawlcheckError(`the server sent an answer of more than ${this.limit} bytes: not read further`);
  }

  /** Resolves at the recorder's next change. */
  changed() {
    return new Promise((resolve) => this.waiters.add(resolve));
  }

  #notify() {
    const ws = this.waiters;
    this.waiters = new Set();
    for (const w of ws) w();
  }

  /** Records an outgoing message (an object, as the SDK sends it). */
  sent(message) {
    if (Array.isArray(message)) {
      message.forEach((m) => this.sent(m));
      return null;
    }
    if (!message || typeof message.method !== "string" || message.id === undefined || message.id === null) return null;
    const c = new Call(message.method);
    const caps = declaredCapabilities(message);
    if (caps !== null) this.clientCaps = caps;
    this.calls.push(c);
    this.byId.set(idKey(message.id), c);
    this.#notify();
    return c;
  }

  /**
   * Records an incoming frame; to is the call it answers when the transport
   * knows it (HTTP: the POST it came back on).
   * @param {Uint8Array} frame
   * @param {Call|null} [to]
   */
  received(frame, to = null) {
    const m = members(frame);
    if (m === null && frame[0] === 0x5b) {
      // A batch: each element on its own.
      const text = new TextDecoder().decode(frame);
      try {
        for (const el of JSON.parse(text)) this.received(enc.encode(JSON.stringify(el)));
        return;
      } catch {
        // not a batch after all: an unreadable frame
      }
    }
    if (m !== null && m.has("method")) {
      if (parseMember(m, "method") === "notifications/tools/list_changed") {
        this.listChanged++;
        this.#notify();
        this.onListChanged?.();
      }
      return;
    }
    let matched = false;
    if (m !== null && m.has("id")) {
      const id = parseMember(m, "id");
      const c = id === undefined || id === null ? undefined : this.byId.get(idKey(id));
      if (c) {
        to = c;
        matched = true;
      }
    }
    if (!to) to = this.#pending();
    if (to && to.answer === null) {
      if (KEPT.has(to.method) && (!WANTED_ONLY.has(to.method) || this.wanted.get(to.method) > 0)) {
        to.answer = frame.slice();
        to.fields = m === null ? null : rebase(m, frame, to.answer);
      } else {
        to.answer = RELEASED;
      }
      to.matched = matched;
      if (!KEPT.has(to.method)) this.#forget(to);
      this.#notify();
    }
  }

  #forget(c) {
    this.calls.splice(this.calls.indexOf(c), 1);
    for (const [k, v] of this.byId) {
      if (v === c) {
        this.byId.delete(k);
        break;
      }
    }
  }

  /**
   * Keeps the answers of method (a WANTED_ONLY one) until the returned
   * function is called: while a read waits for its answer.
   */
  want(method) {
    this.wanted.set(method, (this.wanted.get(method) ?? 0) + 1);
    return () => this.wanted.set(method, this.wanted.get(method) - 1);
  }

  /** Drops a tools/list answer the check has read (it stays answered). */
  release(c) {
    c.answer = RELEASED;
    c.fields = null;
  }

  // The call an unattributable frame most likely answers: the newest
  // unanswered tools/list, else the newest unanswered call.
  #pending() {
    let newest = null;
    for (let i = this.calls.length - 1; i >= 0; i--) {
      const c = this.calls[i];
      if (c.answer !== null) continue;
      if (c.method === "tools/list") return c;
      newest ??= c;
    }
    return newest;
  }

  /** The n-th call (from 0) of method, or null. */
  nth(method, n) {
    for (const c of this.calls) {
      if (c.method !== method) continue;
      if (n === 0) return c;
      n--;
    }
    return null;
  }

  count(method) {
    return this.calls.filter((c) => c.method === method).length;
  }

  /** The method and result bytes of the newest handshake answered with a result. */
  handshake() {
    for (let i = this.calls.length - 1; i >= 0; i--) {
      const c = this.calls[i];
      if ((c.method !== "initialize" && c.method !== "server/discover") || c.answer === null) continue;
      if (c.fields?.has("result")) return { method: c.method, result: c.fields.get("result") };
    }
    return { method: "", result: null };
  }
}

/** The members m read of frame, as the same slices of copy (frame's copy). */
function rebase(m, frame, copy) {
  const out = new Map();
  for (const [k, v] of m) {
    const at = v.byteOffset - frame.byteOffset;
    out.set(k, copy.subarray(at, at + v.length));
  }
  return out;
}

/**
 * Puts the capture on an SDK transport, before the client connects over it.
 * Returns the recorder and how the transport names its server: for stdio
 * the command and its arguments as given, for HTTP the URL.
 * @returns {{rec: Recorder, kind: "stdio"|"http", command?: string[], url?: string}}
 */
export function attach(transport, { maxAnswerBytes }) {
  const rec = new Recorder(maxAnswerBytes);
  rec.onTooLarge = () => {
    // The session ends at the frame that went past the limit.
    Promise.resolve()
      .then(() => transport.close?.())
      .catch(() => {});
  };
  const send = transport.send;
  if (typeof send !== "function") throw new TypeError("crawlcheck: the transport has no send method");
  transport.send = function (message, options) {
    rec.sent(message);
    return send.call(this, message, options);
  };
  if (transport._readBuffer && transport._serverParams) {
    tapStdioReads(rec, transport);
    // Client 2.x negotiating the protocol (versionNegotiation auto or pin)
    // sends server/discover over stdio on a sibling process it makes with
    // `new transport.constructor(params)` and disposes of; the session's own
    // process then hears no handshake at all. The sibling is made through
    // an own constructor of this instance that taps it into the same
    // recorder (its frames only: its exit is the SDK's doing), so the
    // record is the discover exchange's, as the other hosts' are.
    const Base = Object.getPrototypeOf(transport)?.constructor;
    if (typeof Base === "function") {
      Object.defineProperty(transport, "constructor", {
        configurable: true,
        writable: true,
        value: function CapturedSibling(...args) {
          const sibling = new Base(...args);
          const sibSend = sibling.send;
          sibling.send = function (message, options) {
            rec.sent(message);
            return sibSend.call(this, message, options);
          };
          if (sibling._readBuffer) tapStdioReads(rec, sibling);
          return sibling;
        },
      });
    }
    // The child as the transport's own start sees it: a spawn that fails
    // rejects start, and a child that closes its stdout has exited (or
    // will) before answering anything more — unless the client closed the
    // transport first (the SDK ending a session it failed): the child's
    // exit is then the client's doing, as in the Go preflight.
    let closing = false;
    const close = transport.close;
    transport.close = async function (...args) {
      closing = true;
      return close.apply(this, args);
    };
    const exited = () => {
      if (!closing) rec.transportFault("process_exited");
    };
    const p = transport._serverParams;
    // With stderr "pipe" the SDK hands the child's stderr out as a stream
    // (before start): its end is kept for the record of a child that
    // exits before answering.
    transport.stderr?.on?.("data", (chunk) => rec.stderrChunk(chunk));
    const start = transport.start;
    transport.start = async function (...args) {
      try {
        await start.apply(this, args);
      } catch (e) {
        if (e?.code === "ENOENT") {
          // No program of that name: a mistyped command (issue 34, item 4).
          rec.command = p.command;
          rec.transportFault("command_not_found");
        } else rec.transportFault("connect_refused");
        throw e;
      }
      this._process?.once("exit", (code) => {
        if (Number.isInteger(code)) rec.exitStatus = code;
      });
      this._process?.stdout?.once("end", exited);
      this._process?.stdin?.once("error", exited);
    };
    return { rec, kind: "stdio", command: [p.command, ...(p.args ?? [])] };
  }
  if (transport._url instanceof URL && "_fetch" in transport) {
    const inner = transport._fetch ?? ((...a) => globalThis.fetch(...a));
    // SSEClientTransport is the HTTP transport with an EventSource's options.
    const legacy = "_eventSourceInit" in transport;
    // A legacy transport already started (an adapter on a connected
    // client) has its event stream open, read through the fetch it was
    // started with: tapping _fetch now would see only the POSTs, never the
    // answers. Its frames are then the events the SDK routes, taken at the
    // stream's message handler (issue 17).
    const open = legacy && transport._eventSource ? tapEventSource(rec, transport._eventSource) : false;
    transport._fetch = (input, init) => tapFetch(rec, inner, input, init, legacy, open);
    return { rec, kind: "http", url: transport._url.href };
  }
  throw new TypeError(
    "crawlcheck: cannot capture raw frames from this transport; use StdioClientTransport or StreamableHTTPClientTransport of @modelcontextprotocol/sdk 1.x or @modelcontextprotocol/client 2.x, or SSEClientTransport of @modelcontextprotocol/sdk 1.x",
  );
}

/**
 * Splits a byte stream into lines as the SDK's ReadBuffer does (a trailing
 * \r dropped), holding the open line as a list of chunks (no copy per chunk).
 */
class LineSplitter {
  constructor(emit) {
    this.emit = emit;
    this.parts = [];
    this.len = 0;
  }
  /**
   * Takes a chunk, emits its complete lines and returns the bytes up to
   * and including its last newline (the held start of the line included),
   * for the SDK's buffer; null, emitting nothing more, when a line of it
   * (or the line still open) is longer than max bytes.
   */
  push(chunk, max = Infinity) {
    const last = chunk.lastIndexOf(0x0a);
    if (last < 0) {
      if (this.len + chunk.length > max) return this.#cut();
      this.parts.push(chunk.slice());
      this.len += chunk.length;
      return EMPTY;
    }
    // The bytes for the SDK, the held start of the line included, copied
    // once (or not at all when nothing is held); the lines emitted are
    // views of them.
    const held = this.len;
    const out = held > 0 ? concatAll([...this.parts, chunk.subarray(0, last + 1)], held + last + 1) : chunk.subarray(0, last + 1);
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0 && nl <= last; nl = chunk.indexOf(0x0a, start)) {
      const from = start === 0 ? 0 : held + start;
      const to = held + nl;
      if (to - from > max) return this.#cut();
      let line = out.subarray(from, to);
      if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
      this.emit(line);
      start = nl + 1;
    }
    if (chunk.length - start > max) return this.#cut();
    const rest = chunk.subarray(start);
    this.parts = rest.length > 0 ? [rest.slice()] : [];
    this.len = rest.length;
    return out;
  }
  #cut() {
    this.parts = [];
    this.len = 0;
    return null;
  }
}

const EMPTY = new Uint8Array(0);

/** How much of a stdio child's stderr is kept: its end (Go keeps as much). */
const STDERR_TAIL_BYTES = 4096;

const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/** The bytes without leading and trailing white space. */
// tapStdioReads hands the recorder each line a stdio transport's child
// writes, as the SDK's read buffer receives it.
function tapStdioReads(rec, transport) {
  const buf = transport._readBuffer;
  // The SDK's read buffer refuses more than 10 MiB buffered and closes the
  // transport, which would make a frame between that and maxAnswerBytes
  // (16 MiB by default) a record no other host makes: its bound is raised
  // to hold a whole frame at the limit and the start of the next, so the
  // one limit that applies is maxAnswerBytes, as in Go and Python.
  if (typeof buf._maxBufferSize === "number") buf._maxBufferSize = Math.max(buf._maxBufferSize, 2 * rec.limit + (1 << 20));
  const append = buf.append;
  const lines = new LineSplitter((line) => {
    const frame = trim(line);
    if (frame.length === 0) return;
    // A line that cannot be a message (a banner, a log line) is skipped,
    // as the SDK's own stdio transport skips a line it cannot parse, and
    // counted for the record; one that starts as a message stays a frame,
    // malformed or not (docs/mcpserver.md, Stray lines; Go's lineTap).
    if (startsMessage(frame)) rec.received(frame);
    else rec.strayLines++;
  });
  buf.append = function (chunk) {
    // Past the limit neither the capture nor the SDK's read buffer
    // takes more: the SDK's stdio transport closes on this error.
    const whole = rec.oversize === "" ? lines.push(chunk, rec.limit) : null;
    if (whole === null) throw rec.tooLarge();
    // The SDK is handed whole lines only: its buffer copies itself and
    // searches for a newline from its start on every append, which made
    // one 16 MiB line cost seconds (past a check's deadline on 1.x).
    if (whole.length > 0) return append.call(this, Buffer.from(whole.buffer, whole.byteOffset, whole.length));
  };
}

/**
 * Whether a line, blanks trimmed, can be a JSON-RPC message: it opens an
 * object, or a batch ("[" whose next byte after blanks is "{" or "]").
 */
export function startsMessage(f) {
  if (f[0] === 0x7b) return true;
  if (f[0] !== 0x5b) return false;
  let i = 1;
  while (i < f.length && (f[i] === 0x20 || f[i] === 0x09 || f[i] === 0x0d)) i++;
  return i < f.length && (f[i] === 0x7b || f[i] === 0x5d);
}

function trim(b) {
  let i = 0;
  let j = b.length;
  while (i < j && SPACE.has(b[i])) i++;
  while (j > i && SPACE.has(b[j - 1])) j--;
  return b.subarray(i, j);
}

function concat(a, b) {
  if (a.length === 0) return b instanceof Uint8Array ? b : new Uint8Array(b);
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/**
 * The resource_metadata parameter (RFC 9728) of a 401's or 403's
 * WWW-Authenticate, "" when none is kept: the core's rule (its
 * resource_metadata op, the same for every host). fetch joins repeated
 * header lines with ", ", which the core's split reads as it reads the lines
 * one by one. A header value is bytes (one char each, latin1, as fetch gives
 * it), handed over as the UTF-8 text they are.
 * @param {import("./core.js").Core} cc
 * @param {string|null} header
 */
export function resourceMetadataOf(cc, header) {
  const lines = header === null ? [] : [Buffer.from(header, "latin1").toString("utf8")];
  return cc.resourceMetadata({ www_authenticate: lines }).resource_metadata;
}

/** The socket errors of a connection that was never made (Node's fetch, undici). */
export const DIAL_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "UND_ERR_CONNECT_TIMEOUT"]);

// tapFetch sends one request and hands the SDK a response whose body it
// reads too: a JSON body is one frame answering the POST's request; an
// event stream is one frame per event (answering the POST it came back on,
// or nothing for the GET stream, where notifications arrive). Over the
// legacy transport only the GET stream carries frames.
async function tapFetch(rec, inner, input, init, legacy, streamTapped) {
  let to = null;
  if (init?.method === "POST" && typeof init.body === "string") {
    try {
      const msg = JSON.parse(init.body);
      if (!Array.isArray(msg) && msg && msg.id !== undefined && msg.id !== null) to = rec.byId.get(idKey(msg.id)) ?? null;
    } catch {
      // not ours to judge
    }
  }
  let resp;
  try {
    resp = await inner(input, init);
  } catch (e) {
    // No connection was made: Node's fetch fails with the socket's code as
    // its cause (an abort is the deadline's, classified by the check).
    if (DIAL_CODES.has(e?.cause?.code)) rec.transportFault("connect_refused");
    throw e;
  }
  if (resp.status === 401 || resp.status === 403) {
    rec.authFault(resp.status === 401 ? "unauthorized" : "forbidden", resourceMetadataOf(await load(), resp.headers.get("www-authenticate")));
  }
  if (!resp.body) return resp;
  const type = (resp.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
  // A stream reopened under a tapped event source is read there already.
  if (!resp.ok || (legacy && (init?.method === "POST" || streamTapped))) return resp;
  let body;
  if (type === "text/event-stream") {
    body = readEvents(resp.body, rec.limit, () => rec.tooLarge(), (data) => rec.received(data, to));
  } else {
    const declared = Number(resp.headers.get("content-length") ?? NaN);
    if (declared > rec.limit) {
      resp.body.cancel().catch(() => {});
      throw rec.tooLarge();
    }
    // One frame: the body as the SDK reads it, recorded at its end.
    const parts = [];
    let n = 0;
    body = capped(resp.body, rec.limit, {
      measure: (chunk) => {
        if ((n += chunk.length) <= rec.limit) parts.push(chunk.slice());
        return n;
      },
      over: () => rec.tooLarge(),
      end: () => {
        const frame = trim(concatAll(parts, n));
        if (frame.length > 0) rec.received(frame, to);
      },
    });
  }
  return new Response(body, { status: resp.status, statusText: resp.statusText, headers: resp.headers });
}

/**
 * Puts the capture on the message handler of an event source the transport
 * opened before the capture: each message event's data is the frame (the
 * SSE parsing is the SDK's own eventsource, which dispatches no event of
 * empty data), bounded as a stream's event is. Returns true.
 */
function tapEventSource(rec, es) {
  const onmessage = es.onmessage;
  es.onmessage = function (event) {
    if (rec.oversize !== "") return;
    const frame = enc.encode(typeof event?.data === "string" ? event.data : "");
    if (frame.length > rec.limit) {
      rec.tooLarge();
      return;
    }
    if (frame.length > 0) rec.received(frame);
    return onmessage?.call(this, event);
  };
  return true;
}

function concatAll(parts, n) {
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

// readEvents passes an event stream on to the SDK and parses it as bytes
// as it goes, by the rules of the SSE standard (the WHATWG event stream
// interpretation, as the SDKs' eventsource-parser applies it): a leading
// BOM dropped; lines end at CRLF, LF or a lone CR; a line starting with ":"
// is a comment; a field is the text before the first ":" (the whole line
// without one), its value what follows, less one leading space; data lines
// are joined with \n; a blank line dispatches the event. The frame taken is
// the one the SDK routes: an event whose data is not empty and whose type is
// absent or "message". Priming events (an id with empty data), retry:,
// id: alone, other event types and an event the stream ends inside (no
// blank line: the SDK never dispatches it) give no frame. An event longer
// than max bytes ends the stream with over().
export function readEvents(stream, max, over, emit) {
  const ev = new EventReader(emit);
  return capped(stream, max, {
    measure: (chunk) => (ev.push(chunk, max) ? Infinity : ev.size()),
    over,
  });
}

const DATA = enc.encode("data");
const EVENT = enc.encode("event");
const MESSAGE = enc.encode("message");
const BOM = new Uint8Array([0xef, 0xbb, 0xbf]);

/** The SSE parser of readEvents: bytes in, routed data frames out. */
class EventReader {
  constructor(emit) {
    this.emit = emit;
    /** the unterminated rest of the stream */
    this.buf = new Uint8Array(0);
    this.first = true;
    /** @type {Uint8Array[]} the data lines of the event being read */
    this.data = [];
    /** @type {Uint8Array|null} its event type, null if none */
    this.type = null;
    /** bytes of the event being read, its finished lines */
    this.read = 0;
  }

  /** Bytes of the event being read, its open line included. */
  size() {
    return this.read + this.buf.length;
  }

  /**
   * Takes a chunk; returns true, emitting nothing more, when the event
   * being read (or its open line) is longer than max bytes.
   */
  push(chunk, max) {
    let b = concat(this.buf, chunk);
    if (this.first) {
      if (b.length < BOM.length && equal(b, BOM.subarray(0, b.length))) {
        this.buf = b.slice();
        return false;
      }
      this.first = false;
      if (equal(b.subarray(0, BOM.length), BOM)) b = b.subarray(BOM.length);
    }
    let at = 0;
    for (;;) {
      let end = at;
      while (end < b.length && b[end] !== 0x0a && b[end] !== 0x0d) end++;
      if (end === b.length) break;
      let next = end + 1;
      if (b[end] === 0x0d) {
        // A CR at the end of what has arrived may be half of a CRLF.
        if (next === b.length) break;
        if (b[next] === 0x0a) next++;
      }
      this.read += next - at;
      if (this.read > max) return this.#cut();
      this.#line(b.subarray(at, end));
      at = next;
    }
    this.buf = b.slice(at);
    if (this.size() > max) return this.#cut();
    return false;
  }

  #line(line) {
    if (line.length === 0) {
      const data = this.data.length === 0 ? null : joinLines(this.data);
      const routed = this.type === null || equal(this.type, MESSAGE);
      this.data = [];
      this.type = null;
      this.read = 0;
      if (data !== null && data.length > 0 && routed) this.emit(data);
      return;
    }
    if (line[0] === 0x3a) return; // a comment
    let colon = line.indexOf(0x3a);
    let field = line;
    let value = new Uint8Array(0);
    if (colon >= 0) {
      field = line.subarray(0, colon);
      value = line.subarray(colon + 1);
      if (value[0] === 0x20) value = value.subarray(1);
    }
    if (equal(field, DATA)) this.data.push(value.slice());
    else if (equal(field, EVENT)) this.type = value.length === 0 ? null : value.slice();
    // id, retry and unknown fields name no frame.
  }

  #cut() {
    this.buf = new Uint8Array(0);
    this.data = [];
    this.read = 0;
    return true;
  }
}

/** The lines joined with \n, copied once. */
function joinLines(lines) {
  let n = lines.length - 1;
  for (const l of lines) n += l.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (let i = 0; i < lines.length; i++) {
    if (i > 0) out[at++] = 0x0a;
    out.set(lines[i], at);
    at += lines[i].length;
  }
  return out;
}

function equal(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
