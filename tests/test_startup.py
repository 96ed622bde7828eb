"""Start-up (issue 47): a verb loads what it needs when it runs. `fleetrules --version` and `--help` load no verb's
module and nothing of the pipeline; the public API loads a name's module when the name is first read; the help
screen's summaries are the verbs' own short help. The time itself is a benchmark's (benchmarks/startup.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import click.testing
import pytest

HEAVY = ("lark", "durable", "yaml", "jinja2", "pygls", "engine.pipeline", "engine.schedule", "engine.cli.evaluating")


def loaded_after(code: str) -> list[str]:
    """The heavy modules loaded by ``code`` in a fresh interpreter."""
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    modules = json.loads(out.splitlines()[-1])
    return sorted({h for h in HEAVY for m in modules if m == h or m.startswith(h + ".")})


@pytest.mark.parametrize("args", [["--version"], ["--help"], []])
def test_the_version_and_the_help_load_no_verb(args: list[str]) -> None:
    code = (
        "import contextlib, io\nfrom engine.cli import main\n"
        f"with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n    main({args!r})"
    )
    assert loaded_after(code) == []


def test_a_verb_loads_its_own_module_only() -> None:
    code = (
        "import contextlib, io\nfrom engine.cli import main\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n    main(['fmt', '--help'])"
    )
    loaded = loaded_after(code)
    assert "engine.cli.evaluating" not in loaded and "pygls" not in loaded and "jinja2" not in loaded


def test_formatting_loads_the_parser_and_the_formatter_alone() -> None:
    """`fmt` (an editor's or a pre-commit hook's) loads no rule engine and no evaluation."""
    code = (
        "import contextlib, io\nfrom engine.cli import main\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['fmt', '--check', 'examples/flink-ha/policy.fr'])"
    )
    loaded = loaded_after(code)
    assert "lark" in loaded and not {"durable", "engine.pipeline", "jinja2", "pygls"} & set(loaded)


def test_the_api_loads_a_name_when_read() -> None:
    assert loaded_after("import engine") == []
    assert "engine.pipeline" in loaded_after("from engine import evaluate")


def test_the_apis_names_are_its_functions_whatever_was_imported_first() -> None:
    """``engine.check`` and ``engine.evaluate`` are functions, never modules of the same name (the stages are
    engine.checker and engine.pipeline)."""
    import engine
    import engine.checker.semantic
    import engine.pipeline

    assert callable(engine.check) and engine.check.__module__ == "engine.checker.semantic"
    assert callable(engine.evaluate) and engine.evaluate.__module__ == "engine.pipeline"
    assert set(engine.__all__) <= set(dir(engine))
    for name in engine.__all__:
        assert getattr(engine, name) is not None
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        engine.nothing  # noqa: B018


def test_every_verb_is_where_the_table_says_with_its_summary() -> None:
    from engine.cli import VERBS, main

    context = click.Context(main)
    assert main.list_commands(context) == sorted(VERBS)
    for name, verb in VERBS.items():
        command = main.get_command(context, name)
        assert command is not None, name
        assert command.callback is not None and command.callback.__module__ == verb.module, name
        assert command.get_short_help_str() == verb.summary
        assert len(verb.summary) <= 62, f"{name}: the help screen's column is 62 characters wide"
    assert sorted(main.commands) == sorted(VERBS), "a verb added to main is not in engine.cli.app.VERBS"


def test_an_unknown_verb_is_refused_as_before() -> None:
    from engine.cli import main

    result = click.testing.CliRunner().invoke(main, ["evaluate"])
    assert result.exit_code == 2 and "No such command 'evaluate'" in result.output
