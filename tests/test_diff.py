"""Policy review: `fleetrules diff` between two versions of the rules over the same facts (issue 5),
from files and from a git revision, as text, JSON and Markdown, with CI gates."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import main
from tests.gates import ON

ROOT = Path(__file__).resolve().parent.parent
TIGHTENED = ROOT / "tests" / "data" / "flink-ha-tightened.fr"
FACTS = "examples/flink-ha/facts"


def diff(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["diff", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_text(in_root: Path) -> None:
    code, out, _ = diff("--base", "examples/flink-ha/policy.fr", "--head", str(TIGHTENED), "--facts", FACTS)
    assert code == 0
    assert out.startswith("1 binding moved, 1 newly unschedulable, 0 bindings with new evictions, 4 bindings changed")
    assert "streaming/orders-c-flinkdeployment: member3 -> unschedulable" in out
    assert (
        "+ member-dev, member-legacy, member1 and 2 more rejected: cluster's region already has workload with the "
        "same anti-affinity group  [flink-ha/workload anti-affinity at tests/data/flink-ha-tightened.fr:21]"
    ) in out


def test_rejections_compared_through_shared_parts_are_those_compared_cluster_by_cluster(in_root: Path) -> None:
    """compare() reads each policy's shared rejections once per pair: the same changes as walking every
    cluster of every binding."""
    from dataclasses import replace

    from engine import evaluate, load_facts, load_rules
    from engine.results import Result, Summarized
    from engine.review.diff import compare

    facts = load_facts([FACTS])
    old = evaluate(load_rules(["examples/flink-ha/policy.fr"]), facts, controllers=ON)
    new = evaluate(load_rules([TIGHTENED]), facts, controllers=ON)
    assert all(isinstance(p.rejected, Summarized) for p in (*old.placements, *new.placements) if not p.settled)

    def plain(r: Result) -> Result:
        return replace(r, placements=tuple(replace(p, rejected=dict(p.rejected)) for p in r.placements))

    for a, b in ((old, new), (new, old), (old, old)):
        assert compare(a, b) == compare(plain(a), plain(b))
    assert compare(old, new).count("rejection") == 4


def test_json_names_the_rules_responsible(in_root: Path) -> None:
    code, out, _ = diff(
        "--base", "examples/flink-ha/policy.fr", "--head", str(TIGHTENED), "--facts", FACTS, "-o", "json"
    )
    assert code == 0
    data = json.loads(out)
    assert data["summary"] == {
        "moved": 1,
        "newlyUnschedulable": 1,
        "newEvictions": 0,
        "replicasChanged": 0,
        "changed": 4,
    }
    moved = next(c for c in data["changes"] if c["binding"] == "streaming/orders-c-flinkdeployment")
    assert (moved["before"], moved["after"], moved["rules"]) == (["member3"], [], ["flink-ha/workload anti-affinity"])


def test_markdown_for_a_pull_request(in_root: Path) -> None:
    code, out, _ = diff(
        "--base", "examples/flink-ha/policy.fr", "--head", str(TIGHTENED), "--facts", FACTS, "-o", "markdown"
    )
    assert code == 0
    assert out.startswith("### fleetrules: placement changes\n\n**1 binding moved, 1 newly unschedulable")
    assert (
        "| `streaming/orders-c-flinkdeployment` | member3 | unschedulable ⚠️ | `flink-ha/workload anti-affinity` |"
        in out
    )
    assert out.count("<details>") == 4


@pytest.mark.parametrize(("gates", "code"), [("unschedulable", 1), ("moved,eviction", 1), ("eviction", 0), ("", 0)])
def test_gates(in_root: Path, gates: str, code: int) -> None:
    args = ["--base", "examples/flink-ha/policy.fr", "--head", str(TIGHTENED), "--facts", FACTS, "--fail-on", gates]
    assert diff(*args)[0] == code


def test_no_change(in_root: Path) -> None:
    code, out, _ = diff(
        "--base",
        "examples/flink-ha/policy.fr",
        "--head",
        "examples/flink-ha/policy.fr",
        "--facts",
        FACTS,
        "-o",
        "markdown",
    )
    assert code == 0 and "No binding's placement, rejections, scores or evictions changed." in out


def test_usage_errors(in_root: Path) -> None:
    assert diff("--head", "examples/flink-ha/policy.fr", "--facts", FACTS)[0] == 2
    code, _, err = diff(
        "--base", "a.fr", "--head", "examples/flink-ha/policy.fr", "--facts", FACTS, "--fail-on", "typo"
    )
    assert code == 2 and "--fail-on: unknown typo" in err


def test_from_a_git_revision(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--base-ref takes the old rules from git: commit the original, change the file, diff."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "flink-ha", repo / "flink-ha")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    shutil.copy(TIGHTENED, repo / "flink-ha" / "policy.fr")
    monkeypatch.chdir(repo)
    code, out, _ = diff(
        "--base-ref", "HEAD", "--head", "flink-ha/policy.fr", "--facts", "flink-ha/facts", "-o", "markdown"
    )
    assert code == 0 and "| `streaming/orders-c-flinkdeployment` | member3 | unschedulable ⚠️ |" in out
    code, _, err = diff("--base-ref", "no-such-ref", "--head", "flink-ha/policy.fr", "--facts", "flink-ha/facts")
    assert code == 2 and "git ls-tree" in err


def test_a_revision_with_a_quote_keeps_json_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The old rules' files are named REF:path in the answer; a revision named 'q"z' was pasted into the JSON
    unescaped (issue 28)."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "flink-ha", repo / "flink-ha")
    shutil.copy(TIGHTENED, repo / "flink-ha" / "policy.fr")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    subprocess.run([*git, "branch", 'q"z'], check=True)
    shutil.copy(ROOT / "examples" / "flink-ha" / "policy.fr", repo / "flink-ha" / "policy.fr")
    monkeypatch.chdir(repo)
    for output in ("json", "sarif"):
        code, out, err = diff(
            "--base-ref", 'q"z', "--head", "flink-ha/policy.fr", "--facts", "flink-ha/facts", "-o", output
        )
        assert code in (0, 1), err
        document = json.loads(out)
        if output == "json":  # SARIF points at the new rules only
            assert 'q"z:flink-ha/policy.fr' in json.dumps(document, ensure_ascii=False).replace('\\"', '"')


def test_the_review_walkthrough_shows_current_output(in_root: Path) -> None:
    doc = (ROOT / "docs" / "review.md").read_text()
    head = str(TIGHTENED.relative_to(ROOT))
    for output in ("text", "markdown"):
        code, out, _ = diff("--base", "examples/flink-ha/policy.fr", "--head", head, "--facts", FACTS, "-o", output)
        assert code == 0 and out.strip() in doc, f"docs/review.md shows stale {output} output"


def _repo_with(tmp_path: Path, names: list[str]) -> Path:
    repo = tmp_path / "repo"
    (repo / "rules").mkdir(parents=True)
    for name in names:
        (repo / "rules" / name).write_text(
            (ROOT / "examples" / "flink-ha" / "policy.fr")
            .read_text()
            .replace("policy flink-ha", f"policy p{len(name)}")
        )
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    return repo


def test_base_ref_reads_names_with_spaces_and_accents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git ls-tree's output was split on whitespace and its quoting kept: rules/règles.fr was silently dropped
    from the base (a diff of changes that do not exist) and rules/my rules.fr failed."""
    repo = _repo_with(tmp_path, ["règles.fr", "my rules.fr"])
    shutil.copytree(ROOT / "examples" / "flink-ha" / "facts", repo / "facts")
    monkeypatch.chdir(repo / "rules")  # from a subdirectory: git paths are the repository's
    code, out, err = diff("--base-ref", "HEAD", "--head", ".", "--facts", "../facts", "-o", "json")
    assert code == 0, err
    assert json.loads(out)["changes"] == []


def test_base_ref_with_a_head_outside_the_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo_with(tmp_path, ["p.fr"])
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "p.fr").write_text((repo / "rules" / "p.fr").read_text())
    monkeypatch.chdir(repo)
    facts = str(ROOT / FACTS)
    code, _, err = diff("--base-ref", "HEAD", "--head", str(outside / "p.fr"), "--facts", facts)
    assert code == 2 and "not a git repository" in err, err
    (repo / "rules" / "out.fr").symlink_to(outside / "p.fr")
    code, _, err = diff("--base-ref", "HEAD", "--head", "rules/out.fr", "--facts", facts)
    assert code == 2 and "outside the git repository" in err, err


def test_replica_changes_are_reported(tmp_path: Path, in_root: Path) -> None:
    """Static weights 2:1 → 1:1 keep web on member1 and member2 but move a replica: a change of its own
    ("replicas"), shown per cluster and gateable with --fail-on replicas."""
    snapshot = ROOT / "examples" / "divided-replicas" / "snapshot.yaml"
    head = tmp_path / "snapshot.yaml"
    head.write_text(
        snapshot.read_text().replace(
            "{targetCluster: {clusterNames: [member1]}, weight: 2}",
            "{targetCluster: {clusterNames: [member1]}, weight: 1}",
        )
    )
    args = ["--base", str(snapshot), "--head", str(head), "--facts", str(snapshot)]
    code, out, err = diff(*args, "-o", "json", "--fail-on", "replicas")
    assert code == 1, err
    (change,) = json.loads(out)["changes"]
    assert change["binding"] == "shop/web-deployment" and change["before"] == change["after"]
    assert change["replicas"] == {"member1": {"before": 4, "after": 3}, "member2": {"before": 2, "after": 3}}
    code, out, _ = diff(*args)
    assert code == 0 and "  replicas: member1 4 -> 3, member2 2 -> 3" in out
    assert "1 binding with replicas shifted" in out.splitlines()[0]


def test_a_diffs_json_is_sized_by_the_changed_bindings_not_the_clusters(tmp_path: Path) -> None:
    """Moving one namespace's policy to another region listed every rejected cluster added and removed and every
    score: 67 KB per changed binding at 1,000 clusters (issue 46). Now counted as eval counts them."""
    import json
    import sys

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import e2e

    snapshot, base, head = tmp_path / "fleet.yaml", tmp_path / "base.yaml", tmp_path / "head.yaml"
    e2e.write_review("regional", 400, 40, snapshot, base, head)
    args = ["--base", str(base), "--head", str(head), "--facts", str(snapshot), "-o", "json"]
    code, out, _ = diff(*args)
    changes = json.loads(out)["changes"]
    assert code == 0 and changes
    for change in changes:
        assert len(json.dumps(change)) < 3000, change["binding"]
        assert change["rejectionsAdded"]["count"] >= sum(r["count"] for r in change["rejectionsAdded"]["reasons"][:1])
        assert all(len(r["clusters"]) <= 3 for r in change["rejectionsAdded"]["reasons"])
        assert all(len(g["clusters"]) <= 3 for g in change["scores"]["changes"])
    _, every, _ = diff(*args, "--rejections", "all")
    full = json.loads(every)["changes"][0]
    assert len(full["rejectionsAdded"]["clusters"]) == full["rejectionsAdded"]["count"]
    assert len(full["scores"]["clusters"]) == full["scores"]["count"]
