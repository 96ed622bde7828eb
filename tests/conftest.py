from __future__ import annotations

from pathlib import Path

import pytest

from tests.gates import ON_FLAGS

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from the repository root, so that paths in messages are stable."""
    monkeypatch.chdir(ROOT)
    return ROOT


@pytest.fixture(autouse=True)
def control_plane(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI evaluates as on the tests' control plane (tests/gates.py), unless a test says otherwise."""
    monkeypatch.setenv("FLEETRULES_CONTROLLER", " ".join(ON_FLAGS))
