"""The check and fmt commands: exit codes, output formats, in-place formatting."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import main

ROOT = Path(__file__).resolve().parent.parent

BAD = "tests/golden/errors/three_errors.fr"
MESSY = Path(__file__).parent / "golden" / "syntax" / "messy_layout.fr"


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


def test_check_examples_is_clean(in_root: Path) -> None:
    code, out, err = run("check", "examples/")  # six rule files and two PropagationPolicy YAML files
    assert (code, out) == (0, "")
    assert "0 errors, 0 warnings in 8 files" in err


def test_check_reports_every_error_with_carets(in_root: Path) -> None:
    code, out, _ = run("check", BAD)
    assert code == 1
    assert out.count(": error: ") == 3
    assert "   4 |   tolerat node.kubernetes.io/x = y : NoSchedule\n     |   ^~~~~~~\n" in out


def test_check_json(in_root: Path) -> None:
    code, out, _ = run("check", "--format", "json", BAD)
    report = json.loads(out)
    assert code == 1 and report["errors"] == 3 and report["warnings"] == 0
    first = report["diagnostics"][0]
    assert (first["file"], first["line"], first["column"], first["severity"]) == (BAD, 4, 3, "error")


def test_check_github_annotations(in_root: Path) -> None:
    code, out, _ = run("check", "--format", "github", BAD)
    lines = out.splitlines()
    assert code == 1 and len(lines) == 3
    assert lines[1] == (
        f"::error file={BAD},line=5,col=60,endColumn=63,title=FR107 out-of-range::"
        "weight 150 is out of range; it must be from 1 to 100"
    )


def test_warnings_alone_exit_zero(tmp_path: Path) -> None:
    path = tmp_path / "old.fr"
    path.write_text("policy p {\n  select {\n    kind A\n  }\n  failover application {\n    purge Graciously\n  }\n}\n")
    code, out, _ = run("check", str(path), "--karmada-version", "1.18")  # deprecated there, refused from 1.19
    assert code == 0 and "warning: purge mode 'Graciously' is deprecated" in out


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert run("check")[0] == 2
    assert run("check", "--format", "xml", "examples")[0] == 2
    code, _, err = run("check", str(tmp_path / "missing.fr"))
    assert code == 2 and "no such file or directory" in err
    binary = tmp_path / "binary.fr"
    binary.write_bytes(b"\x00\x01\x02")
    code, out, _ = run("check", str(binary))
    assert code == 2 and "is a binary file" in out
    latin = tmp_path / "latin.fr"
    latin.write_bytes("policy caf\xe9 {}".encode("latin-1"))
    code, out, _ = run("check", str(latin))
    assert code == 2 and "is not UTF-8 text" in out


def test_fmt_rewrites_in_place_and_is_stable(tmp_path: Path) -> None:
    path = tmp_path / "messy.fr"
    shutil.copy(MESSY, path)
    assert run("fmt", "--check", str(path))[0] == 1
    code, _, err = run("fmt", str(path))
    assert code == 0 and "formatted" in err
    first = path.read_text()
    assert first == MESSY.with_suffix(".fmt").read_text()
    assert run("fmt", str(path))[0] == 0
    assert path.read_text() == first  # stable on a second pass
    assert run("fmt", "--check", str(path))[0] == 0
    assert not list(tmp_path.glob(".*.tmp")), "no temporary files left behind"


def test_fmt_diff_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "messy.fr"
    shutil.copy(MESSY, path)
    code, out, _ = run("fmt", "--diff", str(path))
    assert code == 1 and out.startswith(f"--- a/{path}") and "+policy messy {" in out
    assert path.read_text() == MESSY.read_text()


def test_fmt_stdin() -> None:
    code, out, _ = run("fmt", "-", stdin="policy  p{select{kind A}}")
    assert code == 0 and out == "policy p {\n  select {\n    kind A\n  }\n}\n"


def test_fmt_refuses_broken_files(tmp_path: Path) -> None:
    path = tmp_path / "broken.fr"
    path.write_text("policy p {")
    code, _, err = run("fmt", str(path))
    assert code == 1 and "unexpected end of file" in err
    assert path.read_text() == "policy p {"


def test_examples_are_formatted(in_root: Path) -> None:
    assert run("fmt", "--check", "examples/")[0] == 0


def test_the_builtin_rule_library_checks_clean(in_root: Path) -> None:
    """rules/ may use what only built-in rules may (negation over placements): check knows them."""
    code, out, err = run("check", "rules/")
    assert (code, out) == (0, "") and "0 errors, 0 warnings in 9 files" in err


def test_long_evaluations_report_progress_to_a_callback_and_draw_no_bar_on_a_pipe(tmp_path: Path) -> None:
    from engine import evaluate, load_facts, load_rules
    from engine.errors import UsageError

    rules = tmp_path / "r.fr"
    rules.write_text("policy p {\n  select { kind Deployment }\n}\n")
    objects = [{"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "m1"}}]
    objects += [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"w{i}", "namespace": "default"}}
        for i in range(2500)
    ]
    calls: list[int] = []
    evaluate(load_rules([rules]), load_facts(objects=objects), progress=calls.append)
    assert calls == [1000, 2000]
    with pytest.raises(UsageError, match="progress: expected a function"):
        evaluate(load_rules([rules]), load_facts(objects=objects[:2]), progress=3)  # type: ignore[arg-type]


def test_simulations_report_progress_by_step() -> None:
    from engine import load_facts, load_rules
    from engine import simulate as simulate_api
    from engine.inputs.events import load_events

    folder = ROOT / "examples" / "flink-checkpoint"
    start, events = load_events(folder / "events" / "job-fails.yaml")
    calls: list[int] = []
    simulate_api(
        load_rules([folder / "policy.fr"]), load_facts([folder / "facts"]), start, events, progress=calls.append
    )
    assert calls[0] == 1 and calls[-1] == len(events) + 1 and calls == sorted(calls)


@pytest.mark.parametrize("verb", ["eval", "simulate", "diff"])
def test_a_terminal_shows_a_progress_bar_for_a_large_snapshot(verb: str) -> None:
    """On a terminal (a pseudo-terminal here) a bar is drawn on stderr; the threshold is lowered so that the
    example counts as large. On a pipe (every other test) nothing is drawn."""
    import pty
    import subprocess

    folder = ROOT / "examples" / ("flink-checkpoint" if verb == "simulate" else "flink-ha")
    args = {
        "eval": ["eval", "policy.fr", "--facts", "facts"],
        "simulate": ["simulate", "policy.fr", "--facts", "facts", "--events", "events/job-fails.yaml"],
        "diff": ["diff", "--base", "policy.fr", "--head", "policy.fr", "--facts", "facts"],
    }[verb]
    code = (
        "import sys, engine.cli as c, engine.cli.inputs; c.inputs.PROGRESS_FROM = 1; "
        f"sys.argv = ['fleetrules', *{args!r}]; c.main()"
    )
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=folder, stderr=follower, stdout=subprocess.PIPE, env=env, timeout=120
    )
    os.close(follower)
    drawn = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        drawn += chunk
    os.close(leader)
    assert run.returncode == 0, drawn
    label = {"eval": b"bindings", "simulate": b"steps", "diff": b"bindings (base, head)"}[verb]
    assert label in drawn and b"100%" in drawn
    assert b"100%" not in run.stdout  # the bar never reaches the output


def test_every_verbs_output_formats_are_the_registrys() -> None:
    """A verb's -o/--format choices are its entry of the one registry (engine.cli.formats), every entry is a
    verb's, and the README's table of commands names each format of each verb."""
    import click

    from engine.cli.formats import REGISTRY

    offered = {
        name: [str(c) for c in param.type.choices]
        for name in main.list_commands(click.Context(main))
        if (command := main.get_command(click.Context(main), name)) is not None
        for param in command.params
        if param.name in ("output", "output_format") and isinstance(param.type, click.Choice)
    }
    assert offered == {verb: list(formats.writers) for verb, formats in REGISTRY.items()}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = {line.split("`")[1].split()[1]: line for line in readme.splitlines() if line.startswith("| `fleetrules ")}
    for verb, formats in REGISTRY.items():
        missing = [f for f in formats.writers if f != "text" and f not in rows[verb]]
        assert not missing, f"README's row of {verb} does not name {missing}"
