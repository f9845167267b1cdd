from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
REPO_TESTDATA = REPO / "testdata"
sys.path.insert(0, str(HERE))


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
