"""Hardening, third pass (issue 45): files written only where asked, confinement, numbers and nesting past any
sense, wrong shapes, and the API's edges. The language server's share is in test_lsp.py; costs that must grow
linearly are measured in benchmarks/growth.py, not timed here."""

from __future__ import annotations

import grp
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine import FleetrulesError, load_facts, parse
from engine.cli import main
from engine.syntax.parse import MAX_DIGITS

ROOT = Path(__file__).resolve().parent.parent
HA = ROOT / "examples" / "flink-ha"


def _example(tmp_path: Path) -> Path:
    copy = tmp_path / "ha"
    shutil.copytree(HA, copy)
    return copy


def _bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    ("args", "output"),
    [
        (["report", "policy.fr", "--facts", "facts", "-o", "policy.fr"], "policy.fr"),
        (["report", "policy.fr", "--facts", "facts", "-o", "facts/clusters.yaml"], "facts/clusters.yaml"),
        (["eval", "policy.fr", "--facts", "facts", "--report", "facts/clusters.yaml"], "facts/clusters.yaml"),
        (["eval", "policy.fr", "--facts", "facts", "--report", "again.fr"], "again.fr"),  # a hard link of an input
        (
            ["diff", "--base", "policy.fr", "--head", "policy.fr", "--facts", "facts", "--report", "policy.fr"],
            "policy.fr",
        ),
        (["resilience", "policy.fr", "--facts", "facts", "--report", "facts/flinkdeployments.yaml"], "facts"),
    ],
)
def test_an_output_that_is_an_input_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], output: str
) -> None:
    """The rule or fact file was replaced by the HTML page, exit 0."""
    folder = _example(tmp_path)
    os.link(folder / "policy.fr", folder / "again.fr")
    monkeypatch.chdir(folder)
    before = _bytes(folder)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert "is one of the inputs" in result.stderr and output.split("/")[0] in result.stderr
    assert _bytes(folder) == before


def test_simulate_refuses_its_events_file_as_the_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _example(tmp_path)
    (folder / "events.yaml").write_text(
        "start: 2026-01-01T00:00:00Z\nevents:\n- at: 1m\n"
        "  condition: {cluster: member1, type: Ready, status: 'False'}\n"
    )
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(
        main, ["simulate", "policy.fr", "--facts", "facts", "--events", "events.yaml", "--report", "events.yaml"]
    )
    assert result.exit_code == 2 and "--report: events.yaml is one of the inputs" in result.stderr, result.output


def test_the_report_keeps_an_existing_files_mode_group_and_hard_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 0600 file with its own group became 0644 root's, and a hard link of it kept the old content."""
    folder = _example(tmp_path)
    monkeypatch.chdir(folder)
    report = tmp_path / "report.html"
    report.write_text("old")
    report.chmod(0o600)
    groups = [g.gr_gid for g in grp.getgrall() if g.gr_gid != os.getgid()]
    group = groups[0] if groups and os.geteuid() == 0 else os.getgid()
    os.chown(report, -1, group)
    result = CliRunner().invoke(main, ["eval", "policy.fr", "--facts", "facts", "--report", str(report)])
    assert result.exit_code == 0, result.output
    info = report.stat()
    assert (info.st_mode & 0o777, info.st_gid) == (0o600, group) and "<html" in report.read_text()
    os.link(report, tmp_path / "other.html")
    result = CliRunner().invoke(main, ["report", "policy.fr", "--facts", "facts", "-o", str(report)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "other.html").read_text() == report.read_text()


def test_a_new_report_has_the_umasks_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _example(tmp_path)
    monkeypatch.chdir(folder)
    old = os.umask(0o077)
    try:
        result = CliRunner().invoke(main, ["eval", "policy.fr", "--facts", "facts", "--report", "new.html"])
    finally:
        os.umask(old)
    assert result.exit_code == 0 and (folder / "new.html").stat().st_mode & 0o777 == 0o600


def test_fmt_never_follows_a_link_out_of_the_directory_given(tmp_path: Path) -> None:
    """`fmt DIR` rewrote the file outside DIR (and outside the repository) that a *.fr link in DIR named."""
    outside = tmp_path / "outside.fr"
    outside.write_text("policy   o {select{kind Job}}\n")
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "link.fr").symlink_to(outside)
    result = CliRunner().invoke(main, ["fmt", str(rules)])
    assert result.exit_code == 2 and "a link to" in result.stderr and "outside the directory given" in result.stderr
    assert outside.read_text() == "policy   o {select{kind Job}}\n"
    inside = rules / "inner.fr"
    inside.write_text("policy   i {select{kind Job}}\n")
    (rules / "link.fr").unlink()
    (rules / "again.fr").symlink_to("inner.fr")  # a link that stays in the directory is followed
    assert CliRunner().invoke(main, ["fmt", str(rules)]).exit_code == 0


@pytest.mark.parametrize("key", ["facts", "rules"])
def test_a_rule_tests_directory_cannot_reach_out_through_a_link(tmp_path: Path, key: str) -> None:
    """`facts: [facts]` with facts/link.yaml pointing outside the tree was read, its content in the error."""
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "x.yaml").write_text("password: hunter2\n")
    (secret / "x.fr").write_text("password hunter2\n")
    tree = tmp_path / "tree"
    (tree / key).mkdir(parents=True)
    (tree / key / f"link.{'yaml' if key == 'facts' else 'fr'}").symlink_to(
        secret / f"x.{'yaml' if key == 'facts' else 'fr'}"
    )
    (tree / "p.fr").write_text("policy p {\n  select { kind Deployment }\n}\n")
    named = "rules: [rules]\nfacts: []\n" if key == "rules" else "rules: [p.fr]\nfacts: [facts]\n"
    (tree / "p_test.yaml").write_text(named + "cases:\n- name: one\n  expect: {placements: {}}\n")
    result = CliRunner().invoke(main, ["test", str(tree)])
    assert result.exit_code == 1 and "outside the directory given" in result.stdout, result.output
    assert "hunter2" not in result.output


def test_a_number_past_the_digits_a_rule_file_takes_is_an_error_at_its_place(tmp_path: Path) -> None:
    """Past Python's 4,300-digit conversion limit, check, fmt, eval, convert and parse() ended in lark's
    VisitError."""
    text = "policy p {\n  select { kind Deployment }\n  spread by cluster max " + "9" * 5000 + "\n}\n"
    with pytest.raises(FleetrulesError) as caught:
        parse(text, "p.fr")
    (problem,) = caught.value.diagnostics
    assert (problem.span.line, problem.span.column) == (3, 25) if problem.span else False
    assert f"at most {MAX_DIGITS} digits" in problem.message
    path = tmp_path / "p.fr"
    path.write_text(text.replace("9" * 5000, "9" * 5000 + "\n  failover application { after " + "5" * 9000 + "s }"))
    for verb in (["check"], ["fmt"], ["convert", "--to", "yaml"], ["eval"]):
        result = CliRunner().invoke(main, [*verb, str(path)])
        assert result.exit_code in (1, 2) and (result.exception is None or isinstance(result.exception, SystemExit))
        assert "p.fr:3:25: error: a number of 5,000 characters" in result.output, (verb, result.output)
        assert "1 error, 1 warning" not in result.output  # the 0 read in its place is judged by no one


@pytest.mark.parametrize(
    ("document", "where"),
    [
        (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: a, namespace: d}}\nspec:\n  replicas: {n}\n",
            "5:13",
        ),
        (
            '{{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {{"name": "a", "namespace": "d"}}, '
            '"spec": {{"replicas": {n}}}}}',
            "1:115",
        ),
    ],
)
def test_a_number_past_pythons_digits_in_facts_is_an_error_at_its_place(
    tmp_path: Path, document: str, where: str
) -> None:
    path = tmp_path / "facts.yaml"
    path.write_text(document.format(n="9" * 5000))
    with pytest.raises(FleetrulesError) as caught:
        load_facts(path)
    assert f"facts.yaml:{where}: error" in caught.value.render() and "(5,000 characters)" in caught.value.render()


def test_check_counts_the_files_it_read_even_when_they_do_not_parse(tmp_path: Path) -> None:
    (tmp_path / "bad.fr").write_text("policy p {\n")
    (tmp_path / "good.fr").write_text("policy q {\n  select { kind Job }\n}\n")
    result = CliRunner().invoke(main, ["check", str(tmp_path)])
    assert result.exit_code == 1 and result.stderr.endswith("1 error, 0 warnings in 2 files\n"), result.output


@pytest.mark.parametrize("opening", ["(", "not ", "["])
def test_nesting_is_refused_at_the_101st_level_while_parsing(opening: str) -> None:
    """Parentheses had no depth limit; lists and `not` chains were refused only after a parse that copies the
    parser's stack per token (40,000 parentheses: 9.2 s)."""
    closing = {"(": ")", "not ": "", "[": "]"}[opening]
    inner = (
        f'b.name in {opening * 40_000}"a"{closing * 40_000}'
        if opening == "["
        else f'{opening * 40_000}b.name == "a"{closing * 40_000}'
    )
    text = f'rule x {{\n  when binding b and cluster c ({inner})\n  then reject c for b "x"\n}}\n'
    with pytest.raises(FleetrulesError) as caught:
        parse(text)
    (problem,) = caught.value.diagnostics
    assert problem.message == "nested more than 100 levels deep"
    shallow = text.replace(opening * 40_000, opening * 90).replace(closing * 40_000, closing * 90)
    if opening != "[":
        parse(shallow)


@pytest.mark.parametrize(
    ("expect", "said"),
    [
        ({"scores": 0}, "expect: a mapping of evictions, placements, rejected"),
        (
            {"rejected": {"b": "x"}},
            "expect.rejected.b: a mapping of cluster → the rules that reject it, found a string",
        ),
        ({"placements": {"b": "x"}}, "expect.placements.b: a mapping of clusters, feasible"),
        ({"placements": ["b"]}, "expect.placements: a mapping of each binding (NAMESPACE/NAME), found a list"),
        (
            {"placements": {"a/b": {"scores": 0}}},
            "expect.placements.a/b.scores: a mapping of cluster names, found a number",
        ),
        ({"rejected": {"a/b": {"c": "x"}}}, "expect.rejected.a/b.c: a list of rule names, found a string"),
        ({"evictions": [1]}, "expect.evictions[0]: a mapping of the eviction's fields, found a number"),
        ({"placements": {"a/b": {"nope": 1}}}, "expect.placements.a/b: unknown field 'nope'"),
    ],
)
@pytest.mark.parametrize("output", ["text", "junit", "sarif"])
def test_a_case_whose_expect_has_the_wrong_shape_fails_alone(
    tmp_path: Path, expect: dict[str, object], said: str, output: str
) -> None:
    """TypeError or AttributeError in text, JUnit and SARIF alike; `--format junit` wrote 0 bytes."""
    import yaml

    folder = _example(tmp_path)
    test = folder / "flink-ha_test.yaml"
    data = yaml.safe_load(test.read_text())
    data["cases"] = [data["cases"][0], {"name": "misshapen", "expect": expect}]
    test.write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(main, ["test", str(folder), "--format", output])
    assert result.exit_code == 1 and (result.exception is None or isinstance(result.exception, SystemExit))
    assert said.replace("→", "\\u2192" if output == "sarif" else "→") in result.stdout, result.stdout[-2000:]
    assert result.stdout.count("misshapen") >= 1 and ("1 passed, 1 failed" in result.stdout) == (output == "text")


def _sweep_inputs() -> tuple[object, object, list[object]]:
    from engine import load_rules
    from engine.review.impacts import scenarios

    rules, facts = load_rules([HA / "policy.fr"]), load_facts([HA / "facts"])
    return rules, facts, list(scenarios(facts.clusters, ["no-execute"], "cluster", 1))


def test_a_worker_killed_during_a_sweep_is_named_and_the_others_ended(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed as the OOM killer kills ended the sweep in BrokenProcessPool's traceback."""
    import signal

    from engine import UsageError
    from engine.review import impacts, resilience

    rules, facts, plan = _sweep_inputs()
    run = resilience.Base.run

    def dies(self: resilience.Base, scenario: impacts.Scenario) -> impacts.Impact:
        if scenario.name == plan[1].name:  # type: ignore[attr-defined]
            os.kill(os.getpid(), signal.SIGKILL)
        return run(self, scenario)

    monkeypatch.setattr(resilience.Base, "run", dies)  # the pool forks: its workers run this
    monkeypatch.setattr(resilience, "_available_bytes", lambda: None)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    with pytest.raises(UsageError) as caught:
        resilience.sweep(rules, facts, plan, workers=2)  # type: ignore[arg-type]
    message = str(caught.value)
    assert "killed by SIGKILL (as the kernel's out-of-memory killer does" in message
    assert "the sweep stopped and its other workers were ended" in message


def test_workers_are_bounded_by_cores_and_memory_and_the_cut_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--workers 1024` was taken whatever the machine (about 66 MB a worker)."""
    from engine.review import resilience

    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.setattr(resilience, "_own_bytes", lambda: 0)
    monkeypatch.setattr(resilience, "_available_bytes", lambda: 3 * resilience.WORKER_BYTES)
    assert resilience.usable_workers(1024, 500) == (3, "--workers 1024: 3 (memory for 3 of about 64 MiB each)")
    monkeypatch.setattr(resilience, "_available_bytes", lambda: None)
    assert resilience.usable_workers(1024, 500) == (8, "--workers 1024: 8 (8 cores)")
    assert resilience.usable_workers(4, 500) == (4, None)
    assert resilience.usable_workers(None, 500) == (8, None)
    assert resilience.usable_workers(16, 5) == (5, None)  # as many as there are scenarios, nothing to say
    result = CliRunner().invoke(
        main, ["resilience", str(HA / "policy.fr"), "--facts", str(HA / "facts"), "--workers", "1024"]
    )
    assert result.exit_code == 0 and "--workers" not in result.stderr  # fewer scenarios than workers: no word


@pytest.mark.parametrize(
    "answer", [b"", b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", b"SSH-2.0-OpenSSH_9.6\r\n"]
)
def test_a_scheduler_address_that_is_no_dask_scheduler_is_refused_in_time(
    monkeypatch: pytest.MonkeyPatch, answer: bytes
) -> None:
    """distributed read a web server's answer as a frame length (MemoryError), and waited for ever on a service
    that accepts and says nothing."""
    import socket
    import threading
    import time

    from engine import UsageError
    from engine.review import resilience

    pytest.importorskip("distributed")
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            held.append(connection)
            if answer:
                connection.sendall(answer)

    threading.Thread(target=serve, daemon=True).start()
    monkeypatch.setattr(resilience, "DASK_TIMEOUT", 0.5)
    rules, facts, plan = _sweep_inputs()
    started = time.monotonic()
    try:
        with pytest.raises(UsageError) as caught:
            resilience.sweep(rules, facts, plan, scheduler=f"tcp://127.0.0.1:{port}")  # type: ignore[arg-type]
    finally:
        listener.close()
        for connection in held:
            connection.close()
    assert f"not a Dask scheduler at tcp://127.0.0.1:{port}" in str(caught.value)
    assert time.monotonic() - started < 5


def test_simulate_near_the_last_year_with_gos_longest_durations_saturates(tmp_path: Path) -> None:
    """OverflowError in next_deadline (simulate() from the API too) from a graceful eviction timeout of Go's
    longest duration, starting in 9799."""
    from engine import Controllers, load_rules, simulate
    from engine.inputs.events import load_events

    folder = tmp_path / "checkpoint"
    shutil.copytree(ROOT / "examples" / "flink-checkpoint", folder)
    events = folder / "events" / "job-fails.yaml"
    events.write_text(events.read_text().replace("start: 2026-12-02T10:00:00Z", "start: 9799-12-31T00:00:00Z"))
    flags = Controllers.parse(["graceful-eviction-timeout=2562047h", "feature-gates=StatefulFailoverInjection=true"])
    start, timeline = load_events(events)
    entries = simulate(
        load_rules([folder / "policy.fr"]), load_facts([folder / "facts"]), start, timeline, controllers=flags
    )
    assert entries and all(e.time.year == 9799 for e in entries)


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ([None], "settings: expected FLAG=VALUE strings, found NoneType None"),
        ([1], "settings: expected FLAG=VALUE strings, found int 1"),
        ("feature-gates=Failover=true", "settings: expected a list of FLAG=VALUE strings"),
    ],
)
def test_controllers_parse_says_what_it_was_given(given: object, said: str) -> None:
    from engine import Controllers, UsageError

    with pytest.raises(UsageError, match=said.replace("(", r"\(").replace("[", r"\[")):
        Controllers.parse(given)  # type: ignore[arg-type]


def test_the_empty_rule_set_and_the_public_functions_docstrings() -> None:
    import engine
    from engine import RuleSet, evaluate

    assert evaluate(RuleSet(), load_facts([HA / "facts"])).placements == ()
    for name in ("parse", "format_source", "format_file", "to_json", "to_text", "to_yaml", "RuleSet"):
        doc = getattr(engine, name).__doc__
        assert doc and len(doc.split()) > 8, name


def test_classic_mac_line_ends_end_lines_and_comments(tmp_path: Path) -> None:
    """A bare CR did not end a line: the first line's comment ran to the end of the file and the policy was
    silently dropped (check exit 0, eval "no policy selects")."""
    path = tmp_path / "p.fr"
    path.write_bytes(b"# a comment\rpolicy p {\r  select { kind Deployment }\r  bogus\r}\r")
    result = CliRunner().invoke(main, ["check", str(path)])
    assert result.exit_code == 1 and "p.fr:4:3: error: unexpected 'bogus'" in result.stdout, result.output
    path.write_bytes(b"# a comment\rpolicy p {\r  select { kind Deployment }\r}\r")
    assert [p.name.value for p in parse(path.read_bytes().decode(), "p.fr").policies] == ["p"]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            "condition: {cluster: member1, type: [a], status: 'True'}",
            "events[0].condition.type: expected a string, found a list",
        ),
        (
            "condition: {cluster: member1, type: Ready, status: true}",
            'events[0].condition.status: expected a string (quote it: "True")',
        ),
        (
            "condition: {cluster: member1, type: '', status: 'True'}",
            "events[0].condition.type: expected a non-empty string",
        ),
        (
            "health: {binding: 1, cluster: member1}",
            'events[0].health.binding: expected a string (quote it: "1"), found a number',
        ),
    ],
)
def test_an_events_fields_are_strings(tmp_path: Path, body: str, said: str) -> None:
    """A field that is not a string was turned into Python's repr and accepted (`type: [a]` became "type=['a']")."""
    from engine.inputs.events import load_events

    path = tmp_path / "events.yaml"
    path.write_text(f"start: 2026-01-01T00:00:00Z\nevents:\n- at: 1m\n  {body}\n")
    with pytest.raises(FleetrulesError) as caught:
        load_events(path)
    assert said in caught.value.render() and "events.yaml:4:" in caught.value.render()


def test_an_at_of_thousands_of_digits_is_an_error(tmp_path: Path) -> None:
    from engine.inputs.events import load_events

    path = tmp_path / "events.yaml"
    path.write_text(f"start: 2026-01-01T00:00:00Z\nevents:\n- at: {'9' * 5000}\n  ready: {{cluster: a}}\n")
    with pytest.raises(FleetrulesError, match=r"events\.yaml:3:7: error: .*5,000 characters"):
        load_events(path)


def test_a_list_with_null_items_is_empty_and_a_bare_string_is_reported_at_its_document(tmp_path: Path) -> None:
    """`items: null` was "List ?: metadata.name: required"; a bare string document was reported at 1:1."""
    path = tmp_path / "facts.yaml"
    path.write_text("apiVersion: v1\nkind: List\nitems: null\n---\napiVersion: v1\nkind: DeploymentList\nitems: null\n")
    assert load_facts(path).bindings == ()
    path.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\njust a string\n")
    with pytest.raises(FleetrulesError) as caught:
        load_facts(path)
    assert "facts.yaml:5:1: error: expected a Kubernetes object (a mapping), found a string" in caught.value.render()


def test_the_controller_variable_splits_on_ascii_blanks_and_refuses_undecodable_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    args = ["eval", str(HA / "policy.fr"), "--facts", str(HA / "facts")]
    monkeypatch.setenv(
        "FLEETRULES_CONTROLLER", "feature-gates=Failover=true\u00a0enable-no-execute-taint-eviction=true"
    )
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "invalid value of Failover" in result.stderr  # one flag, not two
    monkeypatch.setenv("FLEETRULES_CONTROLLER", "feature-gates=Failover=true\udcff")  # as Python decodes a byte 0xff
    result = CliRunner().invoke(main, args)
    assert (
        result.exit_code == 2
        and "FLEETRULES_CONTROLLER: not UTF-8 (an undecodable byte at character 28)" in result.stderr
    )
    monkeypatch.setenv(
        "FLEETRULES_CONTROLLER", " feature-gates=Failover=true\t\tenable-no-execute-taint-eviction=true\n"
    )
    assert CliRunner().invoke(main, args).exit_code == 0


@pytest.mark.parametrize("verb", ["diff", "resilience"])
def test_a_base_ref_beginning_with_a_dash_never_reaches_git(verb: str) -> None:
    head = ["--head", str(HA / "policy.fr")] if verb == "diff" else [str(HA / "policy.fr")]
    result = CliRunner().invoke(main, [verb, *head, "--facts", str(HA / "facts"), "--base-ref=--output=/tmp/x"])
    assert result.exit_code == 2 and "is not a git revision (a revision does not begin with '-')" in result.stderr
    assert "usage: git" not in result.output


def test_an_input_that_cannot_be_read_is_not_an_output_that_cannot_be_written(tmp_path: Path) -> None:
    """A path too long to open said "cannot write the output: File name too long"."""
    long = "a" * 5000
    for args in (["eval", f"{long}.fr", "--facts", str(HA / "facts")], ["check", long], ["fmt", long]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2 and "File name too long" in result.stderr and "write" not in result.stderr
        assert "(5,00" in result.stderr and len(result.stderr) < 300


def test_a_timeline_written_as_it_comes_is_the_whole_timeline_byte_for_byte(tmp_path: Path) -> None:
    """simulate held the whole timeline (600 events over 1,000 x 10,000: 2.3 GB); now it writes each piece once
    nothing can change it. The pieces make the same bytes as the whole, in text and JSON, empty or not."""
    from engine import load_rules, simulate
    from engine.inputs.events import load_events
    from engine.render.timeline import TimelineWriter
    from tests.gates import ON

    folder = ROOT / "examples" / "flink-checkpoint"
    rules, facts = load_rules([folder / "policy.fr"]), load_facts([folder / "facts"])
    start, events = load_events(folder / "events" / "job-fails.yaml")
    whole = simulate(rules, facts, start, events, controllers=ON)
    pieces: list[list[object]] = []
    assert simulate(rules, facts, start, events, controllers=ON, flush=lambda p: pieces.append(list(p))) == ()
    assert len(pieces) > 1 and [e for p in pieces for e in p] == list(whole)
    for form in ("text", "json"):
        writer = TimelineWriter(form, start)
        streamed = "".join(writer.piece(p) for p in pieces) + writer.end()  # type: ignore[arg-type]
        assert streamed == "".join(TimelineWriter(form, start).whole(whole))
        assert "".join(TimelineWriter(form, start).whole(())) == "".join(TimelineWriter(form, start).whole([]))
    import json

    assert json.loads("".join(TimelineWriter("json", start).whole(whole)))["timeline"] == [e.data() for e in whole]


def test_an_event_naming_no_cluster_is_refused_before_the_timeline_begins(tmp_path: Path) -> None:
    folder = _example(tmp_path)
    (folder / "events.yaml").write_text(
        "start: 2026-01-01T00:00:00Z\nevents:\n- at: 1m\n  ready: {cluster: member1, status: 'False'}\n"
        "- at: 2m\n  ready: {cluster: nowhere, status: 'False'}\n"
    )
    result = CliRunner().invoke(
        main,
        [
            "simulate",
            str(folder / "policy.fr"),
            "--facts",
            str(folder / "facts"),
            "--events",
            str(folder / "events.yaml"),
        ],
    )
    assert result.exit_code == 2 and result.stdout == "" and "no cluster 'nowhere'" in result.stderr


def test_the_report_refuses_the_control_plane_file_and_the_config_file_as_its_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inputs read through options that keep no value (--control-plane, .fleetrules.yaml) are inputs too."""
    folder = _example(tmp_path)
    (folder / ".git").mkdir()
    (folder / ".fleetrules.yaml").write_text("controller: []\n")
    plane = ROOT / "tests" / "data" / "controlplane" / "karmada-scheduler.yaml"
    shutil.copy(plane, folder / "plane.yaml")
    monkeypatch.chdir(folder)
    base = ["eval", "policy.fr", "--facts", "facts"]
    for output, extra in ((".fleetrules.yaml", []), ("plane.yaml", ["--control-plane", "plane.yaml"])):
        before = (folder / output).read_bytes()
        result = CliRunner().invoke(main, [*base, *extra, "--report", output])
        assert result.exit_code == 2 and "is one of the inputs" in result.stderr, result.output
        assert (folder / output).read_bytes() == before
