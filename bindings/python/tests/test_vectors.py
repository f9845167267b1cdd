"""Every vector in testdata/, byte for byte through libcrawlcheck.so."""

from __future__ import annotations

import json

import pytest
from vectors import REPO_TESTDATA, load

import crawlcheck
from crawlcheck import _core

VECTORS = load(REPO_TESTDATA)

#: Request fields that hold a document's bytes (docs/abi.md, C1).
DOC_FIELDS = {"lock", "into", "policy", "old", "new", "record", "records", "key_directory", "json", "receipt", "text"}


def as_attachments(req: dict) -> dict:
    """Every document given as a string becomes bytes: a raw attachment."""
    out = dict(req)
    for k, v in req.items():
        if k in DOC_FIELDS and isinstance(v, str):
            out[k] = v.encode("utf-8", "surrogatepass")
        elif k == "pages" and isinstance(v, list):
            out[k] = [p.encode("utf-8", "surrogatepass") if isinstance(p, str) else p for p in v]
        elif k == "observed" and isinstance(v, dict):
            out[k] = as_attachments({kk: vv for kk, vv in v.items()}) if "pages" in v else v
    return out


def test_vectors_found() -> None:
    # 194 op files and the two suites at the time of writing: a loader that
    # silently found nothing must fail.
    assert len([v for v in VECTORS if v.name.startswith("ops/")]) >= 150
    assert len([v for v in VECTORS if v.name.startswith("continuity/")]) >= 50
    assert len([v for v in VECTORS if v.name.startswith("guard/")]) >= 60


@pytest.mark.parametrize("v", VECTORS, ids=[v.name for v in VECTORS])
def test_vector(v) -> None:  # type: ignore[no-untyped-def]
    got = crawlcheck.call_bytes(v.op, v.request)
    assert got == v.want


@pytest.mark.parametrize("v", [v for v in VECTORS if v.request.startswith(b"{")], ids=lambda v: v.name)
def test_vector_reencoded(v) -> None:  # type: ignore[no-untyped-def]
    """The same request built by this package from Python values (the path
    every typed function takes: documents as attachments with ABI 2) gives
    the same bytes. Skips requests Python's json cannot hold as they are
    (duplicate keys, invalid text), whose bytes only call_bytes can send."""
    try:
        pairs_dups: list = []

        def hook(pairs):  # type: ignore[no-untyped-def]
            keys = [k for k, _ in pairs]
            if len(keys) != len(set(keys)):
                pairs_dups.append(keys)
            return dict(pairs)

        req = json.loads(v.request, object_pairs_hook=hook)
    except ValueError:
        pytest.skip("not JSON Python reads")
    if pairs_dups or not isinstance(req, dict):
        pytest.skip("duplicate keys")
    req = as_attachments(req)
    try:
        body, att = _core.encode_request(req)
    except (ValueError, UnicodeEncodeError):
        pytest.skip("not encodable")
    assert crawlcheck.call_bytes(v.op, body, att) == v.want
