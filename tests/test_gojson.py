"""Values as Karmada's Go code holds and prints them (engine/kube/gojson.py): json.Unmarshal makes every
number a float64, client-go's JSONPath prints scalars with fmt.Fprint and maps with json.Marshal, and
sigs.k8s.io/yaml turns YAML map keys into strings. The expected strings are Go's own output."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from engine.inputs.yaml import load_text
from engine.kube import gojson
from engine.kube.jsonpath import evaluate
from engine.kube.jsonpath_syntax import JsonPathError


@pytest.mark.parametrize(
    ("value", "printed"),
    [
        (10_000_000, "1e+07"),  # fmt.Sprint(float64(10000000))
        (123_456, "123456"),
        (1_234_567, "1.234567e+06"),
        (2.5, "2.5"),
        (100.0, "100"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (-0.5, "-0.5"),
        (0, "0"),
        (2**53 + 1, "9.007199254740992e+15"),  # past float64's integers
    ],
)
def test_scalars_print_as_fmt_fprint_prints_a_float64(value: Any, printed: str) -> None:
    assert evaluate("{.v}", {"v": value}) == printed


@pytest.mark.parametrize(
    ("value", "marshalled"),
    [
        ({"b": 1, "a": [2.0, 1e21, 1e20, 1e-7, 0.5]}, '{"a":[2,1e+21,100000000000000000000,1e-7,0.5],"b":1}'),
        ({"html": "<a&b>", "u": "é\u2028"}, '{"html":"\\u003ca\\u0026b\\u003e","u":"é\\u2028"}'),
        ({"n": None, "t": True, "s": "line\nnext"}, '{"n":null,"s":"line\\nnext","t":true}'),
    ],
)
def test_maps_and_lists_print_as_json_marshal(value: Any, marshalled: str) -> None:
    assert evaluate("{.v}", {"v": value}) == marshalled


@pytest.mark.parametrize(
    ("key", "text"),
    [
        (1, "1"),
        (True, "true"),
        (False, "false"),
        (2.5, "2.5"),
        (3.14159265358979, "3.1415927"),
        (1e20, "1e+20"),
        (1e300, ".inf"),  # beyond a float32: +Inf, which sigs.k8s.io/yaml writes .inf
        (-1e300, "-.inf"),
    ],
)
def test_yaml_keys_become_strings_as_sigs_k8s_io_yaml_writes_them(key: Any, text: str) -> None:
    """convertToJSONableObject: strconv.FormatFloat(key, 'g', -1, 32) for floats."""
    assert gojson.map_key(key) == text


def test_a_snapshot_with_mixed_keys_loads_with_string_keys() -> None:
    (document,), problems = load_text("status: {1: a, true: b, b: c, 2.5: d, when: 2026-01-01T00:00:00Z}\n", "s.yaml")
    assert not problems
    assert document.value["status"] == {"1": "a", "true": "b", "b": "c", "2.5": "d", "when": "2026-01-01T00:00:00Z"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{1: a, '1': b}\n", "duplicate key '1'"),  # the same JSON key twice
        ("{null: a}\n", "unsupported map key null"),
    ],
)
def test_keys_json_cannot_hold_are_errors(text: str, message: str) -> None:
    _, (problem,) = load_text(text, "s.yaml")
    assert message in problem.message and problem.span is not None and problem.span.line == 1


def test_python_values_are_taken_as_their_json() -> None:
    """The Python API may hand a status with datetimes, bytes and tuples: each as Go marshals it."""
    status = {"at": dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC), "raw": b"hi", "ids": (1, 2)}
    assert evaluate("{.at} {.raw} {.ids}", status) == "2026-01-02T03:04:05Z aGk= [1,2]"


@pytest.mark.parametrize("value", [{"big": 10**400}, {"naive": dt.datetime(2026, 1, 1)}, {"set": {1}}])
def test_values_json_cannot_hold_are_errors(value: Any) -> None:
    with pytest.raises(JsonPathError):
        evaluate("{.x}", value)


GO = Path(__file__).parent / "data" / "gojson"


def test_floats_and_strings_print_as_go_prints_them() -> None:
    """1,000 floats (random bits, integers, decimals, powers of ten, the edges of float32 and float64) and
    strings needing escapes, against Go's own fmt.Sprint, FormatFloat(…, 'g', -1, 32) and json.Marshal
    (tests/data/gojson/main.go, run with Go 1.27.3)."""
    given, printed = json.loads((GO / "in.json").read_text()), json.loads((GO / "out.json").read_text())
    floats = given["floats"]
    assert [gojson.fprint(f) for f in floats] == printed["fprint"]
    assert [gojson.format_float(f, "g", 32) for f in floats] == printed["g32"]
    assert [gojson.marshal(f) for f in floats] == printed["json"]
    assert [gojson.marshal(s) for s in given["strings"]] == printed["jstr"]


def test_a_float_key_beyond_a_float32_loads_as_infinity() -> None:
    (document,), problems = load_text("1.0e+300: x\n-1.0e+300: y\n", "k.yaml")
    assert problems == [] and document.value == {".inf": "x", "-.inf": "y"}


def test_quote_as_strconv_quote() -> None:
    """fmt's %q of a template in Karmada's "failed to execute jsonpath %q" (strconv.Quote)."""
    assert gojson.quote('{.a["b"]}') == '"{.a[\\"b\\"]}"'
    assert gojson.quote("tab\there\\é") == '"tab\\there\\\\é"'
    assert gojson.quote("\x01\x7f\u00a0\U0001f600\u2028") == '"\\x01\\x7f\\u00a0😀\\u2028"'
