// Reading JSON-RPC frames as bytes, without JSON.parse: a frame's members
// are kept verbatim (a page is the exact bytes of its result member), so
// that the core, not JavaScript's parser, judges what a server sent.

const dec = new TextDecoder("utf-8", { fatal: true });

// Compared inline, not looked up in a Set: a frame of a 1,000-tool page is
// scanned byte by byte, and a lookup per byte was most of a warm session's
// time in this file.
function ws(b, i) {
  for (let c = b[i]; c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = b[++i]);
  return i;
}

function fail() {
  throw new SyntaxError("not JSON");
}

// value returns the index just past the JSON value at i, checking its
// grammar (not its UTF-8, not duplicate keys below the top level: the
// core's strict parser does that for whatever it is handed).
function value(b, i, depth) {
  if (depth > 512) fail();
  i = ws(b, i);
  const c = b[i];
  if (c === 0x22) return string(b, i);
  if (c === 0x7b) {
    i = ws(b, i + 1);
    if (b[i] === 0x7d) return i + 1;
    for (;;) {
      if (b[i] !== 0x22) fail();
      i = ws(b, string(b, i));
      if (b[i] !== 0x3a) fail();
      i = ws(b, value(b, i + 1, depth + 1));
      if (b[i] === 0x2c) i = ws(b, i + 1);
      else if (b[i] === 0x7d) return i + 1;
      else fail();
    }
  }
  if (c === 0x5b) {
    i = ws(b, i + 1);
    if (b[i] === 0x5d) return i + 1;
    for (;;) {
      i = ws(b, value(b, i, depth + 1));
      if (b[i] === 0x2c) i = i + 1;
      else if (b[i] === 0x5d) return i + 1;
      else fail();
    }
  }
  if (c === 0x74) return literal(b, i, TRUE);
  if (c === 0x66) return literal(b, i, FALSE);
  if (c === 0x6e) return literal(b, i, NULL);
  return number(b, i);
}

const [TRUE, FALSE, NULL] = ["true", "false", "null"].map((s) => Uint8Array.from(s, (ch) => ch.charCodeAt(0)));

/** The index past the literal lit at i, which must be there. */
function literal(b, i, lit) {
  for (let k = 0; k < lit.length; k++) if (b[i + k] !== lit[k]) fail();
  return i + lit.length;
}

function string(b, i) {
  for (i++; i < b.length; i++) {
    const c = b[i];
    if (c === 0x22) return i + 1;
    if (c < 0x20) fail();
    if (c === 0x5c) {
      const e = b[++i];
      if (e === 0x75) {
        for (let k = 1; k <= 4; k++) if (!isHex(b[i + k])) fail();
        i += 4;
      } else if (!ESCAPES.has(e)) fail();
    }
  }
  fail();
}

const ESCAPES = new Set([0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);
const isHex = (c) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
const isDigit = (c) => c >= 0x30 && c <= 0x39;

function number(b, i) {
  const start = i;
  if (b[i] === 0x2d) i++;
  if (b[i] === 0x30) i++;
  else if (isDigit(b[i])) while (isDigit(b[i])) i++;
  else fail();
  if (b[i] === 0x2e) {
    i++;
    if (!isDigit(b[i])) fail();
    while (isDigit(b[i])) i++;
  }
  if (b[i] === 0x65 || b[i] === 0x45) {
    i++;
    if (b[i] === 0x2b || b[i] === 0x2d) i++;
    if (!isDigit(b[i])) fail();
    while (isDigit(b[i])) i++;
  }
  if (i === start) fail();
  return i;
}

/**
 * The members of a JSON object as verbatim byte slices, or null when the
 * bytes are not one JSON object, or the object repeats a key (no caller
 * picks one of two answers).
 * @param {Uint8Array} b
 * @returns {Map<string, Uint8Array> | null}
 */
export function members(b) {
  try {
    let i = ws(b, 0);
    if (b[i] !== 0x7b) return null;
    const out = new Map();
    i = ws(b, i + 1);
    if (b[i] === 0x7d) return ws(b, i + 1) === b.length ? out : null;
    for (;;) {
      if (b[i] !== 0x22) return null;
      const kEnd = string(b, i);
      const key = JSON.parse(dec.decode(b.subarray(i, kEnd)));
      i = ws(b, kEnd);
      if (b[i] !== 0x3a) return null;
      const vStart = ws(b, i + 1);
      const vEnd = value(b, vStart, 0);
      if (out.has(key)) return null;
      out.set(key, b.subarray(vStart, vEnd));
      i = ws(b, vEnd);
      if (b[i] === 0x2c) i = ws(b, i + 1);
      else if (b[i] === 0x7d) return ws(b, i + 1) === b.length ? out : null;
      else return null;
    }
  } catch {
    return null;
  }
}

/** Whether the bytes are one JSON value (grammar only). */
export function isJSON(b) {
  try {
    return ws(b, value(b, 0, 0)) === b.length;
  } catch {
    return false;
  }
}

/** The bytes as text when they are UTF-8, else null. */
export function utf8(b) {
  try {
    return dec.decode(b);
  } catch {
    return null;
  }
}

/** A member's value as a JS value (small members: ids, versions), or undefined. */
export function parseMember(m, key) {
  const raw = m?.get(key);
  if (raw === undefined) return undefined;
  const text = utf8(raw);
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The compact JSON text of an id, so that 7 and "7" stay apart. */
export function idKey(id) {
  return JSON.stringify(id);
}
