"""Reading one Kubernetes object's fields: each problem at the field's file, line and column (or the object's name),
the value's shape checked as the API server would decode it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from engine.codes import Code
from engine.errors import Diagnostic, Span, did_you_mean, error, warning
from engine.inputs.facts import (
    TimeOutOfRange,
    parse_time,
)
from engine.inputs.marks import Marks
from engine.kube import validation as k8s
from engine.kube.quantity import parse_quantity

INT32_MAX = k8s.INT32_MAX


_STEP = re.compile(r"\[([0-9]+)\]|([^.\[]+)")


TOP_FIELDS = {"apiVersion", "kind", "metadata", "spec", "status"}


class Reader:
    """Validates one object; each problem at the field's position in its file, or, for a Python object,
    under a subject such as ``object 2 (Cluster m1)``."""

    def __init__(self, subject: str, problems: list[Diagnostic], obj: Any = None, marks: Marks | None = None) -> None:
        self.subject = subject
        self.what = ""  # "Cluster m1", once known
        self.problems = problems
        self.obj = obj
        self.marks = marks

    def span(self, path: str, of_key: bool = False) -> Span | None:
        """Where ``path`` (``spec.taints[0].effect``) stands in the file: the deepest part of it that exists."""
        if self.marks is None:
            return None
        container, key = self.obj, None
        steps = [(int(i) if i else name) for i, name in _STEP.findall(path)]
        while steps:
            found = False
            for size in range(len(steps), 0, -1):  # label keys hold dots: the longest key that exists
                step = steps[0] if size == 1 else ".".join(str(s) for s in steps[:size])
                inside = container if key is None else _child(container, key)
                if _child(inside, step) is not _MISSING:
                    container, key, steps, found = inside, step, steps[size:], True
                    break
            if not found:
                break
        return self.marks.span(container, key, of_key)

    def _add(self, make: Callable[..., Diagnostic], path: str, message: str, of_key: bool = False) -> None:
        text = f"{path}: {message}" if path else message
        span = self.span(path, of_key)
        if span is not None:
            self.problems.append(make(f"{self.what}: {text}" if self.what else text, span, code=Code.OBJECT))
        else:
            self.problems.append(make(text, subject=self.subject, code=Code.OBJECT))

    def fail(self, path: str, message: str) -> None:
        self._add(error, path, message)

    def warn(self, path: str, message: str) -> None:
        self._add(warning, path, message)

    def mapping(self, value: Any, path: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(path, f"expected a mapping, found {type_name(value)}")
            return {}
        return value

    def sequence(self, value: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(path, f"expected a list, found {type_name(value)}")
            return []
        return value

    def string(self, obj: Mapping[str, Any], key: str, path: str, required: bool = False) -> str:
        value = obj.get(key)
        if value is None:
            if required:
                self.fail(join_path(path, key), "required")
            return ""
        if not isinstance(value, str):
            self.fail(join_path(path, key), f"expected a string, found {type_name(value)}")
            return ""
        return value

    def integer(
        self, obj: Mapping[str, Any], key: str, path: str, minimum: int | None = None, maximum: int = INT32_MAX
    ) -> int | None:
        """An integer field; Kubernetes' replica counts and seconds are int32, larger ones are refused."""
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(join_path(path, key), f"expected an integer, found {type_name(value)}")
            return None
        if minimum is not None and value < minimum:
            self.fail(join_path(path, key), f"must be at least {minimum}, found {value}")
            return None
        if value > maximum:
            self.fail(join_path(path, key), f"must be at most {maximum} (an int32), found {value}")
            return None
        return value

    def boolean(self, obj: Mapping[str, Any], key: str, path: str) -> bool | None:
        value = obj.get(key)
        if value is None or isinstance(value, bool):
            return value
        self.fail(join_path(path, key), f"expected true or false, found {type_name(value)}")
        return None

    def time(self, obj: Mapping[str, Any], key: str, path: str) -> dt.datetime | None:
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, dt.datetime):
            return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        if isinstance(value, str):
            try:
                return parse_time(value)
            except TimeOutOfRange as exc:
                self.fail(join_path(path, key), str(exc))
                return None
            except ValueError:
                pass
        self.fail(join_path(path, key), f"expected an RFC 3339 time, found {value!r}")
        return None

    def labels(self, obj: Mapping[str, Any], key: str, path: str) -> dict[str, str]:
        raw = self.mapping(obj.get(key), join_path(path, key))
        out: dict[str, str] = {}
        for k, v in raw.items():
            if not isinstance(k, str) or not isinstance(v, str):
                self.fail(join_path(path, f"{key}.{k}"), f"label keys and values must be strings (quote {v!r})")
            else:
                out[k] = v
        return out

    def resources(self, obj: Mapping[str, Any], key: str, path: str) -> dict[str, Fraction]:
        """A corev1.ResourceList: resource name → quantity (``500m``, ``4Gi``, ``2``)."""
        raw = self.mapping(obj.get(key), join_path(path, key))
        quantities = {str(name): self.quantity(raw, name, join_path(path, key)) for name in raw}
        return {name: q for name, q in quantities.items() if q is not None}

    def quantity(self, obj: Mapping[str, Any], key: str, path: str) -> Fraction | None:
        try:
            return parse_quantity(obj.get(key))
        except ValueError as exc:
            self.fail(join_path(path, key), str(exc))
            return None

    def known(self, obj: Mapping[str, Any], allowed: set[str], path: str) -> None:
        for key in obj:
            if key not in allowed:
                message = f"unknown field, not evaluated{did_you_mean(str(key), allowed)}"
                self._add(warning, join_path(path, str(key)), message, of_key=True)


_MISSING = object()


def _child(container: Any, step: Any) -> Any:
    if isinstance(container, dict):
        return container.get(step, _MISSING)
    if isinstance(container, list) and isinstance(step, int) and 0 <= step < len(container):
        return container[step]
    return _MISSING


def join_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def type_name(value: Any) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number"}.get(
        type(value), type(value).__name__
    )
