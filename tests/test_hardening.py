"""Hardening: no traceback from any verb or API call, whatever the input or the output device."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import engine.cli.inputs
from engine import FleetrulesError, UsageError, evaluate, load_facts, load_rules
from engine.cli import main
from engine.errors import printable

ROOT = Path(__file__).resolve().parent.parent
HA = ROOT / "examples" / "flink-ha"


@pytest.mark.parametrize(
    ("escape", "shown"),
    [("\\ud800", "\\ud800"), ("x\\u0000y", "x\\u0000y"), ("\\u202e", "\\u202e"), ("\\u001b[31m", "\\u001b[31m")],
)
def test_messages_escape_what_a_terminal_would_act_on(tmp_path: Path, escape: str, shown: str) -> None:
    """A lone surrogate once failed with UnicodeEncodeError while printing; a NUL or an escape sequence
    went to the terminal as is."""
    (tmp_path / "p.fr").write_text(
        f'policy p {{\n  select {{ kind Deployment }}\n  clusters {{ labels {{ a = "{escape}" }} }}\n}}\n'
    )
    result = CliRunner().invoke(main, ["check", str(tmp_path / "p.fr")])
    assert result.exit_code == 1, result.output
    assert f"invalid label value '{shown}'" in result.stdout
    assert result.stdout.isprintable() or set(result.stdout) - set("\n\t") <= {
        c for c in result.stdout if c.isprintable()
    }


def test_printable_keeps_text_and_escapes_controls() -> None:
    assert printable("règle\tok\n") == "règle\tok\n"
    assert printable("a\x00\x7f\x9b\ud800\u2066") == "a\\u0000\\u007f\\u009b\\ud800\\u2066"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("verb", [["eval", str(HA / "policy.fr"), "--facts", str(HA / "facts")], ["fmt", "-"]])
def test_a_full_device_is_an_error_not_a_traceback(verb: list[str]) -> None:
    stdin = (HA / "policy.fr").read_bytes() if verb[-1] == "-" else b""
    with open("/dev/full", "wb") as full:
        done = subprocess.run(
            [sys.executable, "-m", "engine", *verb], input=stdin, stdout=full, stderr=subprocess.PIPE, cwd=ROOT
        )
    assert done.returncode == 2
    assert done.stderr.decode().endswith("fleetrules: error: cannot write the output: No space left on device\n")
    assert "Traceback" not in done.stderr.decode()


def test_an_interrupt_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*_: Any, **__: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(engine.cli.inputs, "evaluate", interrupted)
    result = CliRunner().invoke(main, ["eval", str(HA / "policy.fr"), "--facts", str(HA / "facts")])
    assert result.exit_code == 130 and result.stderr == "fleetrules: interrupted\n" and result.stdout == ""


def test_a_str_path_is_one_path() -> None:
    """load_rules("x.fr") once took each character as a path and walked the file system from '/'."""
    assert load_rules(str(HA / "policy.fr")).policies
    assert load_facts(HA / "facts").bindings


def _simulate(events: Any = (), warn: Any = None) -> object:
    from engine import simulate

    start = dt.datetime(2026, 12, 2, tzinfo=dt.UTC)
    return simulate(load_rules([HA / "policy.fr"]), load_facts([HA / "facts"]), start, events, warn)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: evaluate(None, None), "rules: expected a RuleSet from load_rules(), found NoneType"),  # type: ignore[arg-type]
        (lambda: load_rules(5), "paths: expected a path or a list of paths, found int"),  # type: ignore[arg-type]
        (lambda: load_rules([None]), "expected paths (str or pathlib.Path), found NoneType"),  # type: ignore[list-item]
        (lambda: load_facts([], {"kind": "Cluster"}), "objects: expected a list of Kubernetes objects"),  # type: ignore[dict-item]
        (lambda: evaluate(load_rules([HA / "policy.fr"]), load_facts([HA / "facts"]), now=3), "now: expected an aware"),  # type: ignore[arg-type]
        (lambda: load_facts(texts=5), "texts: expected a list of (name, text) pairs, found int"),  # type: ignore[arg-type]
        (lambda: load_facts(texts=[("a", 5)]), "texts: expected (name, text) pairs of strings"),  # type: ignore[list-item]
        (lambda: _simulate(events=5), "events: expected a list of Event from load_events(), found int"),
        (lambda: _simulate(events=[5]), "events: expected Event objects from load_events(), found int"),
        (lambda: _simulate(warn=5), "warn: expected a function of a Diagnostic, found int"),
        (lambda: evaluate(load_rules([HA / "policy.fr"]), load_facts([HA / "facts"]), explanations=1), "explanations"),  # type: ignore[arg-type]
        (
            lambda: evaluate(load_rules([HA / "policy.fr"]), load_facts([HA / "facts"]), share="yes"),  # type: ignore[arg-type]
            "share: expected True, False or None, found str",
        ),
    ],
)
def test_public_functions_check_their_arguments(call: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_not_a_regular_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.fr")
    with pytest.raises(UsageError, match="not a regular file"):
        load_rules([tmp_path / "pipe.fr"])


UNFORMATTED = "policy p {\n  select {   kind Deployment }\n}\n"
FORMATTED = "policy p {\n  select {\n    kind Deployment\n  }\n}\n"


def _fmt(*paths: Path) -> None:
    result = CliRunner().invoke(main, ["fmt", *map(str, paths)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("mode", [0o640, 0o755])  # 0o444: left alone (test_fmt_leaves_a_read_only_file_alone…)
def test_fmt_keeps_the_mode(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "p.fr"
    path.write_text(UNFORMATTED)
    path.chmod(mode)
    _fmt(path)
    assert path.read_text() == FORMATTED and (path.stat().st_mode & 0o777) == mode


def test_fmt_writes_through_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real.fr").write_text(UNFORMATTED)
    (tmp_path / "link.fr").symlink_to("real.fr")
    _fmt(tmp_path / "link.fr")
    assert (tmp_path / "link.fr").is_symlink() and (tmp_path / "real.fr").read_text() == FORMATTED


def test_fmt_keeps_hard_links(tmp_path: Path) -> None:
    (tmp_path / "a.fr").write_text(UNFORMATTED)
    os.link(tmp_path / "a.fr", tmp_path / "b.fr.txt")
    _fmt(tmp_path / "a.fr")
    assert (tmp_path / "b.fr.txt").read_text() == FORMATTED and (tmp_path / "a.fr").stat().st_nlink == 2


def test_fmt_keeps_a_bom_and_crlf_lines(tmp_path: Path) -> None:
    path = tmp_path / "p.fr"
    path.write_bytes(b"\xef\xbb\xbf" + UNFORMATTED.replace("\n", "\r\n").encode())
    _fmt(path)
    assert path.read_bytes() == b"\xef\xbb\xbf" + FORMATTED.replace("\n", "\r\n").encode()
    check = CliRunner().invoke(main, ["fmt", "--check", str(path)])
    assert check.exit_code == 0  # formatted, in its own line endings


@pytest.mark.parametrize(
    ("include", "message"),
    [
        ("/etc/passwd", "include '/etc/passwd': an include is a path relative to the including file"),
        ("../secret.fr", "include '../secret.fr': outside the rule tree"),
        ("sub", "included path is not a regular file: sub"),
        ("notes.txt", "include 'notes.txt': not a rule file"),
        ("missing.fr", "included file not found: missing.fr"),
    ],
)
def test_includes_stay_in_the_rule_tree(tmp_path: Path, include: str, message: str) -> None:
    """`include "/etc/passwd"` once printed that file's lines in diagnostics."""
    (tmp_path / "secret.fr").write_text("token 12345\n")
    rules = tmp_path / "rules"
    (rules / "sub").mkdir(parents=True)
    (rules / "notes.txt").write_text("token 12345\n")  # in the tree, but no rule file: never read
    (rules / "p.fr").write_text(f'include "{include}"\n')
    result = CliRunner().invoke(main, ["check", str(rules)])
    assert result.exit_code == 1 and message in result.stdout
    assert "12345" not in result.output and "root:" not in result.output


def test_an_include_above_the_file_but_inside_the_tree_is_fine(tmp_path: Path) -> None:
    (tmp_path / "common").mkdir()
    (tmp_path / "team").mkdir()
    (tmp_path / "common" / "base.fr").write_text("policy base {\n  select {\n    kind Deployment\n  }\n}\n")
    (tmp_path / "team" / "p.fr").write_text('include "../common/base.fr"\n')
    assert CliRunner().invoke(main, ["check", str(tmp_path)]).exit_code == 0


def _rules_file(path: Path, prefix: str, count: int) -> None:
    rule = 'rule {}_{} {{\n  when binding b and cluster c (c.name == "m")\n  then reject c for b "no"\n}}\n'
    path.write_text("".join(rule.format(prefix, i) for i in range(count)))


def test_the_rule_count_is_limited_over_all_files(tmp_path: Path) -> None:
    """Each file was limited alone; 20,000 rules over many files took 24 s to check."""
    for name in ("a", "b", "c"):
        _rules_file(tmp_path / f"{name}.fr", name, 700)
    result = CliRunner().invoke(main, ["check", str(tmp_path)])
    assert result.exit_code == 2
    assert "c.fr:2401:1: error: the rule set has more than 2,000 rules and policies over all its files" in result.stdout


def test_the_file_count_is_limited(tmp_path: Path) -> None:
    for i in range(1_001):
        (tmp_path / f"r{i:04d}.fr").write_text(f"policy p{i} {{\n  select {{\n    kind Deployment\n  }}\n}}\n")
    result = CliRunner().invoke(main, ["check", str(tmp_path)])
    assert result.exit_code == 2 and "the rule set has more than 1,000 files" in result.stdout


@pytest.mark.parametrize(
    "name",
    ["parse", "check", "format_source", "format_file", "to_json", "to_yaml", "to_text", "result_data", "load_rules"],
)
def test_every_public_function_refuses_none_with_the_projects_error(name: str) -> None:
    import engine

    with pytest.raises(engine.FleetrulesError):
        getattr(engine, name)(None)


@pytest.mark.parametrize(
    ("event", "words"),
    [
        ("taint: {effect: NoExecute}", ["events[0].taint.cluster: required", "events[0].taint.key: required"]),
        ("ready: {status: 'False'}", ["events[0].ready.cluster: required"]),
        (
            "taint: {cluster: member1, key: k, effect: NoExecute, bogus: 1}",
            ["events[0].taint: unknown field 'bogus'; the fields of taint are cluster, key, value, effect"],
        ),
        (
            "health: {binding: a/b, cluster: member1, status: Unhealthy}\n  when: later",
            ["events[0]: unknown key 'when'; an event has 'at' and one of health, ready, taint, untaint, condition"],
        ),
    ],
)
def test_an_events_fields_are_its_kinds_fields(tmp_path: Path, event: str, words: list[str]) -> None:
    """An event missing a field its kind needs, or with one it does not have, is refused where it stands
    (it was a KeyError, or silently ignored)."""
    from engine.errors import FactError
    from engine.inputs.events import load_events

    path = tmp_path / "events.yaml"
    path.write_text(f"start: 2026-12-02T10:00:00Z\nevents:\n- at: 0s\n  {event}\n")
    with pytest.raises(FactError) as caught:
        load_events(path)
    assert [d.message for d in caught.value.diagnostics] == words


def test_fmt_leaves_a_read_only_file_alone_and_keeps_a_files_mode_bits(tmp_path: Path) -> None:
    """A 0444 file is not reformatted (renaming over it would, even where writing into it is refused); a
    rewritten file keeps its group and its setgid bit (changing the group after the mode cleared it)."""
    import stat

    messy = "policy p {\nselect { kind Deployment }\n}\n"
    locked, shared = tmp_path / "locked.fr", tmp_path / "shared.fr"
    locked.write_text(messy)
    locked.chmod(0o444)
    shared.write_text(messy)
    shared.chmod(0o2775)
    before = shared.stat()
    result = CliRunner().invoke(engine.cli.main, ["fmt", str(locked), str(shared)])
    assert result.exit_code == 2
    assert "locked.fr: error: read-only file (mode 0444); not reformatted" in result.stderr
    assert locked.read_text() == messy and stat.S_IMODE(locked.stat().st_mode) == 0o444
    after = shared.stat()
    assert shared.read_text() != messy
    assert (stat.S_IMODE(after.st_mode), after.st_gid) == (stat.S_IMODE(before.st_mode), before.st_gid)


def test_output_that_cannot_be_written_before_a_command_runs_is_a_message(tmp_path: Path) -> None:
    """`fleetrules --help > /dev/full`: click writes the help before any command; no traceback."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "engine", "--help"], stdout=full, stderr=subprocess.PIPE, text=True
        )
    assert done.returncode == 2
    assert done.stderr == "fleetrules: error: cannot write the output: No space left on device\n"


def test_resilience_sizes_are_bounded_and_workers_never_outnumber_the_scenarios(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from engine.review import impacts, resilience

    root = Path(__file__).resolve().parent.parent / "examples" / "flink-ha"
    for option in ("--k", "--workers"):
        args = ["resilience", str(root / "policy.fr"), "--facts", str(root / "facts"), option, "9" * 20]
        result = CliRunner().invoke(engine.cli.main, args)
        assert result.exit_code == 2 and "is not in the range" in result.stderr
    rules, facts = load_rules([root / "policy.fr"]), load_facts([root / "facts"])
    with pytest.raises(UsageError, match="k: expected a whole number from 1 to 1000"):
        impacts.scenarios(facts.clusters, k=2**70)
    used: list[int] = []

    def pool(job: object, plan: object, count: int, progress: object) -> list[object]:
        used.append(count)
        return []

    monkeypatch.setattr(resilience, "_on_pool", pool)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)  # cores and memory to spare: the scenarios bound it
    monkeypatch.setattr(resilience, "_available_bytes", lambda: None)
    plan = impacts.scenarios(facts.clusters)
    resilience.sweep(rules, facts, plan, workers=300)
    assert used == [len(plan)]


@pytest.mark.parametrize("verb", ["check", "fmt"])
def test_a_rule_nested_past_the_bound_is_an_error_not_a_recursion(tmp_path: Path, verb: str) -> None:
    """600 chained `not` overflowed Python's recursion in every stage after the parser."""
    path = tmp_path / "deep.fr"
    path.write_text("rule r {\n  when binding b (" + "not " * 600 + 'b.name == "x")\n  then reject c for b "m"\n}\n')
    result = CliRunner().invoke(engine.cli.main, [verb, str(path)])
    assert result.exit_code in (1, 2) and "Traceback" not in result.output + result.stderr
    assert "deep.fr:2:" in result.output + result.stderr
    assert "nested more than 100 levels deep" in result.output + result.stderr


def test_the_working_directory_is_no_root_of_the_rule_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Includes reached anything below the working directory (`include "../.git/config"` from a rule folder of
    the checkout printed its token line); the tree is the paths given, and what --root names (issue 28)."""
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "base.fr").write_text("policy base {\n  select {\n    kind Deployment\n  }\n}\n")
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "p.fr").write_text('include "../common/base.fr"\n')
    monkeypatch.chdir(tmp_path)
    refused = CliRunner().invoke(main, ["check", "team"])
    assert refused.exit_code == 1 and "outside the rule tree" in refused.stdout
    allowed = CliRunner().invoke(main, ["check", "--root", "common", "team"])
    assert allowed.exit_code == 0, allowed.output
    assert load_rules(["team"], roots=["common"]).policies[0].name.value == "base"


def _test_file(folder: Path, rules: str, facts: str) -> None:
    (folder / "p_test.yaml").write_text(
        f"rules: [{rules}]\nfacts: [{facts}]\ncases:\n- name: one\n  expect:\n    placements: {{}}\n"
    )


@pytest.mark.parametrize("output", ["text", "junit", "sarif"])
def test_a_test_file_reads_only_the_tree_and_echoes_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: str
) -> None:
    """`rules: [/etc/passwd]` in a *_test.yaml was read and its lines echoed into the JUnit the Action uploads."""
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "token.fr").write_text("ghp_TOKEN line one\n")
    (secret / "facts.yaml").write_text("ghp_TOKEN: [\n")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "config.fr").write_text("ghp_TOKEN inside the tree\n")  # ours by name, but not parseable
    (tests / "notes.txt").write_text("ghp_TOKEN\n")
    monkeypatch.chdir(tmp_path)
    cases = [
        ("/etc/passwd", "../secret/facts.yaml", "outside the tree of tests run"),
        ("../secret/token.fr", "../secret", "outside the tree of tests run"),
        ("notes.txt", ".", "is not a directory or a .fr or .yaml or .yml or .json file"),
        ("config.fr", ".", "config.fr:1:1"),
    ]
    for rules, facts, said in cases:
        _test_file(tests, rules, facts)
        result = CliRunner().invoke(main, ["test", "--format", output, "tests"])
        assert result.exit_code == 1, result.output
        assert said in result.output.replace("\\n", "\n") or said in result.output
        assert "ghp_TOKEN" not in result.output and "root:" not in result.output
    _test_file(tests, "../secret/token.fr", "../secret")
    result = CliRunner().invoke(main, ["test", "--root", "secret", "tests"])  # named: read, still not echoed
    assert "outside the tree" not in result.output and "ghp_TOKEN" not in result.output


STDIN_VERBS = [["eval", str(HA / "policy.fr"), "--facts", "-"], ["fmt", "-"]]


@pytest.mark.parametrize("verb", STDIN_VERBS)
@pytest.mark.parametrize(
    ("given", "said"),
    [
        (b"\xff\xfe not UTF-8", "standard input is not UTF-8 text (byte 0, line 1)"),
        (b"a: 1\n\x00\n", "standard input is binary, not text"),
        (None, "standard input is closed"),
    ],
)
def test_standard_input_is_read_as_files_are(verb: list[str], given: bytes | None, said: str) -> None:
    """Non-UTF-8 on `--facts -` crashed in libyaml (the locale's escapes), a closed stdin was an AttributeError,
    and stdin had no size limit (issue 28)."""
    if given is None:  # the shell closes descriptor 0 before the interpreter starts
        command = ["sh", "-c", 'exec "$@" <&-', "sh", sys.executable, "-m", "engine", *verb]
        done = subprocess.run(command, capture_output=True, cwd=ROOT)
    else:
        environment = {**os.environ, "LC_ALL": "C"}  # the locale whose escapes let bad bytes through
        done = subprocess.run(
            [sys.executable, "-m", "engine", *verb], input=given, capture_output=True, cwd=ROOT, env=environment
        )
    assert done.returncode == 2, done.stderr
    assert said in done.stderr.decode() and "Traceback" not in done.stderr.decode()


def test_standard_input_is_held_to_the_fact_files_limit() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "engine", "eval", str(HA / "policy.fr"), "--facts", "-"],
        input=b"# " + b"x" * (64 * 1024 * 1024) + b"\n",
        capture_output=True,
        cwd=ROOT,
    )
    assert done.returncode == 2
    assert "standard input is larger than 67108864 bytes; fact files are limited to 67108864" in done.stderr.decode()


def test_every_public_call_with_a_wrong_argument_is_a_usage_error_or_works() -> None:
    """Each argument of each public function given values of the wrong kind, one at a time (the rest right):
    a FleetrulesError naming the problem, or an answer; never a raw TypeError, ValueError or AttributeError
    (113 of 972 such calls were, issue 28)."""
    import inspect

    import engine
    from engine import parse

    rules, facts = load_rules([HA / "policy.fr"]), load_facts([HA / "facts"])
    start = dt.datetime(2026, 12, 2, 10, tzinfo=dt.UTC)
    result, tree, text = evaluate(rules, facts), parse((HA / "policy.fr").read_text()), (HA / "policy.fr").read_text()
    right: dict[str, dict[str, Any]] = {
        "load_rules": {"paths": [HA / "policy.fr"]},
        "load_facts": {"paths": [HA / "facts"]},
        "evaluate": {"rules": rules, "facts": facts},
        "simulate": {"rules": rules, "facts": facts, "start": start, "events": []},
        "check": {"files": [tree]},
        "parse": {"text": text},
        "format_source": {"text": text},
        "format_file": {"file": tree, "source": text},
        **{n: {"result": result} for n in ("to_json", "to_text", "to_yaml", "result_data")},
    }
    wrong = [None, 1, -5, 2**80, 1.5, "x", b"x", [], [1], {}, {"a": 1}, object(), True, Path("/nonexistent"), [None]]
    raw = []
    for name, arguments in right.items():
        function = getattr(engine, name)
        for parameter in inspect.signature(function).parameters:
            for value in wrong:
                try:
                    function(**{**arguments, parameter: value})
                except FleetrulesError:
                    pass
                except Exception as exc:  # what the test looks for
                    raw.append(f"{name}({parameter}={value!r}): {type(exc).__name__}: {exc}")
    assert not raw, "\n".join(raw)
