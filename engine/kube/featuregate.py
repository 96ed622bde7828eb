"""``--feature-gates`` as Kubernetes' component-base parses it (k8s.io/component-base/featuregate/feature_gate.go,
v0.36 as Karmada vendors it): ``featureGate.SetWithLogger`` splits ``NAME=BOOL,…`` and ``unsafeSetFromMap`` applies
it over what earlier uses of the flag set, with the special gates ``AllAlpha`` and ``AllBeta``.

- Each use of the flag is one map: empty items are skipped, names and values trimmed, a later item of the same
  name wins within it; an item without ``=`` is "missing bool value for NAME", a value strconv.ParseBool refuses is
  "invalid value of NAME=VALUE, err: …".
- A name the component does not know is "unrecognized feature gate: NAME", and the whole use fails.
- ``AllAlpha=BOOL`` (``AllBeta``) sets every alpha (beta) gate that is not set yet, by an earlier use of the flag
  or by another item of this one (Go visits a map in no order, so a gate named beside it always keeps its own
  value, whichever comes first); the gate itself is recorded as set.
- A gate not set has its default.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

ALL_ALPHA, ALL_BETA = "AllAlpha", "AllBeta"


def go_bool(text: str) -> bool | None:
    """strconv.ParseBool, as pflag and component-base read a boolean; None for anything else."""
    return _GO_BOOLS.get(text)


_GO_BOOLS = dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True) | dict.fromkeys(
    ("0", "f", "F", "FALSE", "false", "False"), False
)


class Stage(enum.StrEnum):
    ALPHA = "alpha"
    BETA = "beta"
    GA = "GA"
    DEPRECATED = "deprecated"


@dataclass(frozen=True)
class Spec:
    """featuregate.FeatureSpec: its default and stage."""

    default: bool
    stage: Stage


class FeatureGateError(ValueError):
    """What component-base's Set returns, in its words."""


def parse_use(value: str) -> dict[str, bool]:
    """One ``--feature-gates`` value as a map (featureGate.SetWithLogger)."""
    out: dict[str, bool] = {}
    for item in value.split(","):
        if not item:
            continue
        name, sep, setting = item.partition("=")
        name = name.strip()
        if not sep:
            raise FeatureGateError(f"missing bool value for {name}")
        setting = setting.strip()
        on = go_bool(setting)
        if on is None:
            raise FeatureGateError(
                f'invalid value of {name}={setting}, err: strconv.ParseBool: parsing "{setting}": invalid syntax'
            )
        out[name] = on
    return out


def apply_use(known: Mapping[str, Spec], enabled: dict[str, bool], given: Mapping[str, bool]) -> None:
    """``given`` (one use of the flag) applied over ``enabled`` (what earlier uses set), as unsafeSetFromMap
    applies it; FeatureGateError for a name ``known`` lacks, ``enabled`` then unchanged."""
    unknown = [name for name in given if name not in known and name not in (ALL_ALPHA, ALL_BETA)]
    if unknown:
        raise FeatureGateError(f"unrecognized feature gate: {unknown[0]}")
    explicit = {name: on for name, on in given.items() if name not in (ALL_ALPHA, ALL_BETA)}
    enabled.update(explicit)  # named gates first: a special gate beside them never overrides them
    for special, stage in ((ALL_ALPHA, Stage.ALPHA), (ALL_BETA, Stage.BETA)):
        if special in given:
            for name, spec in known.items():
                if spec.stage is stage and name not in enabled:
                    enabled[name] = given[special]
            enabled[special] = given[special]


def effective(known: Mapping[str, Spec], enabled: Mapping[str, bool]) -> dict[str, bool]:
    """Every known gate's value: as set, else its default (featureGate.Enabled)."""
    return {name: enabled.get(name, spec.default) for name, spec in known.items()}
