// Reads testdata/ the way hosttest/vectors does: the request and response
// bytes exactly as written in the files, compacted token for token (white
// space outside strings removed, nothing re-escaped), never re-serialized.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const TESTDATA = fileURLToPath(new URL("../../../testdata/", import.meta.url));

const SUITES = [
  ["continuity.json", "continuity_check", "record"],
  ["guard.json", "guard", "answer"],
  ["faults.json", "continuity_check", "record"],
  ["issuer-faults.json", "continuity_check", "record"],
];

/** Every vector: {name, op, request: Buffer, want: Buffer}. */
export function loadVectors(root = TESTDATA) {
  const out = [];
  const opsDir = join(root, "ops");
  for (const op of readdirSync(opsDir).sort()) {
    for (const file of readdirSync(join(opsDir, op)).filter((f) => f.endsWith(".json")).sort()) {
      const text = readFileSync(join(opsDir, op, file), "utf8");
      const m = members(text, 0).members;
      const name = `ops/${op}/${file.slice(0, -5)}`;
      if (JSON.parse(m.op) !== op) throw new Error(`${name}: op ${m.op} in folder ${op}`);
      let request;
      if (m.request !== undefined) request = Buffer.from(compact(m.request));
      else if (m.request_raw !== undefined) request = Buffer.from(JSON.parse(m.request_raw));
      else if (m.request_b64 !== undefined) request = Buffer.from(JSON.parse(m.request_b64), "base64");
      else throw new Error(`${name}: no request`);
      out.push({ name, op, request, want: Buffer.from(compact(m.response)) });
    }
  }
  for (const [file, op, member] of SUITES) {
    const text = readFileSync(join(root, file), "utf8");
    const cases = elements(text, members(text, 0).spans.cases[0]);
    for (const [s, e] of cases) {
      const c = members(text, s).members;
      const name = `${file.slice(0, -5)}/${JSON.parse(c.name)}`;
      out.push({
        name,
        op,
        request: Buffer.from(compact(c.request)),
        want: Buffer.from(`{"ok":true,"result":${compact(c[member])}}`),
      });
    }
  }
  return out;
}

/** JSON text without insignificant white space; every token kept as written. */
export function compact(text) {
  let out = "";
  let inStr = false;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inStr) {
      if (ch === "\\") i++;
      else if (ch === '"') inStr = false;
      continue;
    }
    if (ch === '"') inStr = true;
    else if (ch === " " || ch === "\t" || ch === "\n" || ch === "\r") {
      out += text.slice(from, i);
      from = i + 1;
    }
  }
  return out + text.slice(from);
}

function ws(text, i) {
  while (i < text.length && " \t\r\n".includes(text[i])) i++;
  return i;
}

// skip returns the index just past the JSON value starting at i.
function skip(text, i) {
  i = ws(text, i);
  const ch = text[i];
  if (ch === '"') {
    for (i++; text[i] !== '"'; i++) if (text[i] === "\\") i++;
    return i + 1;
  }
  if (ch === "{" || ch === "[") {
    let depth = 0;
    let inStr = false;
    for (; i < text.length; i++) {
      const c = text[i];
      if (inStr) {
        if (c === "\\") i++;
        else if (c === '"') inStr = false;
      } else if (c === '"') inStr = true;
      else if (c === "{" || c === "[") depth++;
      else if (c === "}" || c === "]") {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    throw new Error("unterminated value");
  }
  while (i < text.length && !",}] \t\r\n".includes(text[i])) i++;
  return i;
}

// members returns the raw text and span of each member of the object at i.
export function members(text, i) {
  i = ws(text, i);
  if (text[i] !== "{") throw new Error("not an object");
  const out = { members: {}, spans: {} };
  i = ws(text, i + 1);
  while (text[i] !== "}") {
    const kEnd = skip(text, i);
    const key = JSON.parse(text.slice(i, kEnd));
    i = ws(text, kEnd);
    if (text[i] !== ":") throw new Error("expected :");
    const vStart = ws(text, i + 1);
    const vEnd = skip(text, vStart);
    out.members[key] = text.slice(vStart, vEnd);
    out.spans[key] = [vStart, vEnd];
    i = ws(text, vEnd);
    if (text[i] === ",") i = ws(text, i + 1);
  }
  return out;
}

export function elements(text, i) {
  i = ws(text, i);
  if (text[i] !== "[") throw new Error("not an array");
  const out = [];
  i = ws(text, i + 1);
  while (text[i] !== "]") {
    const end = skip(text, i);
    out.push([i, end]);
    i = ws(text, end);
    if (text[i] === ",") i = ws(text, i + 1);
  }
  return out;
}
