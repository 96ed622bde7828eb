"""Values as Karmada's Go code sees and prints them.

A workload's status reaches Karmada as JSON: ``json.Unmarshal`` into ``any`` makes every number a
float64 and every map key a string, and client-go's JSONPath prints a scalar with ``fmt.Fprint`` and a
map or list with ``json.Marshal``. So a status field ``12345678`` becomes the label value
``1.2345678e+07``, as in Karmada. A YAML snapshot reaches the API server through sigs.k8s.io/yaml,
which turns non-string map keys into strings (``1`` → ``"1"``, ``true`` → ``"true"``).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import struct
from collections.abc import Mapping
from decimal import Decimal
from typing import Any


class NotJson(ValueError):
    """A value JSON cannot hold (a number beyond float64, an unsupported type or map key)."""


def _digits(x: float, bits: int) -> tuple[str, int]:
    """The shortest decimal digits that read back as ``x`` at ``bits`` precision, and the decimal point's
    position (Go's strconv digits ``d`` and ``dp``): 1234.5 → ("12345", 4)."""
    if bits == 32:  # ``x`` is a float32 already (format_float rounded it)
        for precision in range(1, 10):
            text = f"{x:.{precision - 1}e}"
            if struct.unpack("f", struct.pack("f", float(text)))[0] == x:
                break
    else:
        text = repr(x)
    _, digit_tuple, exponent = Decimal(text).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    return digits, len(digits) + int(exponent)


def format_float(x: float, fmt: str = "g", bits: int = 64) -> str:
    """strconv.FormatFloat(x, fmt, -1, bits) for ``fmt`` in "g", "e" and "f"."""
    if bits == 32:  # FormatFloat rounds to a float32 first: beyond its range, that is infinite
        try:
            x = struct.unpack("f", struct.pack("f", x))[0]
        except OverflowError:
            x = math.copysign(math.inf, x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0:
        return sign + ("0e+00" if fmt == "e" else "0")
    digits, point = _digits(abs(x), bits)
    exponent = point - 1
    if fmt == "e" or (fmt == "g" and (exponent < -4 or exponent >= 6)):  # shortest %g decides at 6
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def map_key(key: Any) -> str:
    """sigs.k8s.io/yaml's JSON key for a YAML map key."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return {"+Inf": ".inf", "-Inf": "-.inf", "NaN": ".nan"}.get(t := format_float(key, "g", 32), t)
    shown = "null" if key is None else f"{key!r} (a {type(key).__name__})"
    raise NotJson(f"unsupported map key {shown}: JSON keys are strings, numbers or booleans")


def unmarshalled(value: Any) -> Any:
    """``value`` as json.Unmarshal into ``any`` would hold it: numbers as floats, keys as strings, times
    as RFC 3339 text and bytes as base64 (as Go marshals them)."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:
            raise NotJson(f"the number {value} does not fit a float64") from None
        if math.isinf(number) or math.isnan(number):
            raise NotJson(f"{value!r} is not a JSON number")
        return number
    if isinstance(value, Mapping):
        return {map_key(k): unmarshalled(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [unmarshalled(v) for v in value]
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            raise NotJson(f"the time {value.isoformat()} has no time zone")
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    raise NotJson(f"a {type(value).__name__} is not a JSON value")


def _json_number(x: float) -> str:
    """encoding/json's float64: ES6 style, 'e' only below 1e-6 or from 1e21, e-09 written e-9."""
    if x != 0 and (abs(x) < 1e-6 or abs(x) >= 1e21):
        text = format_float(x, "e")
        mantissa, exponent = text.split("e")
        return f"{mantissa}e{exponent[0]}{exponent[1:].lstrip('0') or '0'}"
    return format_float(x, "f")


_HTML_SAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def _json_string(text: str) -> str:
    quoted = json.dumps(text, ensure_ascii=False)
    return "".join(_HTML_SAFE.get(c, c) for c in quoted) if any(c in quoted for c in _HTML_SAFE) else quoted


def marshal(value: Any) -> str:
    """json.Marshal of an unmarshalled value: keys sorted, compact, HTML-safe escapes."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _json_number(float(value))
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{_json_string(k)}:{marshal(value[k])}" for k in sorted(value)) + "}"
    return "[" + ",".join(marshal(v) for v in value) + "]"


def fprint(value: Any) -> str:
    """fmt.Fprint of a scalar of an unmarshalled value (client-go JSONPath's evalToText)."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return format_float(float(value))
    return str(value)


_QUOTE_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def quote(text: str) -> str:
    """strconv.Quote (fmt's %q of a string): printable characters as they are, the rest escaped."""
    out = ['"']
    for c in text:
        code = ord(c)
        if c in '"\\':
            out.append("\\" + c)
        elif c.isprintable():
            out.append(c)
        elif c in _QUOTE_ESCAPES:
            out.append(_QUOTE_ESCAPES[c])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif 0xD800 <= code < 0xE000:  # no rune: Go has U+FFFD there
            out.append("\\ufffd")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)
