// Every vector of testdata/ (ops, continuity, guard) byte for byte through
// crawlcheck.wasm: under the package's own WASI shim with the host SHA-256
// (Node's default) and without it (the browser path), and under node:wasi.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { instantiate } from "../src/core.js";
import { loadVectors } from "./vectors.js";

const vectors = loadVectors();
const module = await WebAssembly.compile(readFileSync(new URL("../crawlcheck.wasm", import.meta.url)));
const importsSha256 = WebAssembly.Module.imports(module).some((i) => i.module === "crawlcheck" && i.name === "sha256");

const hosts = [
  ["shim, host SHA-256 (Node's default)", { wasi: "shim", hostSha256: true }],
  ["node:wasi, host SHA-256", { wasi: "node", hostSha256: true }],
  ["node:wasi, module SHA-256", { wasi: "node", hostSha256: false }],
  ["browser shim (module SHA-256)", { wasi: "shim", hostSha256: false }],
];

test("the vectors are all there", () => {
  assert.ok(vectors.length >= 300, `only ${vectors.length} vectors`);
  for (const op of ["continuity_check", "guard", "hash_tools", "verify_chain"]) {
    assert.ok(vectors.some((v) => v.op === op), `no vector of ${op}`);
  }
});

for (const [label, opts] of hosts) {
  test(`every vector through ${label}`, async () => {
    const cc = await instantiate(opts);
    if (opts.hostSha256 === false) assert.equal(cc.hostSha256, false);
    else assert.equal(cc.hostSha256, importsSha256, "the host SHA-256 is offered whenever the module imports it");
    let n = 0;
    for (const v of vectors) {
      const got = Buffer.from(cc.callBytes(v.op, v.request));
      if (!got.equals(v.want)) {
        assert.fail(`${v.name}: got\n${got.toString().slice(0, 2000)}\nwant\n${v.want.toString().slice(0, 2000)}`);
      }
      n++;
    }
    assert.equal(n, vectors.length);
  });
}

// The package ships the module gzipped (crawlcheck.wasm.gz, the default);
// the loader inflates gzip wherever it comes from and takes a module given
// uncompressed as it is.
test("the module loads gzipped or not, from bytes or a path; a damaged .gz is refused", async () => {
  const raw = readFileSync(new URL("../crawlcheck.wasm", import.meta.url));
  const gzPath = fileURLToPath(new URL("../crawlcheck.wasm.gz", import.meta.url));
  const gz = readFileSync(gzPath);
  assert.deepEqual([gz[0], gz[1]], [0x1f, 0x8b]);
  assert.ok(gunzipSync(gz).equals(raw), "crawlcheck.wasm.gz is not this crawlcheck.wasm");
  const want = (await instantiate({ wasm: raw })).version();
  for (const wasm of [undefined, gz, gz.buffer.slice(gz.byteOffset, gz.byteOffset + gz.length), gzPath, fileURLToPath(new URL("../crawlcheck.wasm", import.meta.url))]) {
    assert.deepEqual((await instantiate({ wasm })).version(), want);
  }
  const damaged = Buffer.from(gz);
  damaged[damaged.length >> 1] ^= 0xff;
  await assert.rejects(instantiate({ wasm: damaged }), /^CrawlcheckError: crawlcheck: the module's gzip does not inflate: /);
});

test("ABI 2: documents sent as raw attachments give the same bytes as JSON strings", async (t) => {
  const cc = await instantiate();
  if (!cc.raw) return t.skip(`this crawlcheck.wasm is ABI ${cc.abi}: no call_raw`);
  const enc = new TextEncoder();
  let n = 0;
  for (const v of vectors.filter((x) => x.op === "continuity_check" || x.op === "guard")) {
    const req = JSON.parse(v.request.toString());
    for (const k of ["lock", "policy", "key_directory", "receipt"]) if (typeof req[k] === "string") req[k] = enc.encode(req[k]);
    if (Array.isArray(req.observed?.pages)) req.observed.pages = req.observed.pages.map((p) => (typeof p === "string" ? enc.encode(p) : p));
    const [bytes, atts] = cc.encode(req);
    if (atts.length > 0) n++;
    const got = Buffer.from(cc.callBytes(v.op, bytes, atts));
    assert.ok(got.equals(v.want), `${v.name}: with attachments\n${got.toString().slice(0, 600)}`);
  }
  assert.ok(n > 50, `only ${n} requests carried attachments`);
});

test("a host SHA-256 that answers wrong makes the module refuse, with a clear error", async (t) => {
  if (!importsSha256) return t.skip("this crawlcheck.wasm does not import crawlcheck.sha256");
  const cc = await instantiate({ sha256: () => new Uint8Array(32) });
  assert.throws(() => cc.hashTools({ tools: [{ name: "a" }] }), /crawlcheck\.sha256/);
});

test("one method per op the core answers, and no op the core does not", async () => {
  const { load, OPS } = await import("../src/index.js");
  const cc = await load();
  assert.deepEqual([...OPS].sort(), [...cc.version().ops].sort());
  for (const op of OPS) {
    const name = op.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
    assert.equal(typeof cc[name], "function", `no method ${name} for ${op}`);
  }
});
