// bench.mjs — the Node half of make bench (hosttest/bench): crawlcheck.wasm
// under node:wasi through the ABI-2 raw path, with node:crypto as the
// module's crawlcheck.sha256, against a plain-JS peer written for the bench.
//
// Usage:
//   node bench.mjs settled WASM PAGE LOCK   both contenders, interleaved in
//                                           this process; medians per call
//   node bench.mjs oneshot-wasm WASM PAGE LOCK   load, then one check
//   node bench.mjs oneshot-js PAGE LOCK          one plain-JS check
// Prints one JSON object (milliseconds).
import { readFileSync } from 'node:fs';
import { WASI } from 'node:wasi';
import { createHash } from 'node:crypto';

const NOW = '2026-11-30T12:00:00Z';
const ENDPOINT = 'https://bench.example/mcp';

// ---- the wasm host: what an SDK does ----

async function load(path) {
  const wasi = new WASI({ version: 'preview1', args: [], env: {}, returnOnExit: true });
  let exports;
  const crawlcheck = {
    // crawlcheck.sha256(data_ptr, data_len, out_ptr) -> 1 (docs/abi.md)
    sha256(ptr, len, out) {
      const mem = new Uint8Array(exports.memory.buffer);
      mem.set(createHash('sha256').update(mem.subarray(ptr, ptr + len)).digest(), out);
      return 1;
    },
  };
  const module = await WebAssembly.compile(readFileSync(path));
  const instance = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: wasi.wasiImport, crawlcheck });
  exports = instance.exports;
  wasi.initialize(instance);
  if (exports.abi_version() !== 2) throw new Error(`abi ${exports.abi_version()}`);
  return exports;
}

const enc = new TextEncoder();

// callRaw runs op through call_raw with the documents as attachments.
function callRaw(e, op, request, docs) {
  let attLen = 0;
  for (const d of docs) attLen += 4 + d.length;
  const o = enc.encode(op);
  const r = enc.encode(request);
  const op_p = e.malloc(o.length), req_p = e.malloc(r.length), att_p = e.malloc(attLen);
  let mem = new Uint8Array(e.memory.buffer);
  mem.set(o, op_p);
  mem.set(r, req_p);
  const view = new DataView(e.memory.buffer);
  let at = att_p;
  for (const d of docs) {
    view.setUint32(at, d.length, true);
    mem.set(d, at + 4);
    at += 4 + d.length;
  }
  const res = e.call_raw(op_p, o.length, req_p, r.length, att_p, attLen);
  const ptr = Number(res >> 32n), len = Number(res & 0xffffffffn);
  mem = new Uint8Array(e.memory.buffer);
  const out = Buffer.from(mem.subarray(ptr, ptr + len)); // a copy
  e.free(ptr); e.free(op_p); e.free(req_p); e.free(att_p);
  return out;
}

function wasmCheck(e, page, lock) {
  const req = `{"now":"${NOW}","mode":"enforce","lock":{"$raw":1},"observed":{"endpoint":"${ENDPOINT}","pages":[{"$raw":0}]}}`;
  const out = callRaw(e, 'continuity_check', req, [page, lock]);
  if (out[6] !== 0x74) throw new Error('continuity_check: ' + out.subarray(0, 300).toString()); // {"ok":true
  return out;
}

// ---- the plain-JS peer ----

// canonical is RFC 8785: JSON.stringify's strings and numbers (ES6
// Number::toString), members sorted by UTF-16 code units (sort()'s order).
function canonical(v) {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(canonical).join(',') + ']';
  const keys = Object.keys(v).sort();
  let s = '{';
  for (let i = 0; i < keys.length; i++) {
    if (i) s += ',';
    s += JSON.stringify(keys[i]) + ':' + canonical(v[keys[i]]);
  }
  return s + '}';
}

const sha256hex = (s) => createHash('sha256').update(s).digest('hex');

// peerCheck parses the page and the lockfile, hashes every tool as
// docs/hashing.md says (crawlcheck v1 tool hash and list hash) and compares
// each with the lockfile's entry.
function peerCheck(page, lock) {
  const list = JSON.parse(page.toString('utf8')).tools;
  const l = JSON.parse(lock.toString('utf8'));
  const got = new Map();
  for (const t of list) {
    const h = sha256hex(canonical({ annotations: t.annotations ?? null, description: t.description ?? null,
      inputSchema: t.inputSchema ?? null, name: t.name }));
    got.set(t.name, h);
  }
  const listHash = sha256hex([...got.values()].sort().join('\n'));
  const changed = [];
  const locked = new Set();
  for (const e of l.tools) {
    locked.add(e.name);
    if (got.get(e.name) !== e.sha256) changed.push(e.name); // modified or removed
  }
  for (const name of got.keys()) if (!locked.has(name)) changed.push(name); // added
  if (listHash !== l.tools_sha256 || changed.length) throw new Error('plain-JS peer disagrees with the lockfile');
  return changed;
}

// ---- modes ----

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; };
const [mode, ...args] = process.argv.slice(2);
const t0 = performance.now();

if (mode === 'settled') {
  const [wasm, pagePath, lockPath] = args;
  const e = await load(wasm);
  const page = readFileSync(pagePath), lock = readFileSync(lockPath);
  // The core keeps the last few pages it read, by their bytes (the walk
  // memo): each wasm call gets the page followed by other whitespace, one of
  // more than the core's window of sightings remembers, so that every call
  // reads it and keeps nothing (benchdata.Unseen, benchdata.UnseenAttachments).
  const unseen = Array.from({ length: 17 }, (_, i) => Buffer.concat([page, Buffer.alloc(i, ' ')]));
  let k = 0;
  const w = [], j = [];
  for (let i = 0; i < 3; i++) { wasmCheck(e, unseen[k++ % unseen.length], lock); peerCheck(page, lock); } // warm up
  const deadline = performance.now() + 4000;
  while (w.length < 11 || (w.length < 41 && performance.now() < deadline)) {
    const p = unseen[k++ % unseen.length];
    let s = performance.now(); wasmCheck(e, p, lock); w.push(performance.now() - s);
    s = performance.now(); peerCheck(page, lock); j.push(performance.now() - s);
    if (w.length >= 5 && performance.now() > deadline + 20000) break;
  }
  console.log(JSON.stringify({ wasm: median(w), js: median(j), samples: w.length }));
} else if (mode === 'oneshot-wasm') {
  const [wasm, pagePath, lockPath] = args;
  const e = await load(wasm);
  const t1 = performance.now();
  const page = readFileSync(pagePath), lock = readFileSync(lockPath);
  wasmCheck(e, page, lock);
  const t2 = performance.now();
  console.log(JSON.stringify({ load: t1 - t0, first: t2 - t1, total: t2 - t0 }));
} else if (mode === 'oneshot-js') {
  const [pagePath, lockPath] = args;
  const page = readFileSync(pagePath), lock = readFileSync(lockPath);
  peerCheck(page, lock);
  const t2 = performance.now();
  console.log(JSON.stringify({ load: 0, first: t2 - t0, total: t2 - t0 }));
} else {
  console.error('usage: node bench.mjs settled WASM PAGE LOCK | oneshot-wasm WASM PAGE LOCK | oneshot-js PAGE LOCK');
  process.exit(2);
}
