// One version for the whole project: package.json names the first release
// heading of CHANGELOG.md (the Python package's test checks its own the same way).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

test("package.json's version is the project's, the top of CHANGELOG.md", () => {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
  const changelog = readFileSync(new URL("../../../CHANGELOG.md", import.meta.url), "utf8");
  const first = changelog.split("\n").find((l) => /^## \d/.test(l));
  assert.equal(first.split(" ")[1], pkg.version);
  const lock = JSON.parse(readFileSync(new URL("../package-lock.json", import.meta.url), "utf8"));
  assert.equal(lock.version, pkg.version);
  assert.equal(lock.packages[""].version, pkg.version);
});

test("ERROR_CODES is docs/abi.md's closed list (generated from core/cerr)", async () => {
  const { ERROR_CODES } = await import("../src/index.js");
  const abi = readFileSync(new URL("../../../docs/abi.md", import.meta.url), "utf8");
  const section = abi.split("## Error codes (closed list)")[1].split("\n## ")[0];
  const documented = [...section.matchAll(/^\| `([a-z0-9_]+)` \|/gm)].map((m) => m[1]);
  assert.deepEqual([...ERROR_CODES], documented);
  assert.ok(ERROR_CODES.includes("issuer_keys_invalid"));
});
