"""``fleetrules config``: the control plane's settings in force, and where each came from (the config file, the
environment, the command line, or Karmada's defaults)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from engine.cli import options
from engine.cli.app import CONTROLLER_ENV, guarded, main
from engine.cli.formats import CONFIG, Configured
from engine.karmada.gates import KARMADA_GATES, Controllers
from engine.kube import featuregate
from engine.syntax.schema import KARMADA_VERSION

DEFAULT = "Karmada's default"
_SIMPLE_FLAGS: dict[str, Callable[[Controllers], str]] = {  # the flags of one value: how its value in force reads
    "enable-no-execute-taint-eviction": lambda c: str(c.no_execute_taint_eviction).lower(),
    "no-execute-taint-eviction-purge-mode": lambda c: c.taint_purge_mode,
    "graceful-eviction-timeout": lambda c: f"{c.graceful_eviction_timeout}s",
    "skipped-propagating-namespaces": lambda c: ",".join(c.skipped_namespaces.patterns),
}


@main.command("config")
@CONFIG.option()
@click.option("--karmada-version", "given_version", help="As every verb takes it: shown as in force.")
@click.option("--controller", "given", multiple=True, metavar="FLAG=VALUE", help="As every verb takes it.")
@guarded
def config_command(output: str, given_version: str | None, given: tuple[str, ...]) -> None:
    """Print the control plane's settings in force (the Karmada version, each controller flag, each feature gate)
    and where each came from: --controller, FLEETRULES_CONTROLLER, the config file (.fleetrules.yaml), or
    Karmada's defaults."""
    CONFIG.write(output, Configured(settings(given_version, given)))


def settings(given_version: str | None, given: tuple[str, ...]) -> dict[str, Any]:
    """What ``config`` prints, as data; a UsageError for a setting the control plane would refuse."""
    from engine.errors import UsageError
    from engine.syntax.schema import karmada_version

    written = options.config()
    if given_version is not None:
        try:
            version = {"value": karmada_version(given_version), "from": "--karmada-version"}
        except ValueError as exc:
            raise UsageError(f"--karmada-version: {exc}") from None
    elif written.karmada_version is not None:
        version = {"value": written.karmada_version[0], "from": written.karmada_version[1]}
    else:
        version = {"value": KARMADA_VERSION, "from": "the newest Karmada version fleetrules models"}
    flags = [
        *({"flag": f, "from": where} for f, where in written.controller),
        *({"flag": f, "from": CONTROLLER_ENV} for f in options.environment_flags()),
        *({"flag": f, "from": "--controller"} for f in given),
    ]
    try:
        in_force = Controllers.parse([f["flag"] for f in flags])
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    simple = {}
    for name, shown in _SIMPLE_FLAGS.items():
        last = next(
            (f["from"] for f in reversed(flags) if f["flag"].removeprefix("--").startswith(f"{name}=")), DEFAULT
        )
        simple[name] = {"value": shown(in_force), "from": last}
    gates: dict[str, bool] = {}
    source: dict[str, str] = {}
    for f in flags:
        flag, _, value = f["flag"].removeprefix("--").partition("=")
        if flag == "feature-gates":
            before = dict(gates)
            featuregate.apply_use(KARMADA_GATES, gates, featuregate.parse_use(value))
            source |= {name: f["from"] for name, on in gates.items() if before.get(name) != on or name not in before}
    values = featuregate.effective(KARMADA_GATES, gates)
    feature_gates = {
        name: {
            "value": values[name],
            "from": source.get(name, DEFAULT),
            "stage": f"{spec.stage}, default {str(spec.default).lower()}",
            "modelled": name in Controllers.GATES or name in Controllers.ASSUMED,
        }
        for name, spec in sorted(KARMADA_GATES.items())
    }
    return {
        "configFile": written.path,
        "karmadaVersion": version,
        "flags": flags,
        "inForce": simple,
        "featureGates": feature_gates,
    }


@main.command("completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the shell completion script for SHELL (click's): verbs, options, their choices and file names.

    \b
    Examples:
      source <(fleetrules completion bash)            # in ~/.bashrc
      fleetrules completion zsh > "${fpath[1]}/_fleetrules"
      fleetrules completion fish > ~/.config/fish/completions/fleetrules.fish
    """
    from click.shell_completion import get_completion_class

    script = get_completion_class(shell)
    assert script is not None  # click knows the three
    # the command the shell completes is `fleetrules` (click reads _FLEETRULES_COMPLETE when it runs)
    click.echo(script(ctx.find_root().command, {}, "fleetrules", "_FLEETRULES_COMPLETE").source())
