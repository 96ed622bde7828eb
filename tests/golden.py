"""Golden-file comparison; FLEETRULES_UPDATE_GOLDEN=1 rewrites the expected files instead."""

from __future__ import annotations

import os
from pathlib import Path

UPDATE = os.environ.get("FLEETRULES_UPDATE_GOLDEN") == "1"


def assert_golden(actual: str, expected_path: Path) -> None:
    if UPDATE:
        expected_path.write_text(actual, encoding="utf-8")
        return
    assert expected_path.exists(), f"missing golden file {expected_path}; run with FLEETRULES_UPDATE_GOLDEN=1"
    expected = expected_path.read_text(encoding="utf-8")
    assert actual == expected, f"{expected_path.name} differs from the output"
