// The page's worker (a classic script: web/build.mjs puts the SDK's browser
// loader, as `crawlcheckSDK`, in front of this file). Every answer the page
// shows comes from an op of the core; this file only orders the calls,
// reports progress, and runs every string a person will read through
// escape_text. It runs off the page's thread, so a list of thousands of
// tools never freezes the page.
//
// Messages in:  {type: "init", wasm: "<base64>"}
//               {type: "check", id, input}  {type: "records", id, input}
// Messages out: {type: "ready", engine, abi} | {type: "failed", message}
//               {type: "progress", id, step, of, label}
//               {type: "result", id, result} | {type: "error", id, error}

/* global crawlcheckSDK */
"use strict";

let core = null;

function b64bytes(s) {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** A string made safe to show a person (the core's escape_text). */
function shown(s) {
  if (s === null || s === undefined) return null;
  return core.call("escape_text", { text: String(s) }).text;
}

/** The op's result, or {error: {code, message}} with the message escaped. */
function attempt(op, request) {
  try {
    return { ok: core.call(op, request) };
  } catch (e) {
    if (e instanceof crawlcheckSDK.CoreError) return { error: { code: e.code, message: shown(e.coreMessage) } };
    return { error: { code: "page", message: shown(String((e && e.message) || e)) } };
  }
}

class Failed extends Error {
  constructor(where, error) {
    super(error.message);
    this.where = where;
    this.error = error;
  }
}

function must(where, r) {
  if (r.error) throw new Failed(where, r.error);
  return r.ok;
}

function trustOf(v) {
  return {
    format: shown(v.format),
    trust: v.trust,
    reason: shown(v.reason),
    key_id: shown(v.key_id),
    count: v.count,
    tools_sha256: v.tools_sha256,
    parts: v.parts,
    servers: v.servers.map(shown),
    servers_raw: v.servers,
    server_name: shown(v.server_name),
    server_name_raw: v.server_name,
  };
}

function diffView(d) {
  const seg = (s) => ({ op: s.op, text: shown(s.text) });
  return {
    added: d.added.map(shown),
    removed: d.removed.map(shown),
    modified: d.modified.map((m) => ({
      name: shown(m.name),
      parts: m.parts,
      tool_changed: !!m.tool_changed,
      description_diff: m.description_diff ? m.description_diff.map(seg) : null,
      schema_paths: m.schema_paths ? m.schema_paths.map((p) => ({ change: p.change, path: shown(p.path) })) : null,
      schema_paths_truncated: !!m.schema_paths_truncated,
      // What the change introduces, strongest first (docs/scan.md, "Change
      // classes"); the evidence is server text, shown escaped like the rest.
      classes: m.classes || null,
      class_evidence: (m.class_evidence || []).map((e) => ({ class: e.class, text: shown(e.text) })),
    })),
    unchanged: d.unchanged,
    blind_parts: (d.blind_parts || []).map(shown),
  };
}

/**
 * The record as the page shows it, with what the core's handoff lets a host
 * hand over: a tool is shown withheld unless the session proceeds and the
 * handoff names it among the tools handed over. Nothing here reads an
 * effect, so an effect this page does not know withholds (fails closed).
 */
function recordView(rec, text, handoff) {
  const proceeds = handoff.session === "proceed";
  const handed = new Set(proceeds ? handoff.tools.map((t) => t.name) : []);
  const tools = Object.keys(rec.tools || {}).map((name) => ({ name: shown(name), effect: rec.tools[name], withheld: !handed.has(name) }));
  return {
    effect: rec.effect,
    mode: rec.mode,
    would: rec.would ? { effect: rec.would.effect } : null,
    record_sha256: rec.record_sha256,
    session: shown(handoff.session),
    proceeds,
    withheld: handoff.withheld.map(shown),
    tools,
    observations: rec.observations.map((o) => ({
      observation: o.observation,
      tool: shown(o.tool),
      part: o.part,
      effect: o.effect,
      would: o.would || null,
      override: !!o.override,
      detail: o.detail === null || o.detail === undefined ? null : shown(JSON.stringify(o.detail)),
    })),
    identity: rec.server && rec.server.identity,
    approved_url: rec.server && rec.server.approved_url ? shown(rec.server.approved_url) : null,
    observed_url: rec.server && rec.server.observed_url ? shown(rec.server.observed_url) : null,
    log: rec.log
      ? {
          included: rec.log.included,
          index: rec.log.index,
          origin: rec.log.checkpoint ? shown(rec.log.checkpoint.origin) : null,
          size: rec.log.checkpoint ? rec.log.checkpoint.size : null,
          consistent: rec.log.consistent,
          reason: rec.log.reason ? shown(rec.log.reason) : null,
          keep: rec.log.keep ? shown(rec.log.keep) : null,
          keep_raw: rec.log.keep || null,
        }
      : null,
    observed_count: rec.observed.count,
    text_shown: shown(text),
    text,
  };
}

/**
 * What the page shows of the prompts, resources and templates: the
 * record's item observations and effects, the handoff's withheld items,
 * what was not compared, and the core's scan of every item (scan_items).
 */
function featuresView(handoff, doc) {
  const rec = handoff.record;
  const lists = ["prompts", "resources", "resource_templates"];
  const items = [];
  for (const l of lists) {
    const effects = (rec.features || {})[l];
    if (!effects) continue;
    const handed = new Set((((handoff.features || {})[l] || {}).items || []).map((i) => i.key));
    for (const k of Object.keys(effects)) items.push({ list: l, key: shown(k), effect: effects[k], handed: handed.has(k) });
  }
  const s = attempt("scan_items", { features: new crawlcheckSDK.RawJSON(doc) });
  return {
    blind: (rec.baseline.blind_parts || []).filter((p) => lists.includes(p) || p === "ui_templates"),
    items,
    observations: rec.observations
      .filter((o) => typeof o.item === "string")
      .map((o) => ({ observation: o.observation, item: shown(o.item), part: shown(o.part), effect: o.effect })),
    scan: s.error
      ? { error: s.error }
      : {
          severity: s.ok.severity,
          count: Object.values(s.ok.kinds).reduce((a, b) => a + b, 0),
          findings: s.ok.findings.map((f) => ({ tool: `${f.list}: ${shown(f.item)}`, part: shown(f.part), key: false, offset: f.offset, rule: f.rule, severity: f.severity, span: shown(f.span), hidden: shown(f.hidden) })),
        },
  };
}

function progress(id, step, of, label) {
  self.postMessage({ type: "progress", id, step, of, label });
}

function check(id, input) {
  const enc = new TextEncoder();
  const lock = input.lock;
  const keyDirectory = input.key_directory || undefined;
  const operatorKeys = input.operator_keys && input.operator_keys.length > 0 ? input.operator_keys : undefined;
  const trustReq = { lock, now: input.now, key_directory: keyDirectory, operator_keys: operatorKeys };
  if (input.server_name) trustReq.server_name = input.server_name;
  const out = {};
  const seconds = input.second || [];
  const steps = seconds.length === 0 ? 1 : 5;
  let step = 0;

  progress(id, ++step, steps, "Reading the lockfile and its signature");
  // Each document the person gave is read by an op on its own, so that an
  // error names the document by the call that refused it, never by the
  // words of the core's message. The check time first, as the core reads a
  // time (make_lock's approved_at).
  const nowRead = attempt("make_lock", { tools: [], approved_at: input.now });
  if (nowRead.error) throw new Failed("now", nowRead.error);
  // The core reads a key directory only when a signature needs it; one
  // that is not even JSON is the person's mistake, said at once.
  if (keyDirectory) {
    const kd = attempt("canonicalize", { json: keyDirectory });
    if (kd.error) throw new Failed("keydir", kd.error);
  }
  if (input.policy) {
    const po = attempt("canonicalize", { json: input.policy });
    if (po.error) throw new Failed("policy", po.error);
  }
  // serverInfo goes into the request as the bytes given ("as received"):
  // only once the core has read them as one JSON value.
  if (input.server_info) {
    const si = attempt("canonicalize", { json: input.server_info });
    if (si.error) throw new Failed("serverinfo", si.error);
  }
  const lockReq = { lock, now: input.now };
  if (input.server_name) lockReq.server_name = input.server_name;
  // What each document is, the core says (document_kind): the page tries
  // no op to find out.
  const kindOf = (doc) => attempt("document_kind", { document: doc }).ok?.kind;
  if (seconds.length > 0 && kindOf(lock) === "tool_list") {
    // Not a lockfile but a tool list the core reads: two tool lists are
    // compared part by part, schema paths included; a verdict needs a lockfile.
    progress(id, ++step, steps, "Comparing the two tool lists");
    must("tools", attempt("hash_tools", { pages: seconds }));
    if (seconds.length !== 1) throw new Failed("tools", { code: "bad_request", message: shown("two tool lists are compared one page each: give the new list as one page") });
    out.lists = diffView(must("tools", attempt("diff", { old: lock, new: seconds[0] })));
    return out;
  }
  const vl = attempt("verify_lock", lockReq);
  if (vl.error) throw new Failed("lockfile", vl.error);
  // Then the lockfile with the keys, one kind at a time: what refuses now
  // is the key directory, or the operator keys.
  let trusted = vl;
  if (keyDirectory) {
    trusted = attempt("verify_lock", { ...lockReq, key_directory: keyDirectory });
    if (trusted.error) throw new Failed("keydir", trusted.error);
  }
  if (operatorKeys) {
    trusted = attempt("verify_lock", trustReq);
    if (trusted.error) throw new Failed("keys", trusted.error);
  }
  out.trust = trustOf(trusted.ok);
  if (out.trust.servers_raw.length > 1 && !out.trust.server_name_raw) {
    out.pick = true; // an agentgate.lock with several servers: the person picks one
    return out;
  }
  if (seconds.length === 0) return out;
  const serverName = out.trust.server_name_raw || undefined;

  // A single document that the core reads as a lockfile is a second
  // lockfile (one its keys refuse is said so, never read as a tool list);
  // anything else is the pages of a tools/list.
  if (seconds.length === 1 && kindOf(seconds[0]) === "lockfile") {
    const other = attempt("verify_lock", { lock: seconds[0], now: input.now, key_directory: keyDirectory, operator_keys: operatorKeys });
    if (other.error) throw new Failed("second", other.error);
    progress(id, ++step, steps, "Comparing the two lockfiles");
    out.second_lock = trustOf(other.ok);
    // The core compares a lockfile with a tool list only (a lockfile
    // holds hashes); its answer says so, and the page shows it.
    const d = attempt("diff", { old: lock, new: seconds[0], server_name: serverName });
    out.lock_vs_lock = d.error ? { error: d.error } : { diff: diffView(d.ok) };
    return out;
  }

  // A page that is not a JSON document at all (not JSON, not UTF-8, a
  // repeated key: the core's canonicalize refuses it) is a document the
  // person gave by mistake: an error, no verdict. Any other fault of a page
  // (not a tool list, a cursor left unfollowed, a name twice) is the check's
  // to record, as it is for a live server.
  progress(id, ++step, steps, `Reading the tool list (${seconds.length} page${seconds.length === 1 ? "" : "s"})`);
  seconds.forEach((page, i) => {
    const r = attempt("canonicalize", { json: page });
    if (r.error) throw new Failed("tools", { code: r.error.code, message: `page ${i + 1}: ${r.error.message}` });
  });

  progress(id, ++step, steps, "Checking the tools against the lockfile");
  const lc = attempt("lock_check", { lock, pages: seconds, server_name: serverName });
  out.lock_check = lc.error
    ? { error: lc.error }
    : {
        verdict: lc.ok.verdict,
        decision: lc.ok.decision,
        unreachable: lc.ok.unreachable ? { reason: lc.ok.unreachable.reason, detail: shown(lc.ok.unreachable.detail) } : null,
      };

  const observed = { pages: seconds };
  // The prompts, resources and templates, as the bytes given, once the
  // core has read them as one JSON value: the check reads the rest.
  if (input.features) {
    const fr = attempt("canonicalize", { json: input.features });
    if (fr.error) throw new Failed("features", fr.error);
    observed.features = new crawlcheckSDK.RawJSON(input.features);
  }
  if (input.endpoint) observed.endpoint = input.endpoint;
  if (input.handshake) observed.handshake = input.handshake;
  if (input.protocol_version) observed.protocol_version = input.protocol_version;
  if (input.server_info) observed.server_info = new crawlcheckSDK.RawJSON(enc.encode(input.server_info));
  const ccReq = { now: input.now, mode: input.mode, lock, observed, key_directory: keyDirectory, operator_keys: operatorKeys };
  if (serverName) ccReq.server_name = serverName;
  if (input.policy) ccReq.policy = input.policy;
  if (input.expected_policy_version) ccReq.expected_policy_version = input.expected_policy_version;
  if (input.proof) {
    // The issuer's log (docs/log.md): the proof, the checkpoint this
    // browser kept, and the issuer's consistency answer the person pasted,
    // as pasted: the core reads the proof out of it (consistency_answer),
    // and one that holds none is no proof. With a checkpoint kept and none
    // pasted, the page has no proof to give (consistency_unavailable: trees
    // of two sizes fail in the core's words, never as a fork proved).
    const log = { proof: new TextDecoder().decode(input.proof) };
    if (input.kept_checkpoint) log.checkpoint = input.kept_checkpoint;
    if (input.consistency) log.consistency_answer = input.consistency;
    else if (input.kept_checkpoint) log.consistency_unavailable = true;
    ccReq.log = log;
  }
  progress(id, ++step, steps, `Applying the policy in ${input.mode} mode`);
  // The record and the core's handoff of it (docs/continuity.md, The
  // handoff): what a host would hand over is the core's answer.
  let answer = null;
  try {
    answer = core.callResultText("continuity_handoff", ccReq);
  } catch (e) {
    if (!(e instanceof crawlcheckSDK.CoreError)) throw new Failed("check", { code: "page", message: shown(String((e && e.message) || e)) });
    // A policy the core refuses is the person's document at fault: no verdict.
    if (e.code === "policy_invalid") throw new Failed("policy", { code: e.code, message: shown(e.coreMessage) });
    out.record_error = { code: e.code, message: shown(e.coreMessage) };
    out.observed = { count: null, pages: seconds.length };
  }
  if (answer !== null) {
    const text = crawlcheckSDK.handoffRecordText(answer);
    const handoff = JSON.parse(answer);
    out.record = recordView(handoff.record, text, handoff);
    out.observed = { count: handoff.record.observed.count, pages: seconds.length };
    // The trust shown is the check's: the policy may ask more of a baseline
    // than a valid signature (require_observed_baseline, issue 37), and the
    // record says what the core judged it, which verify_lock cannot know.
    if (input.features) out.features = featuresView(handoff, input.features);
    const b = handoff.record.baseline;
    if (b && b.trust) out.trust = { ...out.trust, trust: b.trust, reason: b.trust_reason ? shown(b.trust_reason) : out.trust.reason };
  }

  progress(id, ++step, steps, "Working out what changed, tool by tool");
  let changed = null; // the diff's answer, names as the server sent them
  if (seconds.length === 1) {
    // diff takes one page per side: it also counts the unchanged tools.
    const d = attempt("diff", { old: lock, new: seconds[0], server_name: serverName });
    out.diff = d.error ? { error: d.error } : diffView(d.ok);
    changed = d.ok || null;
  } else if (lc.ok) {
    // Several pages: the lock check's own answer says what changed.
    out.diff = diffView({ added: lc.ok.added, removed: lc.ok.removed, modified: lc.ok.modified_detail, unchanged: null, blind_parts: lc.ok.blind_parts });
    changed = { added: lc.ok.added, modified: lc.ok.modified_detail };
  } else {
    out.diff = { error: lc.error };
  }
  out.scan = scanOfChanged(seconds, changed);
  return out;
}

/**
 * The scan of the tools that are new or changed, as approve and check show
 * it in the terminal (docs/scan.md): null when none changed or the diff
 * refused; every string of a finding is server text, shown escaped.
 */
function scanOfChanged(pages, diff) {
  if (!diff) return null;
  const names = [...diff.added, ...diff.modified.map((m) => m.name)];
  if (names.length === 0) return null;
  const s = attempt("scan", { pages, names });
  if (s.error) return { error: s.error };
  return {
    severity: s.ok.severity,
    count: Object.values(s.ok.kinds).reduce((a, b) => a + b, 0),
    findings: s.ok.findings.map((f) => ({ tool: shown(f.tool), part: shown(f.part), key: f.key, offset: f.offset, rule: f.rule, severity: f.severity, span: shown(f.span), hidden: shown(f.hidden) })),
  };
}

function records(id, input) {
  const bytes = input.bytes;
  progress(id, 1, 2, "Verifying the record");
  // One JSON value is one record; anything else is read as a JSON-lines log.
  const one = attempt("verify_record", { record: bytes });
  if (one.ok) {
    return { single: { valid: one.ok.valid, record_sha256: shown(one.ok.record_sha256), computed_sha256: one.ok.computed_sha256, reason: shown(one.ok.reason) } };
  }
  progress(id, 2, 2, "Verifying the log, record by record, and its chain");
  const chain = must("records", attempt("verify_chain", { records: bytes }));
  // Each line on its own (JSON lines: a record per line ending in \n).
  const lines = [];
  let start = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i === bytes.length || bytes[i] === 0x0a) {
      if (i > start) lines.push({ line: lines.length + 1, bytes: bytes.subarray(start, i), ended: i < bytes.length });
      start = i + 1;
    }
  }
  const each = lines.map((l) => {
    const r = attempt("verify_record", { record: l.bytes });
    if (r.error) return { line: l.line, valid: false, error: r.error, torn: !l.ended };
    return { line: l.line, valid: r.ok.valid, record_sha256: shown(r.ok.record_sha256), computed_sha256: r.ok.computed_sha256, reason: shown(r.ok.reason) };
  });
  return {
    chain: { valid: chain.valid, count: chain.count, broken_at: chain.broken_at === undefined ? null : chain.broken_at, reason: shown(chain.reason), head: shown(chain.head), torn_tail: !!chain.torn_tail },
    each,
  };
}

self.onmessage = async (e) => {
  const msg = e.data;
  if (msg.type === "init") {
    try {
      core = await crawlcheckSDK.instantiate({ wasm: b64bytes(msg.wasm), wasi: "shim", hostSha256: false });
      const v = core.call("version", {});
      self.postMessage({ type: "ready", engine: shown(v.engine), abi: v.abi });
    } catch (err) {
      self.postMessage({ type: "failed", message: String((err && err.message) || err) });
    }
    return;
  }
  try {
    const result = msg.type === "check" ? check(msg.id, msg.input) : records(msg.id, msg.input);
    self.postMessage({ type: "result", id: msg.id, result });
  } catch (err) {
    if (err instanceof Failed) self.postMessage({ type: "error", id: msg.id, where: err.where, error: err.error });
    else self.postMessage({ type: "error", id: msg.id, where: "page", error: { code: "page", message: shown(String((err && err.stack) || err)) } });
  }
};
