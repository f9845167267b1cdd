// web/serve.mjs (make web): a request whose percent-escapes are not UTF-8
// gets 400 and the server keeps serving (it used to die on the first one).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { request } from "node:http";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const SERVE = fileURLToPath(new URL("../web/serve.mjs", import.meta.url));

/** GET of a raw path (sent as written, not re-encoded); resolves the status. */
function get(base, path) {
  return new Promise((resolve, reject) => {
    const u = new URL(base);
    const req = request({ host: u.hostname, port: u.port, path, method: "GET" }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    });
    req.on("error", reject);
    req.end();
  });
}

test("serve.mjs answers a malformed percent-escape with 400 and keeps serving", async (t) => {
  const child = spawn(process.execPath, [SERVE, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  t.after(() => child.kill("SIGTERM"));
  const rl = createInterface({ input: child.stdout });
  const base = await new Promise((resolve, reject) => {
    rl.on("line", (line) => {
      const m = /^web: the offline checker is at (http:\/\/127\.0\.0\.1:\d+\/)$/.exec(line);
      if (m) resolve(m[1]);
    });
    child.once("exit", (c) => reject(new Error(`serve.mjs exited (${c})`)));
  });
  for (const bad of ["/%E0%A4%A", "/%", "/%ZZ", "/%C0%80"]) assert.equal(await get(base, bad), 400, bad);
  assert.equal(await get(base, "/"), 200);
  assert.equal(await get(base, "/%2e%2e/package.json"), 404);
  assert.equal(child.exitCode, null);
});
