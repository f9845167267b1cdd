// Every vector of testdata/ (ops, continuity, guard) byte for byte through
// crawlcheck.wasm: under node:wasi with the host SHA-256 and without it, and
// under the package's own WASI shim (the browser path).
import { test } from "node:test";
import assert from "node:assert/strict";
import { instantiate } from "../src/core.js";
import { loadVectors } from "./vectors.js";

const vectors = loadVectors();

const hosts = [
  ["node:wasi, host SHA-256", { wasi: "node", hostSha256: true }],
  ["node:wasi, module SHA-256", { wasi: "node", hostSha256: false }],
  ["browser shim (module SHA-256)", { wasi: "shim" }],
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
    if (opts.hostSha256 === false || opts.wasi === "shim") assert.equal(cc.hostSha256, false);
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
