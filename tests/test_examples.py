"""Every example evaluates to its expected output (examples/*/expected.json), from the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import main
from tests.golden import assert_golden

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.parent for p in (ROOT / "examples").glob("*/expected.json"))


def rule_files(example: Path) -> list[str]:
    files = sorted(p for p in example.iterdir() if p.suffix in (".fr", ".yaml") and not p.name.endswith("_test.yaml"))
    return [str(p.relative_to(ROOT)) for p in files]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_example_output(example: Path, in_root: Path) -> None:
    facts = ["--facts", str((example / "facts").relative_to(ROOT))] if (example / "facts").is_dir() else []
    # without a facts directory the example is one snapshot: policies and facts from the same files
    result = CliRunner().invoke(main, ["eval", *rule_files(example), *facts, "-o", "json"])
    assert result.exit_code == 0, result.output + result.stderr
    assert_golden(result.stdout, example / "expected.json")


def test_every_example_has_expected_output() -> None:
    assert {p.name for p in EXAMPLES} >= {
        "flink-ha",
        "training-colocation",
        "flink-checkpoint",
        "karmada-policy",
        "divided-replicas",
    }
