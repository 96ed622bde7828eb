"""The ``fleetrules`` command line: one module per family of verbs, on the group of engine.cli.app.

- engine.cli.authoring: ``check``, ``convert``, ``lsp`` (writing rules); engine.cli.formatting: ``fmt``;
- engine.cli.evaluating: ``eval``, ``explain``, ``simulate``, ``report`` (rules over facts);
- engine.cli.reviewing: ``diff``, ``resilience``, ``test`` (reviewing a change);
- engine.cli.configuring: ``config``, ``completion`` (the settings in force: engine.karmada.config reads the file);
- engine.cli.formats: every verb's output formats, one registry; engine.cli.options: the options verbs share;
  engine.cli.inputs: what verbs read; engine.cli.app: the group, exit codes, how a command ends.

Each verb's module is imported when the verb is run (engine.cli.app.VERBS), so the help and the version load
none of them.

Exit codes: 0 clean; 1 problems found (``check``, ``fmt --check``, failed tests, ``diff --fail-on``); 2 usage
errors and input that cannot be used (unreadable files, invalid rules or facts given to a command that
evaluates them). Every command turns FleetrulesError into rendered diagnostics; a traceback means a bug.
"""

from __future__ import annotations

from engine.cli.app import CONTROLLER_ENV, EXIT_PROBLEMS, EXIT_USAGE, VERBS, kubectl_main, main, run

__all__ = ["CONTROLLER_ENV", "EXIT_PROBLEMS", "EXIT_USAGE", "VERBS", "kubectl_main", "main", "run"]
