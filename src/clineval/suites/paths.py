"""Field paths into a pipeline's output: ``patient_information.patient_name``.

Syntax: keys joined by dots; list items by index, ``criteria[0]`` or ``criteria.0``
(negative indices count from the end); ``criteria[*].assessment`` gives the list of that
field over all items; a key with dots or brackets in it is quoted, ``notes["a.b"]``.
A leading dot is allowed (``.decision``), and an empty path (or ``.``) is the whole
output.
"""

from __future__ import annotations

import re
from typing import Any, Final

WILDCARD: Final = "*"


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


#: What :func:`lookup` returns when the output has no such field.
MISSING: Final = _Missing()

Segment = str | int

_TOKEN = re.compile(
    r"""
    \[\s*(?P<index>-?\d+)\s*\]              # [0]
  | \[\s*(?P<star>\*)\s*\]                  # [*]
  | \[\s*(?P<q>["'])(?P<quoted>.*?)(?P=q)\s*\]   # ["key.with.dots"]
  | (?P<key>[^.\[\]]+)                      # key
  | (?P<dot>\.)
    """,
    re.VERBOSE,
)


def parse_path(text: str) -> list[Segment]:
    """The segments of a field path; ``ValueError`` says where the syntax is wrong."""
    text = text.strip()
    if text in ("", "."):
        return []
    if text.startswith("."):
        text = text[1:]
    segments: list[Segment] = []
    pos = 0
    expect_key = True
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise ValueError(f"field path {text!r}: unexpected {text[pos]!r} at position {pos + 1}")
        if match.group("dot") is not None:
            if expect_key:
                raise ValueError(f"field path {text!r}: empty key at position {pos + 1}")
            expect_key = True
        elif match.group("key") is not None:
            if not expect_key:
                raise ValueError(f"field path {text!r}: missing '.' before {match.group('key')!r}")
            key = match.group("key").strip()
            segments.append(WILDCARD if key == WILDCARD else int(key) if _is_int(key) else key)
            expect_key = False
        elif match.group("index") is not None:
            segments.append(int(match.group("index")))
            expect_key = False
        elif match.group("star") is not None:
            segments.append(WILDCARD)
            expect_key = False
        else:
            segments.append(match.group("quoted"))
            expect_key = False
        pos = match.end()
    if expect_key:
        raise ValueError(f"field path {text!r} ends with '.'")
    return segments


def _is_int(text: str) -> bool:
    return bool(re.fullmatch(r"-?\d+", text))


def lookup(value: Any, path: str | list[Segment]) -> Any:
    """The value at ``path`` in ``value`` (dicts, lists, objects), or :data:`MISSING`."""
    segments = parse_path(path) if isinstance(path, str) else path
    return _lookup(value, segments)


def _lookup(value: Any, segments: list[Segment]) -> Any:
    for i, segment in enumerate(segments):
        if segment == WILDCARD:
            if isinstance(value, dict):
                items = list(value.values())
            elif isinstance(value, list | tuple):
                items = list(value)
            else:
                return MISSING
            found = [_lookup(item, segments[i + 1 :]) for item in items]
            return [f for f in found if f is not MISSING]
        value = _step(value, segment)
        if value is MISSING:
            return MISSING
    return value


def _step(value: Any, segment: Segment) -> Any:
    if isinstance(value, dict):
        if segment in value:
            return value[segment]
        if isinstance(segment, int) and str(segment) in value:
            return value[str(segment)]
        return MISSING
    if isinstance(value, list | tuple):
        if isinstance(segment, int) and -len(value) <= segment < len(value):
            return value[segment]
        return MISSING
    if isinstance(segment, str) and not segment.startswith("_") and hasattr(value, segment):
        return getattr(value, segment)
    return MISSING
