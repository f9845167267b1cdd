// The session engine's sequences (testdata/session.json) through
// crawlcheck.wasm: each event in turn, the state kept as the text the core
// answered (the host never reads it), the actions byte for byte. The
// executors (preflight.js) do this with a transport, files and a clock.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { load } from "../src/core.js";
import { TESTDATA } from "./vectors.js";

test("the session sequences replay byte for byte", async () => {
  const cc = await load();
  const { sequences } = JSON.parse(readFileSync(join(TESTDATA, "session.json"), "utf8"));
  assert.ok(sequences.length >= 10, `only ${sequences.length} sequences`);
  for (const seq of sequences) {
    let state = null;
    seq.events.forEach((event, i) => {
      const req = { event };
      if (state !== null) req.state = new TextEncoder().encode(state);
      const answer = cc.callResultText("session_step", req);
      // The state is the answer's last member, a string: what precedes it
      // is the actions' text as the core wrote it.
      const cut = answer.lastIndexOf(',"state":"');
      const actions = answer.slice('{"actions":'.length, cut);
      const want = cc.call("canonicalize", { json: JSON.stringify(seq.actions[i]) }).canonical;
      assert.equal(actions, want, `${seq.name}, event ${i + 1}`);
      assert.ok(actions.startsWith("["), actions.slice(0, 40));
      state = JSON.parse(answer).state;
    });
  }
});
