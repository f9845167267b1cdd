// testdata/faults.json run live (docs/testdata.md): each host fault's server
// (a port nothing listens on, a command that does not start, one that exits,
// one that hangs) gives exactly the golden record through withPreflight, on
// SDK 1.x and 2.x: the same bytes as the Go preflight, the CLI and Python,
// because the record's detail is the core's wording of the fault, never the
// SDK's error text.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withPreflight } from "../src/index.js";
import { TESTDATA, compact, members, elements } from "./vectors.js";
import { connectRecord, sdk, tempDir } from "./helpers.js";

const text = readFileSync(join(TESTDATA, "faults.json"), "utf8");
const golden = JSON.parse(text);
const spans = elements(text, members(text, 0).spans.cases[0]);

for (const major of [1, 2]) {
  golden.cases.forEach((c, i) => {
    if (c.server === null) return;
    test(`faults.json, SDK ${major}.x: ${c.name}`, { timeout: 300000 }, async (t) => {
      const { Client, StdioClientTransport, StreamableHTTPClientTransport } = await sdk(major);
      const dir = tempDir(t);
      const lockPath = join(dir, "lock.json");
      writeFileSync(lockPath, JSON.stringify(c.request.lock));
      const now = new Date(c.request.now);
      const client = withPreflight(new Client({ name: "faults", version: "1" }), {
        lock: lockPath,
        continuity: { now: () => now, timeout: c.deadline_ms ?? golden.timeout_ms, mode: c.request.mode },
      });
      const transport = c.server.url
        ? new StreamableHTTPClientTransport(new URL(c.server.url))
        : new StdioClientTransport({ command: c.server.command[0], args: c.server.command.slice(1), stderr: "pipe" });
      // A fault in the handshake leaves no session, one at tools/list a
      // session whose record pauses it.
      const raw = await connectRecord(client, transport);
      const [s] = spans[i];
      assert.equal(raw, compact(members(text, s).members.record));
    });
  });
}
