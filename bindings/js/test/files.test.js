// The lockfile and the record log are read as regular files of bounded size
// (issue 22, F10), as the Go preflight reads them: /dev/zero, /dev/full, a
// FIFO and an oversized file are each a clear error naming the file, before
// any byte is sent to the server — never a hang or an unbounded read.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { closeSync, openSync, ftruncateSync } from "node:fs";
import { join } from "node:path";
import { load, withPreflight } from "../src/index.js";
import { MCPSERVER, TOOLS, endpointFor, now, pinLock, sdk, stdioParams, tempDir, writeScenario } from "./helpers.js";

function fifo(dir) {
  const p = join(dir, "fifo");
  execFileSync("mkfifo", [p]);
  return p;
}

function sparse(dir, name, size) {
  const p = join(dir, name);
  const fd = openSync(p, "w");
  ftruncateSync(fd, size);
  closeSync(fd);
  return p;
}

/** Connecting a 1.x client with these options; resolves the error connect rejected with. */
async function connectError(t, dir, lock, continuity = {}) {
  const { Client, StdioClientTransport } = await sdk(1);
  const params = stdioParams(writeScenario(dir, { tools: TOOLS }));
  const client = withPreflight(new Client({ name: "t", version: "1" }), { lock, continuity: { now, timeout: 3000, ...continuity } });
  const transport = new StdioClientTransport({ ...params, stderr: "ignore" });
  t.after(() => client.close().catch(() => {}));
  const started = Date.now();
  try {
    await client.connect(transport);
  } catch (e) {
    assert.ok(Date.now() - started < 2000, "refused at once, not after a read or a wait");
    // Refused before the transport started: no server was spawned.
    assert.equal(transport._process, undefined);
    return e;
  }
  throw new Error("connect succeeded");
}

test("a lockfile that is not a regular file of at most the core's request_bytes is refused, naming it", async (t) => {
  const dir = tempDir(t);
  const maxLock = (await load()).limits.request_bytes;
  const cases = [
    ["/dev/zero", /reading the lockfile: \/dev\/zero is not a regular file \(a character device\)/],
    [fifo(dir), /reading the lockfile: .*\/fifo is not a regular file \(a FIFO\)/],
    [dir, /reading the lockfile: .* is not a regular file \(a directory\)/],
    [sparse(dir, "big.lock.json", maxLock + 1), new RegExp(`big\\.lock\\.json holds ${maxLock + 1} bytes, more than the ${maxLock} this reads`)],
  ];
  for (const [lock, want] of cases) {
    const e = await connectError(t, dir, lock);
    assert.match(e.message, want, lock);
  }
});

test("a record log that is not a regular file of at most the core's record_log_bytes is refused, naming it", async (t) => {
  const dir = tempDir(t);
  const maxLog = (await load()).limits.record_log_bytes;
  const lock = await pinLock(dir, TOOLS, await endpointFor({ command: MCPSERVER, args: ["--scenario", join(dir, "scenario.json")] }));
  const cases = [
    ["/dev/zero", /record log \/dev\/zero: \/dev\/zero is not a regular file \(a character device\): a record log is a regular file of at most/],
    ["/dev/full", /record log \/dev\/full: \/dev\/full is not a regular file \(a character device\)/],
    [fifo(dir), /record log .*\/fifo: .*\/fifo is not a regular file \(a FIFO\)/],
    [sparse(dir, "big.jsonl", maxLog + 1), new RegExp(`big\\.jsonl holds ${maxLog + 1} bytes, more than the ${maxLog} this reads`)],
  ];
  for (const [logPath, want] of cases) {
    const e = await connectError(t, dir, lock, { logPath });
    assert.match(e.message, want, logPath);
  }
});
