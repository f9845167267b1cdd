// The browser path in a real browser (headless Chromium, when the machine
// has one): the package's browser entry loads crawlcheck.wasm.gz without a
// bundler (inflated by the browser's DecompressionStream) under its own WASI
// shim, and every vector of testdata/ gives the same bytes there. Skipped
// where no Chromium is installed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { spawn, execFileSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { loadVectors } from "./vectors.js";
import { tempDir } from "./helpers.js";

const PKG = fileURLToPath(new URL("..", import.meta.url));

function findChromium() {
  for (const c of [process.env.CHROMIUM, "chromium", "chromium-browser", "google-chrome"]) {
    if (!c) continue;
    try {
      execFileSync(c, ["--version"], { stdio: "ignore" });
      return c;
    } catch {
      // not this one
    }
  }
  return null;
}

const PAGE = `<!doctype html><meta charset="utf-8"><title>crawlcheck</title>
<script type="module">
import { load, instantiate, CoreError } from "/src/browser.js";
const b64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const report = (r) => fetch("/result", { method: "POST", body: JSON.stringify(r) });
try {
  const cc = await load();
  const vectors = await (await fetch("/vectors.json")).json();
  const failed = [];
  for (const v of vectors) {
    const got = cc.callBytes(v.op, b64(v.request));
    const want = b64(v.want);
    if (got.length !== want.length || got.some((x, i) => x !== want[i])) failed.push(v.name);
  }
  let code = null;
  try { cc.call("no_such_op", {}); } catch (e) { code = e instanceof CoreError ? e.code : String(e); }
  await report({ wasi: cc.wasi, hostSha256: cc.hostSha256, n: vectors.length, failed, code, same: cc === (await load()) });
} catch (e) {
  await report({ error: String(e && e.stack || e) });
}
</script>`;

test("a real browser loads the package without a bundler and gives every vector's bytes", async (t) => {
  const chromium = findChromium();
  if (!chromium) return t.skip("no Chromium on this machine");
  const vectors = loadVectors().map((v) => ({ name: v.name, op: v.op, request: v.request.toString("base64"), want: v.want.toString("base64") }));
  let resolveResult;
  const result = new Promise((r) => (resolveResult = r));
  const server = createServer((req, res) => {
    if (req.method === "POST" && req.url === "/result") {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        res.end();
        resolveResult(JSON.parse(body));
      });
      return;
    }
    if (req.url === "/") return res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
    if (req.url === "/vectors.json") return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(vectors));
    const path = normalize(join(PKG, decodeURIComponent(req.url)));
    if (!path.startsWith(join(PKG, "src")) && path !== join(PKG, "crawlcheck.wasm.gz")) return res.writeHead(404).end();
    try {
      // As a static server sends a .gz: the file's bytes, no Content-Encoding.
      const type = path.endsWith(".gz") ? "application/gzip" : "text/javascript";
      res.writeHead(200, { "content-type": type }).end(readFileSync(path));
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  t.after(() => server.close());
  const url = `http://127.0.0.1:${server.address().port}/`;
  // The profile is removed only once the browser has exited: Chromium
  // writes to it until it does, and a removal racing it fails the test.
  const profile = tempDir();
  const browser = spawn(chromium, ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", `--user-data-dir=${profile}`, url], { stdio: "ignore" });
  const exited = new Promise((r) => browser.once("exit", r));
  t.after(async () => {
    browser.kill("SIGKILL");
    await exited;
    rmSync(profile, { recursive: true, force: true });
  });
  const got = await Promise.race([result, new Promise((_, reject) => setTimeout(() => reject(new Error("no result from the browser in 120 s")), 120000))]);
  assert.equal(got.error, undefined, got.error);
  assert.equal(got.wasi, "shim");
  assert.equal(got.hostSha256, false);
  assert.equal(got.same, true);
  assert.equal(got.code, "unknown_op");
  assert.equal(got.n, vectors.length);
  assert.deepEqual(got.failed, []);
});
