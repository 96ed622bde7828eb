"""`fleetrules test`: per-case results, diffs of expected against actual, JUnit, rule coverage."""

from __future__ import annotations

import shutil
from pathlib import Path
from xml.etree import ElementTree

from click.testing import CliRunner

from engine.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["test", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_every_example_test_passes(in_root: Path) -> None:
    code, out, _ = run("examples")
    assert code == 0 and out.endswith("16 passed, 0 failed\n")
    unfired = "spread-constraint-provider, spread-constraint-zones, streaming/pipelines/clusters.names"
    assert f"rules no test case made fire (3 of 18): {unfired}" in out


def test_a_broken_expectation_fails_with_a_diff(tmp_path: Path) -> None:
    example = tmp_path / "flink-ha"
    shutil.copytree(ROOT / "examples" / "flink-ha", example)
    test = example / "flink-ha_test.yaml"
    test.write_text(test.read_text().replace("{clusters: [member3]}", "{clusters: [member9]}"))
    code, out, _ = run(str(example))
    assert code == 1 and out.endswith("2 passed, 1 failed\n")
    assert "  FAIL pipelines of one group run one per cluster, preferring another region" in out
    assert "      -    - member9\n" in out and "      +    - member3\n" in out


def test_junit(in_root: Path) -> None:
    code, out, _ = run("examples/flink-ha", "--format", "junit")
    suite = ElementTree.fromstring(out)
    assert code == 0 and suite.get("tests") == "3" and suite.get("failures") == "0"
    assert next(c.get("name") for c in suite) == "pipelines of one group run one per cluster, preferring another region"


def test_bad_test_files_are_failures_with_reasons(tmp_path: Path) -> None:
    (tmp_path / "bad_test.yaml").write_text("cases:\n- name: x\n  expect: {placments: {}}\n- nme: y\n  expect: {}\n")
    (tmp_path / "broken_test.yaml").write_text("cases: [unclosed\n")
    code, out, _ = run(str(tmp_path))
    assert code == 1 and out.endswith("0 passed, 3 failed\n")
    assert "expect: a mapping of evictions, placements, rejected" in out
    assert "unknown field(s) nme" in out and "broken_test.yaml:2:1: error: invalid YAML" in out


def test_usage(tmp_path: Path) -> None:
    assert run(str(tmp_path / "missing"))[0] == 2
    code, _, err = run(str(tmp_path))
    assert code == 2 and "no test files" in err


def test_a_test_file_sets_controller_flags(tmp_path: Path) -> None:
    """`controllers:` in a test file (or a case) are --controller's flags: here the PropagationPolicyPreemption gate."""
    (tmp_path / "p.fr").write_text(
        "policy shop/old {\n  select { kind Deployment }\n}\n"
        "policy shop/new {\n  select { kind Deployment name web }\n  priority 5\n  preemption always\n"
        "  clusters { names m2 }\n}\n"
    )
    claimed = (
        "{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: shop, "
        "labels: {propagationpolicy.karmada.io/permanent-id: a1}, annotations: "
        "{propagationpolicy.karmada.io/namespace: shop, propagationpolicy.karmada.io/name: old}}}"
    )
    (tmp_path / "p_test.yaml").write_text(
        "rules: [p.fr]\nobjects:\n"
        + "".join(
            f"- {{apiVersion: cluster.karmada.io/v1alpha1, kind: Cluster, metadata: {{name: {c}}}}}\n"
            for c in ("m1", "m2")
        )
        + f"- {claimed}\ncontrollers: [feature-gates=PropagationPolicyPreemption=true]\ncases:\n"
        "- name: preempted\n  expect: {placements: {shop/web-deployment: {clusters: [m2]}}}\n"
        "- name: without the gate\n  controllers: []\n"
        "  expect: {placements: {shop/web-deployment: {clusters: [m1, m2]}}}\n"
        "- name: a bad flag\n  controllers: [feature-gates=Nope=true]\n  expect: {placements: {}}\n"
    )
    code, out, _ = run(str(tmp_path))
    assert code == 1 and out.endswith("2 passed, 1 failed\n"), out
    assert (
        'controllers: invalid argument "Nope=true" for "--feature-gates" flag: unrecognized feature gate: Nope' in out
    )
    assert "p_test.yaml:14:16" in out, out
