"""The session engine's sequences (testdata/session.json) through
libcrawlcheck.so: each event in turn, the state kept as the text the core
answered (the host never reads it), the actions byte for byte. The executor
(preflight.py) does this with a transport, files and a clock."""

from __future__ import annotations

import json

from vectors import REPO_TESTDATA

from crawlcheck import _core, canonicalize


def test_session_sequences_replay_byte_for_byte() -> None:
    sequences = json.loads((REPO_TESTDATA / "session.json").read_text("utf-8"))["sequences"]
    assert len(sequences) >= 10
    for seq in sequences:
        state = None
        for i, event in enumerate(seq["events"]):
            req = {"event": event}
            if state is not None:
                req["state"] = state.encode("utf-8")
            answer = _core.call_result("session_step", req)
            # The state is the answer's last member, a string: what precedes
            # it is the actions' text as the core wrote it.
            actions = answer[len(b'{"actions":') : answer.rindex(b',"state":"')]
            want = canonicalize(json=json.dumps(seq["actions"][i], ensure_ascii=False))["canonical"]
            assert actions.startswith(b"[")
            assert actions == want.encode("utf-8"), f"{seq['name']}, event {i + 1}"
            state = json.loads(answer)["state"]
