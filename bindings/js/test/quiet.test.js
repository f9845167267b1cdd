// A plain Node run of the package prints nothing of its own on stderr
// (issue 34, item 7): node:wasi printed "ExperimentalWarning: WASI" at
// every run, so the module runs under the package's shim in Node too. The
// process's other warnings are left alone: the run below emits one, and
// it is printed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const PKG = fileURLToPath(new URL("..", import.meta.url));

const SCRIPT = `
import { load } from "@crawlcheck/sdk";
const cc = await load();
const tools = [{ name: "get_item", description: "Reads an item.", inputSchema: { type: "object" } }];
const now = "2026-12-01T10:00:00Z";
const { lock } = cc.makeLock({ tools, approved_at: now, server: { url: "http://127.0.0.1:1/mcp" } });
const page = new TextEncoder().encode(JSON.stringify({ tools }));
const h = cc.continuityHandoff({ now, lock: new TextEncoder().encode(lock), observed: { endpoint: "http://127.0.0.1:1/mcp", pages: [page] } });
console.log(JSON.stringify({ wasi: cc.wasi, effect: h.record.effect, session: h.session }));
if (process.env.EMIT) process.emitWarning("a warning of the program's own");
`;

function run(env = {}) {
  return spawnSync(process.execPath, ["--input-type=module", "-e", SCRIPT], { cwd: PKG, encoding: "utf8", env: { ...process.env, NODE_OPTIONS: "", ...env } });
}

test("node -e: import the package and check a list; nothing on stderr", () => {
  const r = run();
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.deepEqual(JSON.parse(r.stdout), { wasi: "shim", effect: "proceed", session: "proceed" });
});

test("the program's own warnings still print", () => {
  const r = run({ EMIT: "1" });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /Warning: a warning of the program's own/);
  assert.doesNotMatch(r.stderr, /ExperimentalWarning/);
});
