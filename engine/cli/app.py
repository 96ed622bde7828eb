"""The command group, and how a command ends: exit codes, messages, output written as it comes, signals.

Exit codes: 0 clean; 1 problems found (``check``, ``fmt --check``, failed tests, ``diff --fail-on``); 2 usage
errors and input that cannot be used (unreadable files, invalid rules or facts given to a command that
evaluates them). Every command runs ``guarded``: FleetrulesError becomes rendered diagnostics; a traceback
means a bug.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import io
import os
import re
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from engine.collector import THRESHOLDS
from engine.errors import Diagnostic, FleetrulesError, UsageError, printable, render

EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM
EXIT_PIPE = 141  # 128 + SIGPIPE

F = TypeVar("F", bound=Callable[..., Any])


CONFIG_KEY = "fleetrules.config"
CONTROLLER_ENV = "FLEETRULES_CONTROLLER"


@dataclass(frozen=True)
class Verb:
    """Where a verb is defined (the module that adds it to ``main``) and its line in ``fleetrules --help``."""

    module: str
    summary: str


# Every verb, loaded when it is run or its own help asked for: `fleetrules --help` and `--version` load none of
# them, `eval` loads evaluating's imports and not the language server's, the report's or the sweep's.
VERBS: dict[str, Verb] = {
    "check": Verb("engine.cli.authoring", "Check rule files and policy YAML; report every problem."),
    "fmt": Verb("engine.cli.formatting", "Format rule files in the canonical layout."),
    "convert": Verb("engine.cli.authoring", "Convert PropagationPolicy YAML to rules, or rules to YAML."),
    "lsp": Verb("engine.cli.authoring", "Serve the language server for editors (LSP over stdio)."),
    "eval": Verb("engine.cli.evaluating", "Evaluate rules over facts: placements and evictions."),
    "explain": Verb("engine.cli.evaluating", "Why one binding's decision about one cluster was made."),
    "simulate": Verb("engine.cli.evaluating", "Step failover through time from a file of events."),
    "report": Verb("engine.cli.evaluating", "Write one self-contained HTML page of the results."),
    "diff": Verb("engine.cli.reviewing", "Compare two versions of the rules over the same facts."),
    "resilience": Verb("engine.cli.reviewing", "Rank clusters by what their failure does to the fleet."),
    "test": Verb("engine.cli.reviewing", "Run rule tests (*_test.yaml files)."),
    "config": Verb("engine.cli.configuring", "Print the control plane's settings in force, and whence."),
    "completion": Verb("engine.cli.configuring", "Print the shell completion script for SHELL."),
}


class Verbs(click.Group):
    """The group of ``VERBS``: a verb's module is imported when the verb is looked up, and its summary is the
    command's short help, so the help screen needs no module of any verb."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*VERBS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in VERBS:
            importlib.import_module(VERBS[cmd_name].module)
        return self.commands.get(cmd_name)

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        verb = VERBS.get(name or cmd.name or "")
        if verb is not None:
            cmd.short_help = verb.summary
        super().add_command(cmd, name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, VERBS[name].summary) for name in sorted(VERBS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=Verbs, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="fleetrules")
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="The control plane's settings (karmadaVersion, controller flags); default: .fleetrules.yaml in the working "
    "directory or the nearest above it, up to the repository's root.",
)
@click.pass_context
def main(ctx: click.Context, config_path: str | None) -> None:
    """Write, check, evaluate and review Karmada placement and failover policy as code."""
    gc.set_threshold(*THRESHOLDS)  # the process is ours: rendering and reviews collect less too (engine.collector)
    if ctx.invoked_subcommand == "lsp":
        return  # an editor's server reads no config file
    from engine.karmada.config import Config, find, load

    path = Path(config_path) if config_path is not None else find(Path.cwd())
    if config_path is not None and not Path(config_path).is_file():
        say(f"fleetrules: error: --config: no such file: {config_path}", err=True)
        sys.exit(EXIT_USAGE)
    try:
        ctx.meta[CONFIG_KEY] = load(path) if path is not None else Config("")
    except FleetrulesError as exc:
        say(exc.render(), err=True)
        sys.exit(EXIT_USAGE)


def say(text: str, err: bool = False, nl: bool = True) -> None:
    """Print ``text`` with control characters and lone surrogates escaped (a rule file's "\\u0000"
    prints as that, not as a NUL); on a terminal, diagnostics' labels in colour (``coloured``)."""
    shown = printable(text)
    click.echo(coloured(shown) if err and colour(sys.stderr) else shown, err=err, nl=nl)


_LABELS = re.compile(r"(?m)(^|: )(error|warning)(: )")
_COLOURS = {"error": "red", "warning": "yellow"}


def colour(stream: Any) -> bool:
    """Whether ``stream`` takes colour: a terminal, and NO_COLOR unset or empty (no-color.org); piped, never."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


def coloured(text: str) -> str:
    """The ``error`` and ``warning`` labels of rendered diagnostics in bold red and yellow (after ``printable``,
    which would escape the colours' own escape character)."""
    return _LABELS.sub(lambda m: m[1] + click.style(m[2], fg=_COLOURS[m[2]], bold=True) + m[3], text)


def warn(d: Diagnostic, sources: Mapping[str, str] | None = None) -> None:
    """A warning to stderr, once per command: a snapshot read both as rules and as facts converts its
    policies twice, and says so once."""
    seen = click.get_current_context().meta.setdefault("fleetrules.warned", set())
    key = (d.severity, d.message, d.span, d.subject)
    if key not in seen:
        seen.add(key)
        say(render(d, sources), err=True)


def stream(chunks: Iterable[str]) -> None:
    """Write ``chunks`` to stdout as they come (escaped as ``say`` escapes), in pieces of about 64 KiB."""
    out = sys.stdout
    pending: list[str] = []
    size = 0
    for chunk in chunks:
        pending.append(chunk)
        size += len(chunk)
        if size >= 65536:
            out.write(printable("".join(pending)))
            pending, size = [], 0
    out.write(printable("".join(pending)))


def guarded(command: F) -> F:
    """Run a command body; FleetrulesError becomes rendered messages and an exit code; output that
    cannot be written and an interrupt end it with a message instead of a traceback."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            value = command(*args, **kwargs)
            sys.stdout.flush()  # a full device or a closed pipe shows here, not at exit
            return value
        except UsageError as exc:
            say(f"fleetrules: {exc.render()}", err=True)
            sys.exit(EXIT_USAGE)
        except FleetrulesError as exc:  # rules or facts that cannot be used: an input error
            say(exc.render(), err=True)
            sys.exit(EXIT_USAGE)
        except OSError as exc:
            if exc.filename is not None and not isinstance(
                exc, BrokenPipeError
            ):  # a path: an input, or a file asked for
                say(f"fleetrules: error: {_shown(exc.filename)}: {exc.strerror or exc}", err=True)
                sys.exit(EXIT_USAGE)
            _unwritable(exc)  # standard output
        except KeyboardInterrupt:
            say("fleetrules: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except _Terminated:
            say("fleetrules: terminated", err=True)
            sys.exit(EXIT_TERMINATED)

    return run  # type: ignore[return-value]


class _Terminated(BaseException):
    """SIGTERM, raised where the command is, so that what it started ends too (resilience's workers, temporary
    files): the default action killed the process at once and orphaned its workers."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


def _shown(filename: object) -> str:
    """A path an OSError names, shortened when it is longer than a line (ENAMETOOLONG: 5,000 characters)."""
    text = os.fsdecode(filename) if isinstance(filename, (str, bytes, os.PathLike)) else str(filename)
    return text if len(text) <= 100 else f"{text[:60]}…{text[-20:]} ({len(text):,} characters)"


def _unwritable(exc: OSError) -> NoReturn:
    """End on output that cannot be written: quietly when the reader went away (`| head`), as a shell would;
    else with a message."""
    _silence_stdout()
    if isinstance(exc, BrokenPipeError):
        sys.exit(EXIT_PIPE)
    say(f"fleetrules: error: cannot write the output: {exc.strerror or exc}", err=True)
    sys.exit(EXIT_USAGE)


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):
        pass  # not a real file (tests): nothing is flushed at exit


def progress(total: int, label: str) -> contextlib.AbstractContextManager[Callable[[int], None] | None]:
    """A progress bar on a terminal (click's), nothing on a pipe or in CI."""

    @contextlib.contextmanager
    def bar() -> Iterator[Callable[[int], None] | None]:
        if not sys.stderr.isatty() or os.environ.get("CI") or total < 2:
            yield None
            return
        with click.progressbar(length=total, label=label, file=sys.stderr) as shown:
            done = [0]

            def advance(count: int) -> None:
                shown.update(count - done[0])
                done[0] = count

            yield advance
            advance(total)  # done: the last report may come before the last step

    return bar()


def package_version() -> str:
    import importlib.metadata  # only here: 30 ms of every start otherwise

    try:
        return importlib.metadata.version("fleetrules")
    except importlib.metadata.PackageNotFoundError:
        return "0"


def run(prog_name: str | None = None) -> None:
    """The command (the `fleetrules` script, `python -m engine`): ``main``, where output that cannot be written
    even before a command runs (`--help > /dev/full`, a closed pipe) ends it with a message, not a traceback."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    try:
        main(prog_name=prog_name, complete_var="_FLEETRULES_COMPLETE")  # `python -m engine` completes too
    except OSError as exc:
        _unwritable(exc)
    except SystemExit as exc:
        if exc.code in (EXIT_INTERRUPTED, EXIT_TERMINATED):
            # stopped: what the command started was ended as the exception left it (workers killed, files
            # removed); the interpreter's own shutdown would still join a killed pool's threads, which then
            # write to closed pipes and print their tracebacks
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(exc.code)
        raise


def kubectl_main() -> None:
    """The kubectl plugin (`kubectl fleetrules …`): the same commands, named as kubectl users type them."""
    run(prog_name="kubectl fleetrules")
