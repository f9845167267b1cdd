// testdata/issuer-faults.json run live (docs/testdata.md): an issuer that
// gives nothing to judge (nothing listening, hanging past its deadline,
// answering 500, too much, or what is not JSON) gives exactly the golden
// record through withPreflight, on SDK 1.x and 2.x: the same bytes as the Go
// preflight, the CLI and Python, because the issuer member names the step and
// the fault and the core words the detail, never the fetch's error text.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { load, withPreflight } from "../src/index.js";
import { TESTDATA, compact, members, elements } from "./vectors.js";
import { connectRecord, sdk, startIssuer, tempDir } from "./helpers.js";

const text = readFileSync(join(TESTDATA, "issuer-faults.json"), "utf8");
const golden = JSON.parse(text);
const spans = elements(text, members(text, 0).spans.cases[0]);
const enc = new TextEncoder();

for (const major of [1, 2]) {
  golden.cases.forEach((c, i) => {
    test(`issuer-faults.json, SDK ${major}.x: ${c.name}`, async (t) => {
      const { Client, StdioClientTransport } = await sdk(major);
      const cc = await load();
      const dir = tempDir(t);
      const lockPath = join(dir, "lock.json");
      writeFileSync(lockPath, JSON.stringify(c.request.lock));
      const url = c.down ? (await startIssuer(t, ["--down", c.down])).url : c.request.issuer.url;
      const now = new Date(c.request.now);
      const continuity = {
        now: () => now,
        mode: c.request.mode,
        issuer: { url, pinnedKeys: c.request.pinned_keys ?? [], timeout: c.deadline_ms ?? golden.timeout_ms },
      };
      if (c.request.key_directory) continuity.keyDirectory = enc.encode(JSON.stringify(c.request.key_directory));
      const client = withPreflight(new Client({ name: "issuer-faults", version: "1" }), { lock: lockPath, continuity });
      const [command, ...args] = golden.server.command;
      const raw = await connectRecord(client, new StdioClientTransport({ command, args, stderr: "ignore" }));
      // The golden record when the issuer is the request's own; else the
      // core's record of the request naming the test issuer's URL.
      const [s] = spans[i];
      const want = url === c.request.issuer.url ? compact(members(text, s).members.record) : cc.callResultText("continuity_check", { ...c.request, issuer: { ...c.request.issuer, url } });
      assert.equal(raw, want);
    });
  });
}
