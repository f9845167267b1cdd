// A stdio server that prints lines that are no JSON-RPC message before its
// answers (@azure/mcp 2.0.5 prints "No X display available…"): withPreflight
// on both official TypeScript clients reads the list whole, as the SDK
// itself does, counts the skipped lines on the record, and writes the
// record the Go preflight (crawlcheck check) writes, byte for byte.
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MCPSERVER, NOW, now, tempDir, endpointFor, crawlcheck, sdk } from "./helpers.js";
import { withPreflight } from "../src/index.js";

const TOOLS = `[{"name":"get_item","description":"Reads an item.","inputSchema":{"type":"object"}},{"name":"list_items","description":"Lists the items.","inputSchema":{"type":"object"}}]`;

test("stdio: stray lines before the answers are skipped, counted on the record, and every host agrees", async (t) => {
  const dir = tempDir(t);
  const sc = join(dir, "scenario.json");
  writeFileSync(sc, `{"server":{"name":"shop","version":"1.0"},"handshake":"initialize","tools":${TOOLS}}`);
  // A banner, a blank line (no line) and a log line, then the server.
  const banner = join(dir, "banner.sh");
  writeFileSync(banner, `#!/bin/sh\nprintf 'No X display available, browser login disabled\\n\\n[info] starting\\n'\nexec "$@"\n`);
  chmodSync(banner, 0o755);
  const args = [MCPSERVER, "--scenario", sc];
  const endpoint = await endpointFor({ command: banner, args });
  const lock = join(dir, "crawlcheck.lock.json");
  crawlcheck(["lock", "--features=false", "--server", `${banner} ${args.join(" ")}`, "--now", "2026-11-01T00:00:00Z", "-o", lock]);
  const goRecord = crawlcheck(["check", "--lock", lock, "--server", `${banner} ${args.join(" ")}`, "--now", NOW, "--json"]).trim();
  assert.match(goRecord, /"stray_lines":2/);
  assert.match(goRecord, /"effect":"proceed"/);
  for (const major of [1, 2]) {
    const { Client, StdioClientTransport } = await sdk(major);
    const client = withPreflight(new Client({ name: "crawlcheck-test", version: "1.0.0" }), { lock, continuity: { now } });
    await client.connect(new StdioClientTransport({ command: banner, args, stderr: "ignore" }));
    const rec = client.continuity.record;
    const listed = await client.listTools();
    await client.close();
    assert.equal(rec.observed.stray_lines, 2, `SDK ${major}.x`);
    assert.equal(rec.raw, goRecord, `SDK ${major}.x record differs from the Go preflight's (endpoint ${endpoint})`);
    assert.deepEqual(listed.tools.map((x) => x.name).sort(), ["get_item", "list_items"]);
  }
});
