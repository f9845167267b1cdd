// A long-lived instance, as load() keeps one: many 1,000-tool calls, then
// 10,000-tool ones. Bound straight to the module, Node 20's own WASI
// functions crashed the process here (SIGSEGV) once the module's memory had
// grown; the loader calls them through wrappers (core.js). Run in a child
// process, so a crash fails this test instead of the runner.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const CORE = fileURLToPath(new URL("../src/core.js", import.meta.url));

const SCRIPT = `
import { instantiate } from ${JSON.stringify(CORE)};
const cc = await instantiate({ wasi: "node" });
const enc = new TextEncoder();
const mk = (n) => Array.from({ length: n }, (_, i) => ({ name: "tool_" + i, description: "Reads record " + i + " of the shop's catalogue and returns it with its price, stock and supplier.", inputSchema: { type: "object", properties: { id: { type: "string" } } } }));
let last;
for (const [n, times] of [[1000, 12], [10000, 2]]) {
  const tools = mk(n);
  for (let r = 0; r < times; r++) {
    const lock = enc.encode(cc.makeLock({ tools, approved_at: "2026-11-01T00:00:00Z", server: { url: "stdio:x" } }).lock);
    last = cc.continuityCheck({ now: "2026-11-30T12:00:00Z", lock, observed: { endpoint: "stdio:x", pages: [enc.encode(JSON.stringify({ tools }))] } });
  }
}
console.log(last.effect, last.observed.count);
`;

test("a long-lived instance survives many calls and then large ones (node:wasi)", () => {
  const r = spawnSync(process.execPath, ["--no-warnings", "--input-type=module", "-e", SCRIPT], { encoding: "utf8", timeout: 300000 });
  assert.equal(r.signal, null, `the process died of ${r.signal}`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), "proceed 10000");
});
