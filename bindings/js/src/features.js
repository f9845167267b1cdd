// What a server offers beside its tools and a model may be handed (issue
// 35): its prompts, resources and resource templates, and the MCP Apps UI
// templates (ui://) its tools name. The session reads them after each whole
// tool list, as the raw answers (nextCursor followed by the core's
// next_page), and the core compares them with the lockfile's features
// extension. This file reads them and hands over what the record covers,
// nothing else, as the Go preflight's Session does
// (internal/preflight/session_features.go, docs/preflight.md):
//
// - listPrompts, listResources, listResourceTemplates answer the handoff's
//   items, each the object the core wrote from what it hashed (never the
//   SDK's parse of the server's page), in one result without a cursor;
// - getPrompt and readResource reach the server only when the session
//   engine allows them (its call event, as for a tools/call), and refuse
//   any other with ItemRefused in the core's words;
// - complete of a prompt (ref/prompt) or a resource template (ref/resource)
//   reaches the server only when the session engine allows it, as the
//   gateway's completion/complete does;
// - readResource of a ui:// template a handed tool names reads it and
//   hands it over only when the core finds it the template pinned
//   (ui_template_check).
//
// What getPrompt and readResource (not ui://) answer is the server's answer
// at that time, parsed by the SDK: the rendered messages and a resource's
// contents are data, like a tool call's result, and no lockfile pins them
// (docs/decisions.md, issue 35). The record decides only whether the item
// may be asked for.
//
// Like the Go Session, the wrapper gates its own methods: a prompts/get or
// resources/read a caller sends around them (client.request) is not seen.

import { CrawlcheckError, PreflightError } from "./errors.js";
import { RawJSON } from "./core.js";
import { fetchAnswer } from "./observe.js";
import { ContinuityRefused } from "./preflight.js";

const enc = new TextEncoder();

/** The lists a session reads beside tools/list: the record's name, the method, the member naming an item. */
const LISTS = [
  { name: "prompts", method: "prompts/list", capability: "prompts", key: "name" },
  { name: "resources", method: "resources/list", capability: "resources", key: "uri" },
  { name: "resource_templates", method: "resources/templates/list", capability: "resources", key: "uriTemplate" },
];
const READ = "resources/read";

/**
 * The error of a prompt, resource, resource template or ui:// template the
 * record does not let through: withheld (effect set), not in the checked
 * list, of a list the check compared none of (notCompared), or a ui://
 * template that is not the one approved (list "ui_templates"). The message
 * is the core's (the refusal op's item).
 */
export class ItemRefused extends CrawlcheckError {
  constructor(message, { list, key, effect = null, notCompared = false, record = null } = {}) {
    super(message);
    this.name = "ItemRefused";
    /** "prompts", "resources", "resource_templates" or "ui_templates" */
    this.list = list;
    /** the name, uri or uriTemplate asked for ("" for a whole list) */
    this.key = key;
    this.effect = effect;
    this.notCompared = notCompared;
    this.record = record;
  }
}

/**
 * The result schema a 1.x request of the features is sent with: it takes
 * the answer as it came. The session reads each answer from the wire (the
 * capture) and never from the SDK's parse of it, so the SDK's typed parse
 * (its zod schema of the whole list) was work thrown away, in every check.
 * 1.x reads a result with the schema's safeParse (through its zod-compat
 * layer, which treats a schema without zod's internals as zod 3's) or,
 * before that layer, its parse: both answer the data untouched.
 */
const UNPARSED = Object.freeze({
  parse: (data) => data,
  safeParse: (data) => ({ success: true, data }),
});

/**
 * How the session sends a features request through the SDK: its request
 * (own.request: the client's before withPreflight replaced it), as the
 * list methods send it, without their aggregation or cache (2.x) or their
 * typed parse of the answer (1.x: UNPARSED).
 */
export function featureSender(client, own = client) {
  if (typeof client.getNegotiatedProtocolVersion === "function") {
    return (method, params, options) => own.request.call(client, { method, params }, options);
  }
  return (method, params, options) => own.request.call(client, { method, params }, UNPARSED, options);
}

/**
 * Reads, after a whole tool list (obs.stop "list_end"), the lists the
 * server's capabilities declare and the ui:// templates the core names of
 * the tool pages, into obs.features (the request's observed.features).
 * Within the check's deadline (signal), as the Go preflight: a fault ends
 * the reading, the list it hit says so, and what was not read is left out
 * (not compared, said so on the record).
 */
export async function observeFeatures(g, obs, signal) {
  if (obs.failure || obs.stop !== "list_end") return obs;
  g.featureSend ??= featureSender(g.client);
  const caps = g.client?.getServerCapabilities?.() ?? null;
  const f = {};
  obs.features = f;
  for (const l of LISTS) {
    if (caps?.[l.capability] === undefined || caps?.[l.capability] === null) {
      // MCP forbids the request: the server offers none.
      f[l.name] = { declared: false };
      continue;
    }
    f[l.name] = await walkList(g, l.method, signal);
    if (f[l.name].failure) return obs;
  }
  let uris;
  try {
    uris = g.cc.call("ui_templates", { pages: obs.pages }).uris;
  } catch {
    // The core refuses the tool list, which the check records: no
    // template is read.
    return obs;
  }
  f.ui_templates = [];
  for (const uri of uris) {
    const got = await readAnswer(g, { uri }, signal);
    f.ui_templates.push(got.page ? { uri, result: got.page } : { uri, failure: got.failure });
    // The session is gone (or the deadline passed): the rest is not read,
    // and the check withholds the tools naming them.
    if (!got.page) return obs;
  }
  return obs;
}

/** Reads every page of one list, following nextCursor by the core's next_page, within the core's pages_bytes. */
async function walkList(g, method, signal) {
  const l = { pages: [] };
  let followed = [];
  let cursor;
  let total = 0;
  for (;;) {
    const params = cursor === undefined ? {} : { cursor };
    const got = await fetchAnswer(g.cap, method, (options) => g.featureSend(method, params, options), signal);
    if (!got.page) {
      l.failure = got.failure;
      return l;
    }
    if ((total += got.page.length) > g.cc.limits.pages_bytes) return { failure: "pages_over_cap" };
    l.pages.push(got.page);
    const req = { list: method, page: got.page, followed };
    if (g.pageCap !== undefined) req.page_cap = g.pageCap;
    let step;
    try {
      step = g.cc.nextPage(req);
    } catch {
      // The core refused the step itself: the check says what the page is.
      return l;
    }
    if (step.cursor === null) {
      if (step.page_cap_reached) l.page_cap_reached = true;
      return l;
    }
    followed = step.followed;
    cursor = step.cursor;
  }
}

/** One resources/read through the SDK, its answer captured on the wire ({page} or {failure}). */
async function readAnswer(g, params, signal) {
  g.featureSend ??= featureSender(g.client);
  const done = g.cap.rec.want(READ);
  try {
    return await fetchAnswer(g.cap, READ, (options) => g.featureSend(READ, params, options), signal);
  } finally {
    done();
  }
}

/** The core's words for an item refused (the refusal op's item). */
function refusal(g, rec, item, extra = {}) {
  // A listing refused names no key: the whole list is.
  const asked = item.key === "" ? { list: item.list } : item;
  const { text } = g.cc.refusal({ record: enc.encode(rec.raw), item: asked });
  return new ItemRefused(text, { list: item.list, key: item.key, record: rec, ...extra });
}

/** The record's handoff of one list, for a listing; refuses the whole list when the check compared none of it. */
function handed(g, rec, list) {
  const h = rec.handoff?.features?.[list];
  if (!h) throw refusal(g, rec, { list, key: "" }, { notCompared: true });
  return h;
}

/**
 * Resolves when the session engine allows a request of method reaching key,
 * named by the event's member (name or uri): a prompts/get of a prompt, a
 * resources/read of a resource, a completion/complete of a prompt or a
 * resource template or resource (its call event, judged as a tools/call
 * is, by the newest record); throws the engine's refusal: ContinuityRefused
 * of the session, ItemRefused of the item its action names (list and key:
 * a completion's uri may be a withheld resource's, not a template's).
 */
async function admit(g, method, member, key) {
  await g.gate();
  const [a] = g.step({ type: "call", method, [member]: key });
  if (a.action === "allow") return;
  // The engine judged by the newest record (a re-check may have ended
  // since the gate): the error names it.
  const rec = g.record;
  if (a.list === undefined) throw new ContinuityRefused(a.text, { effect: rec.effect, record: rec });
  const effects = rec.features?.[a.list];
  throw new ItemRefused(a.text, { list: a.list, key: a.key, effect: effects?.[a.key] ?? null, notCompared: effects === undefined, record: rec });
}

/** The handed items of a list: each the object the core wrote, one whose key does not match left out. */
function itemsOf(h, keyMember) {
  const out = [];
  for (const it of h.items) {
    const v = JSON.parse(it.item);
    if (v?.[keyMember] === it.key) out.push(v);
  }
  return out;
}

function noCursor(g, params) {
  if (params?.cursor !== undefined) throw new PreflightError(`crawlcheck: unknown cursor ${JSON.stringify(g.cc.shown(String(params.cursor)))}: the session answers in one page`);
}

/** The result member of each list. */
const MEMBERS = { prompts: "prompts", resources: "resources", resource_templates: "resourceTemplates" };

/**
 * The listing of name ("prompts", "resources", "resource_templates") the
 * newest record lets through, as the list's result in one page (a cursor
 * is refused); refuses a list the check compared none of.
 */
export async function handedList(g, name, params) {
  noCursor(g, params);
  const l = LISTS.find((x) => x.name === name);
  const { rec } = await g.gate();
  return { [MEMBERS[name]]: itemsOf(handed(g, rec, name), l.key) };
}

/** Resolves when the session engine allows a prompts/get of name; throws its refusal when not. */
export async function admitPrompt(g, name) {
  if (typeof name !== "string") throw new TypeError("crawlcheck: getPrompt names no prompt");
  await admit(g, "prompts/get", "name", name);
}

/**
 * Resolves when the session engine allows a completion/complete of ref: a
 * prompt's (ref/prompt, by its name) or a resource's (ref/resource, by its
 * uri: a template's uriTemplate or a resource's uri), as the gateway judges it; throws its
 * refusal when not, so a withheld prompt's arguments are not completed by
 * the server. A ref of neither form is a TypeError, never sent.
 */
export async function admitCompletion(g, ref) {
  const member = ref?.type === "ref/prompt" ? "name" : ref?.type === "ref/resource" ? "uri" : undefined;
  if (member === undefined || typeof ref[member] !== "string") throw new TypeError("crawlcheck: complete names no prompt (ref/prompt) or resource template (ref/resource)");
  await admit(g, "completion/complete", member, ref[member]);
}

/**
 * A resources/read the record covers: a ui:// template a handed tool names,
 * read here and checked against its pin, or a resource the session engine
 * allows, read by read() (the SDK's, the framework's); any other URI is
 * refused in the engine's words, one only a resource template matches
 * included.
 */
export async function readChecked(g, params, read) {
  if (!params || typeof params.uri !== "string") throw new TypeError("crawlcheck: readResource names no resource");
  if (params.uri.startsWith("ui://")) return readUITemplate(g, params);
  await admit(g, READ, "uri", params.uri);
  // In the check's serial queue, as every resources/read sent here: a
  // check's ui:// read takes the n-th answer of the method since its mark
  // (fetchAnswer), which a read sent beside it would be.
  return g.serial(read);
}

/**
 * Reads a ui:// template a handed tool names and answers it only when the
 * core finds it the one pinned: the result the core wrote from what it
 * compared (ui_template_check's template), parsed.
 */
async function readUITemplate(g, params) {
  const { rec } = await g.gate();
  const uri = params.uri;
  const tools = (rec.handoff?.tools ?? []).map((t) => new RawJSON(enc.encode(t.tool)));
  let named = [];
  try {
    named = g.cc.call("ui_templates", { tools }).uris;
  } catch {
    // no tool the core can read names it
  }
  if (!named.includes(uri)) throw refusal(g, rec, { list: "ui_templates", key: uri, reason: "not_named" });
  const lock = g.lock;
  // In the serial queue: no other read (a check's, the app's) is sent
  // while this one waits for the n-th answer since its mark.
  const got = await g.serial(() => readAnswer(g, params, AbortSignal.timeout(g.timeout)));
  if (!got.page) throw new PreflightError(`crawlcheck: reading ${JSON.stringify(g.cc.shown(uri))}: ${got.failure}`);
  const check = g.cc.call("ui_template_check", { record: enc.encode(rec.raw), lock, uri, result: got.page });
  if (!check.same) {
    const item = check.reason !== null ? { list: "ui_templates", key: uri, reason: check.reason } : { list: "ui_templates", key: uri, parts: check.parts };
    throw refusal(g, rec, item);
  }
  // The result the core wrote from what it compared, never the answer
  // itself: its members beside contents are in no part's hash.
  if (typeof check.template === "string") return JSON.parse(check.template);
  throw refusal(g, rec, { list: "ui_templates", key: uri, reason: "malformed" });
}

/**
 * Gives client (wrapped by withPreflight) the features methods: answered
 * from the record's handoff, refusing what it does not cover. request is
 * the client's request before withPreflight replaced it.
 */
export function installFeatures(client, g, request) {
  g.featureSend = featureSender(client, { request });
  const getPrompt = client.getPrompt;
  const readResource = client.readResource;
  client.listPrompts = (params) => handedList(g, "prompts", params);
  client.listResources = (params) => handedList(g, "resources", params);
  client.listResourceTemplates = (params) => handedList(g, "resource_templates", params);
  client.getPrompt = async function (params, ...rest) {
    await admitPrompt(g, params?.name);
    return getPrompt.call(this, params, ...rest);
  };
  client.readResource = async function (params, ...rest) {
    return readChecked(g, params, () => readResource.call(this, params, ...rest));
  };
  const complete = client.complete;
  client.complete = async function (params, ...rest) {
    await admitCompletion(g, params?.ref);
    return complete.call(this, params, ...rest);
  };
}
