"""The control plane declared once: ``.fleetrules.yaml``, found from the working directory up to the repository's
root (the first directory holding ``.git``), or named with ``fleetrules --config FILE``.

    karmadaVersion: "1.19"            # as --karmada-version
    controller:                       # as --controller takes them, one flag each
    - feature-gates=AllAlpha=true,AllBeta=true
    - enable-no-execute-taint-eviction=true

Precedence, each over the next: ``--controller`` and ``--karmada-version``, then FLEETRULES_CONTROLLER, then this
file, then Karmada's defaults. Rule tests' ``controllers:`` apply on top of the file. `fleetrules config` prints
what is in force and where each setting came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.codes import Code
from engine.errors import Diagnostic, FleetrulesError, Span, error
from engine.inputs.files import display_path
from engine.inputs.yaml import load_file
from engine.karmada.gates import Controllers
from engine.syntax.schema import karmada_version

CONFIG_NAME = ".fleetrules.yaml"
KEYS = ("karmadaVersion", "controller")


@dataclass(frozen=True)
class Config:
    """A config file's settings, each with where it is written (``file:line:col``)."""

    path: str  # as shown
    karmada_version: tuple[str, str] | None = None  # the version, where
    controller: tuple[tuple[str, str], ...] = ()  # each flag, where


def find(start: Path) -> Path | None:
    """The ``.fleetrules.yaml`` of ``start`` or the nearest directory above it, up to the first that holds ``.git``
    (the repository's root: a file above it belongs to something else), or None."""
    for directory in (start, *start.parents):
        candidate = directory / CONFIG_NAME
        if candidate.is_file():
            return candidate
        if (directory / ".git").exists():
            return None
    return None


def load(path: Path) -> Config:
    """The settings of the config file at ``path``; FleetrulesError at the file, line and column of each problem
    (an unknown key, a value of the wrong kind, a flag the control plane would refuse)."""
    shown = display_path(path)
    documents, problems = load_file(path, shown, "config files")
    if problems:
        raise FleetrulesError(problems)
    values = [d for d in documents if d.value is not None]
    if not values:
        return Config(shown)
    if len(values) > 1 or not isinstance(values[0].value, dict):
        where = values[1 if len(values) > 1 else 0].span()
        raise FleetrulesError([error(f"expected one mapping of {', '.join(KEYS)}", where, code=Code.CONTROL_PLANE)])
    document, data = values[0], values[0].value
    out: list[Diagnostic] = []

    def at(key: Any, of_key: bool = False, holder: Any = data) -> Span:
        return document.span(holder, key, of_key)

    for key in data:
        if key not in KEYS:
            out.append(
                error(
                    f"unknown key {str(key)!r}; a config file has {', '.join(KEYS)}",
                    at(key, True),
                    code=Code.CONTROL_PLANE,
                )
            )
    version = None
    if "karmadaVersion" in data:
        try:
            version = (karmada_version(str(data["karmadaVersion"])), str(at("karmadaVersion")))
        except ValueError as exc:
            out.append(error(f"karmadaVersion: {exc}", at("karmadaVersion"), code=Code.CONTROL_PLANE))
    flags: list[tuple[str, str]] = []
    raw = data.get("controller")
    if raw is not None and not (isinstance(raw, list) and all(isinstance(f, str) for f in raw)):
        message = "controller: expected a list of FLAG=VALUE strings, as --controller takes them"
        out.append(error(message, at("controller"), code=Code.CONTROL_PLANE))
    elif raw is not None:
        for index, flag in enumerate(raw):
            where = at(index, holder=raw)
            try:
                Controllers.parse([f for f, _ in flags] + [flag])
            except ValueError as exc:
                out.append(error(f"controller: {exc}", where, code=Code.CONTROL_PLANE))
                continue
            flags.append((flag, str(where)))
    if out:
        raise FleetrulesError(out, {shown: path.read_text(encoding="utf-8-sig")})
    return Config(shown, version, tuple(flags))


def split_flags(raw: str) -> list[str]:
    """FLEETRULES_CONTROLLER's flags, split as a shell splits words, on ASCII blanks (a no-break space is part of a
    flag's value, not a separator)."""
    return [flag for flag in re.split(r"[ \t\n\r\f\v]+", raw) if flag]
