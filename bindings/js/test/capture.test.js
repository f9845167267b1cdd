// The stdio capture's line splitting (issue 23): however the child's
// stdout is cut into chunks, the recorder takes each frame's exact bytes
// (a trailing \r dropped, as the SDK drops it) and the SDK's own read
// buffer receives the same stream, whole lines only. The SDK's
// StdioClientTransport is real; it is attached to but not started, and
// its read buffer is fed the chunks as the child's stdout would.
import { test } from "node:test";
import assert from "node:assert/strict";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { attach } from "../src/capture.js";

const enc = new TextEncoder();
const dec = new TextDecoder();
const LIST = '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","description":"é\\n"}]}}';
const INIT = '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}';
const NOTE = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}';
const STREAM = enc.encode(`${INIT}\r\n${NOTE}\n\n${LIST}\r\n`);

/** Feeds the stream cut at the given offsets; returns what each side saw. */
function feed(cuts) {
  const transport = new StdioClientTransport({ command: "unused" });
  const { rec } = attach(transport, { maxAnswerBytes: 1 << 20 });
  rec.sent({ jsonrpc: "2.0", id: 0, method: "initialize", params: {} });
  rec.sent({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
  const sdk = [];
  let at = 0;
  for (const end of [...cuts, STREAM.length]) {
    transport._readBuffer.append(Buffer.from(STREAM.subarray(at, end)));
    for (;;) {
      let m;
      try {
        m = transport._readBuffer.readMessage();
      } catch {
        m = { id: "unreadable" }; // the blank line: the SDK reports it and reads on
      }
      if (m === null) break;
      sdk.push(m);
    }
    at = end;
  }
  return { rec, sdk };
}

test("the capture and the SDK see the same frames wherever the chunks are cut", () => {
  const cuts = [[]];
  for (let i = 1; i < STREAM.length; i += 3) {
    cuts.push([i]);
    for (let j = i + 1; j < STREAM.length; j += 29) cuts.push([i, j]);
  }
  for (const c of cuts) {
    const { rec, sdk } = feed(c);
    const where = `cut at ${c.join(", ")}`;
    assert.equal(dec.decode(rec.nth("tools/list", 0).answer), LIST, where);
    assert.equal(dec.decode(rec.nth("initialize", 0).answer), INIT, where);
    assert.equal(dec.decode(rec.nth("tools/list", 0).fields.get("result")), LIST.slice(LIST.indexOf('{"tools"'), -1), where);
    assert.equal(rec.listChanged, 1, where);
    assert.deepEqual(sdk.map((m) => m.id ?? m.method), [0, "notifications/tools/list_changed", "unreadable", 1], where);
  }
});
