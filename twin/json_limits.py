"""The one JSON reader for request bodies and JSON typed into the console: bounded, never a 500.

Python's json module recurses once per nesting level, so a body nested a thousand levels deep raises
RecursionError (a 500) instead of a refusal. Every JSON a caller sends is read here: the nesting is measured
first, without parsing, and refused past JSON_DEPTH_MAX, as is anything json.loads cannot read (a number of
more than 4,300 digits included) and any number that is not finite: json.loads reads NaN, Infinity and
-Infinity (which JSON does not have) and 1e999 (which overflows to inf) into floats that PostgreSQL's json
refuses (a DataError, a 500) and that json.dumps writes back as invalid JSON. The /v1/memory/* routes read
through JSONParser (REST framework's parser, set in settings), /v1/mcp, /oauth/register and the playground
call loads().
"""

import json
import math
import re

from rest_framework import exceptions, parsers

from memory.limits import JSON_DEPTH_MAX, PLAIN_KEY, UNNAMED_KEY

# A JSON string, escapes included: what lies inside one is never nesting.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKETS = re.compile(rb"[^\[\]{}]+")
# A lone surrogate escape ("\ud800" not followed by its low half, or a low half alone): json.loads reads it
# into a str that no UTF-8 encoder, log or database accepts.
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
_PLAIN_KEY = re.compile(PLAIN_KEY)
NOT_FINITE = "The JSON holds a number that is not finite (NaN, Infinity or one too large for a float)."


class InvalidJson(ValueError):
    """The body is not JSON this service reads; `message` says why, without quoting it."""


def depth(data: bytes) -> int:
    """How deeply `data` nests arrays and objects, counted outside strings (linear, C-speed regexes)."""
    deepest = level = 0
    for bracket in _BRACKETS.sub(b"", _STRING.sub(b"", data)):
        level += 1 if bracket in b"[{" else -1
        deepest = max(deepest, level)
    return deepest


def _no_constant(name: str):
    """json.loads' parse_constant: NaN, Infinity and -Infinity are not JSON, whatever Python reads."""
    raise InvalidJson(NOT_FINITE)


def _finite_float(text: str) -> float:
    """json.loads' parse_float: a number too large for a float (1e999) is refused, not read as inf."""
    number = float(text)
    if not math.isfinite(number):
        raise InvalidJson(NOT_FINITE)
    return number


def loads(data: bytes | str):
    """The JSON value of `data`, or InvalidJson: not UTF-8, not JSON, a number that is not finite, or nested
    deeper than JSON_DEPTH_MAX."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if depth(raw) > JSON_DEPTH_MAX:
        raise InvalidJson(f"The JSON nests deeper than {JSON_DEPTH_MAX} levels of arrays and objects.")
    try:
        return json.loads(raw, parse_constant=_no_constant, parse_float=_finite_float)
    except InvalidJson:
        raise
    except (ValueError, UnicodeDecodeError, RecursionError) as bad:
        raise InvalidJson(f"Not JSON: {bad.__class__.__name__}.") from None


def lone_surrogate_at(value, path: str = "") -> str | None:
    """The path of the first string (or key) in a parsed JSON value that holds a lone surrogate, else None."""
    if isinstance(value, str):
        return path or "body" if _LONE_SURROGATE.search(value) else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, sub in items:
        name = key if isinstance(key, int) or _PLAIN_KEY.match(key) else UNNAMED_KEY  # never echoed
        where = f"{path}[{name}]" if isinstance(key, int) else (f"{path}.{name}" if path else str(name))
        if isinstance(key, str) and _LONE_SURROGATE.search(key):
            return path or "body"
        found = lone_surrogate_at(sub, where)
        if found:
            return found
    return None


class InvalidJsonBody(exceptions.ParseError):
    """A /v1/memory/* body that is not JSON this service reads: 400 invalid_json, naming the body and the bound.

    A REST framework error, not accounts' ApiError: this module is loaded by REST framework's settings while
    accounts.errors (which imports REST framework) may still be loading.
    """

    default_code = "invalid_json"
    field, bound = "body", JSON_DEPTH_MAX


class JSONParser(parsers.JSONParser):
    """REST framework's JSON parser, reading through loads()."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return loads(stream.read() if stream is not None else b"")
        except InvalidJson as bad:
            raise InvalidJsonBody(str(bad)) from None
