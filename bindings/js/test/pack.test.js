// `npm pack` gives a tarball that installs in an empty folder without the
// network and works: the core loads from the crawlcheck.wasm inside it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tempDir } from "./helpers.js";

const PKG = fileURLToPath(new URL("..", import.meta.url));
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

test("npm pack installs offline in an empty folder and loads", (t) => {
  const out = tempDir(t);
  execFileSync(npm, ["pack", "--silent", "--pack-destination", out], { cwd: PKG, stdio: ["ignore", "pipe", "inherit"] });
  const tgz = readdirSync(out).find((f) => f.endsWith(".tgz"));
  assert.equal(tgz, "crawlcheck-sdk-2.0.0.tgz");
  const app = join(out, "app");
  execFileSync("mkdir", [app]);
  writeFileSync(join(app, "package.json"), '{"name":"app","private":true,"type":"module"}');
  execFileSync(npm, ["install", "--offline", "--no-audit", "--no-fund", "--silent", join(out, tgz)], { cwd: app, stdio: ["ignore", "inherit", "inherit"] });
  writeFileSync(
    join(app, "main.js"),
    `import { load, withPreflight } from "@crawlcheck/sdk";
const cc = await load();
const again = await load();
console.log(JSON.stringify({ same: cc === again, engine: cc.version().engine, wasi: cc.wasi, withPreflight: typeof withPreflight,
  hash: cc.hashTools({ tools: [{ name: "echo" }] }).tools_sha256 }));`,
  );
  const got = JSON.parse(execFileSync(process.execPath, ["main.js"], { cwd: app, encoding: "utf8" }));
  assert.equal(got.same, true);
  assert.match(got.engine, /^crawlcheck-core\//);
  assert.equal(got.wasi, "shim");
  assert.equal(got.withPreflight, "function");
  assert.match(got.hash, /^[0-9a-f]{64}$/);
});
