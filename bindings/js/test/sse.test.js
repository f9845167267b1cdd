// The capture's event-stream parser against the one the official SDKs read
// with (eventsource-parser, and the SDKs' rule for which events they route:
// data not empty, no type or "message"): for each stream, cut at every
// byte, the frames the capture takes are exactly the ones the SDK routes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { EventSourceParserStream } from "eventsource-parser/stream";
import { readEvents } from "../src/capture.js";

const STREAMS = {
  "priming event before the answer": 'id: 1_0\ndata: \n\nid: 1_1\nevent: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n',
  "comments and retry": ': keep-alive\nretry: 3000\n:\ndata: {"a":1}\n\n',
  "multi-line data": 'data: {"a":\ndata: 1}\n\n',
  "events without data": "event: message\n\nid: 7\n\n\n\ndata: x\n\n",
  "id alone": "id\n\nid:\n\nid: 9\n\n",
  "CRLF and lone CR": 'data: {"b":2}\r\n\r\ndata: {"c":3}\r\rdata: {"d"\r\ndata: :4}\n\r\n',
  "other event types": 'event: endpoint\ndata: /message?x=1\n\nevent: ping\ndata: {}\n\nevent:\ndata: {"e":5}\n\n',
  "field without a space, data without a colon": 'data:{"f":6}\n\ndata\ndata\n\ndata\n\n',
  "a BOM, unknown fields": '\ufeffdata: {"g":7}\nfoo: bar\n\n',
  "an event the stream ends inside": 'data: {"h":8}\n\ndata: {"i":9}\n',
  "empty data line among others": "data:\ndata: y\n\ndata: \ndata:\n\n",
};

// The frames routed, pinned: a parser change in a later SDK shows here.
const EXPECTED = {
  "priming event before the answer": ['{"jsonrpc":"2.0","id":1,"result":{}}'],
  "comments and retry": ['{"a":1}'],
  "multi-line data": ['{"a":\n1}'],
  "events without data": ["x"],
  "id alone": [],
  "CRLF and lone CR": ['{"b":2}', '{"c":3}', '{"d"\n:4}'],
  "other event types": ['{"e":5}'],
  "field without a space, data without a colon": ['{"f":6}', "\n"],
  "a BOM, unknown fields": ['{"g":7}'],
  "an event the stream ends inside": ['{"h":8}'],
  "empty data line among others": ["\ny", "\n"],
};

/** A stream of bytes delivered in pieces cut at cuts. */
function chunked(bytes, cuts) {
  return new ReadableStream({
    start(ctl) {
      let at = 0;
      for (const c of [...cuts, bytes.length]) {
        ctl.enqueue(bytes.slice(at, c));
        at = c;
      }
      ctl.close();
    },
  });
}

/**
 * The data of each event the SDK's transport routes, read as both majors
 * read a response body (TextDecoderStream, EventSourceParserStream, then
 * their rule: data not empty, no type or "message").
 */
async function sdkRoutes(bytes, cuts) {
  const out = [];
  for await (const ev of chunked(bytes, cuts).pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream())) {
    if (!ev.data) continue;
    if (!ev.event || ev.event === "message") out.push(ev.data);
  }
  return out;
}

async function captured(bytes, cuts) {
  const frames = [];
  const stream = chunked(bytes, cuts);
  const passed = [];
  for await (const chunk of readEvents(stream, 1 << 20, () => new Error("over"), (f) => frames.push(new TextDecoder().decode(f)))) passed.push(...chunk);
  assert.deepEqual(new Uint8Array(passed), bytes, "the SDK is handed the stream unchanged");
  return frames;
}

for (const [name, text] of Object.entries(STREAMS)) {
  test(`event stream: ${name}`, async () => {
    const bytes = new TextEncoder().encode(text);
    const want = await sdkRoutes(bytes, []);
    assert.deepEqual(want, EXPECTED[name], "what the SDK routes, as pinned here");
    assert.deepEqual(await captured(bytes, []), want, "in one chunk");
    for (let i = 1; i < bytes.length; i++) {
      assert.deepEqual(await sdkRoutes(bytes, [i]), want, `the SDK, cut at byte ${i}`);
      assert.deepEqual(await captured(bytes, [i]), want, `cut at byte ${i}`);
    }
  });
}

test("event stream: an event past the limit ends the stream", async () => {
  const bytes = new TextEncoder().encode(`: ${"x".repeat(100)}\ndata: ${"y".repeat(100)}\n\n`);
  const stream = new ReadableStream({
    start(ctl) {
      ctl.enqueue(bytes);
      ctl.close();
    },
  });
  const frames = [];
  await assert.rejects(async () => {
    for await (const _ of readEvents(stream, 150, () => new Error("over the limit"), (f) => frames.push(f)));
  }, /over the limit/);
  assert.equal(frames.length, 0);
});
