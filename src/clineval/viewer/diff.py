"""A case of two runs compared field by field, with a word-level diff of A and B.

The compare-case page lines up what run A and run B produced for one case: a suite
case's output field by field (a list of criteria by each criterion's name, so a criterion
missing from one side leaves a gap on that side instead of shifting every row below it),
any other case's input, response and reference. Each row marks the words of A that B
dropped (``<del>``) and the words B added (``<ins>``), computed with :mod:`difflib` on
words and the spaces between them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from markupsafe import Markup, escape

#: Above this many words on a side, a row is shown without the word diff (difflib is quadratic).
MAX_DIFF_WORDS = 4000
#: Keys that name an item of a list (``criteria[Diagnosis]``), tried in this order.
ITEM_KEYS = ("criterion", "name", "id", "key", "field", "title", "code")
_MISSING = object()
_WORDS = re.compile(r"\s+|[^\s]+")


@dataclass(frozen=True)
class DiffRow:
    """One field of the case in A and in B."""

    field: str
    expected: str | None
    """The suite's ground truth at this field, when it checks it."""
    a: Markup
    b: Markup
    same: bool
    in_a: bool
    in_b: bool


def as_text(value: Any, *, indent: int = 1) -> str:
    """A value as the text a reader compares: strings as they are, numbers without a
    needless ``.0``, ``–`` for none, anything else as indented JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(int(value)) if float(value).is_integer() else repr(value)
    return json.dumps(value, ensure_ascii=False, indent=indent, default=str)


def _item_name(item: Any) -> str | None:
    if not isinstance(item, Mapping):
        return None
    for key in ITEM_KEYS:
        value = item.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
            return str(value)
    return None


def outline(value: Any) -> Any:
    """A list of named items as their names (``Diagnosis; Age; Prior therapy``): its fields
    are rows of their own (:func:`keyed_fields`); any other value as it is."""
    if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
        names = [_item_name(v) for v in value]
        if all(names):
            return "; ".join(str(n) for n in names)
    return value


def keyed_fields(value: Any, path: str = "", limit: int = 400) -> dict[str, Any]:
    """``{"a": {"b": 1}, "criteria": [{"criterion": "Age", "met": true}]}`` →
    ``{"a.b": 1, "criteria[Age].met": True}``: list items are named by their own name
    (:data:`ITEM_KEYS`; a repeated name as ``Finding #2``) when every item has one, else by
    position."""
    out: dict[str, Any] = {}

    def walk(item: Any, where: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(item, Mapping) and item:
            for key, sub in item.items():
                walk(sub, f"{where}.{key}" if where else str(key))
        elif isinstance(item, list) and item and any(isinstance(v, Mapping | list) for v in item):
            names = [_item_name(v) for v in item]
            named = all(names)
            seen: dict[str, int] = {}
            for i, sub in enumerate(item):
                if named:  # the name is in the path, not a row of its own; a repeated name gets #2, #3
                    name = str(names[i])
                    seen[name] = seen.get(name, 0) + 1
                    label = name if seen[name] == 1 else f"{name} #{seen[name]}"
                    key = next(k for k in ITEM_KEYS if _item_name({k: sub.get(k)}) == name)
                    walk({k: v for k, v in sub.items() if k != key}, f"{where}[{label}]")
                else:
                    walk(sub, f"{where}[{i}]")
        else:
            out[where or "(output)"] = item

    walk(value, path)
    return out


def aligned_keys(a: list[str], b: list[str]) -> list[str]:
    """The union of two orders of keys: A's order, each key only in B placed after the key
    it follows in B."""
    merged = list(a)
    seen = set(a)
    in_b = set(b)
    for i, key in enumerate(b):
        if key in seen:
            continue
        before = b[i - 1] if i else None  # placed already: B is walked in order
        at = merged.index(before) + 1 if before is not None else 0
        while at < len(merged) and merged[at] not in in_b:
            at += 1  # after the A-only keys at the same place
        merged.insert(at, key)
        seen.add(key)
    return merged


def word_diff(a: str, b: str) -> tuple[Markup, Markup]:
    """A and B as HTML, the words of A that B lacks in ``<del>``, those B added in ``<ins>``."""
    if a == b:
        return Markup(escape(a)), Markup(escape(b))
    wa, wb = _WORDS.findall(a), _WORDS.findall(b)
    if len(wa) > MAX_DIFF_WORDS or len(wb) > MAX_DIFF_WORDS:
        return Markup(escape(a)), Markup(escape(b))
    left: list[str] = []
    right: list[str] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes():
        old, new = "".join(wa[i1:i2]), "".join(wb[j1:j2])
        if op == "equal":
            left.append(str(escape(old)))
            right.append(str(escape(new)))
            continue
        if old:
            left.append(f'<del class="diff-del">{escape(old)}</del>')
        if new:
            right.append(f'<ins class="diff-ins">{escape(new)}</ins>')
    return Markup("".join(left)), Markup("".join(right))


def diff_rows(
    a: Mapping[str, Any], b: Mapping[str, Any], expected: Mapping[str, Any] | None = None
) -> list[DiffRow]:
    """One row per field of A or B, aligned (:func:`aligned_keys`); the checked fields
    (those in ``expected``) first, in ``expected``'s order."""
    expected = expected or {}
    keys = aligned_keys(list(a), list(b))
    checked = [k for k in expected if k in a or k in b] + [k for k in expected if k not in a and k not in b]
    order = checked + [k for k in keys if k not in expected]
    rows: list[DiffRow] = []
    for key in order:
        va, vb = a.get(key, _MISSING), b.get(key, _MISSING)
        ta = "" if va is _MISSING else as_text(va)
        tb = "" if vb is _MISSING else as_text(vb)
        if va is _MISSING or vb is _MISSING:
            ha, hb = Markup(escape(ta)), Markup(escape(tb))
        else:
            ha, hb = word_diff(ta, tb)
        rows.append(
            DiffRow(
                field=key,
                expected=as_text(expected[key]) if key in expected else None,
                a=ha,
                b=hb,
                same=va is not _MISSING and vb is not _MISSING and ta == tb,
                in_a=va is not _MISSING,
                in_b=vb is not _MISSING,
            )
        )
    return rows


__all__ = ["DiffRow", "aligned_keys", "diff_rows", "keyed_fields", "outline", "word_diff"]
