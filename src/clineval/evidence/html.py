"""HTML building for evidence views: tags with escaped text, and value formatting.

Every text that came from a case, an agent or a judge is escaped (built with
:func:`markupsafe.escape`; ``Markup`` only wraps HTML assembled here from escaped parts).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from markupsafe import Markup, escape

__all__ = [
    "Markup",
    "as_list",
    "as_number",
    "as_text",
    "block_text",
    "dict_items",
    "fmt",
    "h",
    "join",
    "missing_note",
    "slug",
]


def _attrs(attrs: Mapping[str, Any]) -> str:
    parts = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        name = key.rstrip("_").replace("_", "-")
        if value is True:
            parts.append(f" {name}")
        else:
            parts.append(f' {name}="{escape(str(value))}"')
    return "".join(parts)


def _content(child: Any) -> str:
    if child is None or child is False:
        return ""
    if isinstance(child, Markup):
        return str(child)
    if isinstance(child, list | tuple):
        return "".join(_content(c) for c in child)
    return str(escape(str(child)))


_VOID = frozenset({"br", "hr", "input", "wbr"})


def h(tag: str, *children: Any, **attrs: Any) -> Markup:
    """``<tag attrs>children</tag>``: text children are escaped, ``Markup`` kept as is.

    Attribute names: a trailing ``_`` is dropped (``class_``) and ``_`` becomes ``-``
    (``data_facts`` -> ``data-facts``).
    """
    if tag in _VOID:
        return Markup(f"<{tag}{_attrs(attrs)}>")
    return Markup(f"<{tag}{_attrs(attrs)}>{_content(list(children))}</{tag}>")


def join(parts: Iterable[Any], sep: Any = "") -> Markup:
    sep_html = _content(sep)
    return Markup(sep_html.join(_content(p) for p in parts))


def slug(text: str) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "m"
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:6]
    return f"{base}-{digest}"


def fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if value.is_integer() and abs(value) >= 1:
            return str(int(value))
        if abs(value) >= 100:
            return f"{value:.1f}"
        return f"{value:.{digits}f}" if abs(value) >= 0.01 or value == 0 else f"{value:.3g}"
    return str(value)


def as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and math.isfinite(float(value)):
        return float(value)
    return None


def as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def dict_items(value: Any) -> list[dict[str, Any]]:
    return [v for v in as_list(value) if isinstance(v, dict)]


def missing_note(what: str = "not given") -> Markup:
    return h("span", what, class_="ev-missing")


def block_text(text: str | None, *, missing: str = "not given") -> Markup:
    if text is None:
        return missing_note(missing)
    if not text.strip():
        return h("span", "(empty)", class_="ev-missing")
    return h("div", text, class_="ev-text")
