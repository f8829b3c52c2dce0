"""Field paths that find nothing: a misspelled ``query`` is said, not scored silently as wrong.

A field path that matches nothing in the output of any case of a run (``decison`` for
``decision``) scores every case 0 -- the output "has no field". After the run,
:func:`unmatched_paths` finds each such path with the nearest field the outputs do have
(difflib's ratio over the outputs' field paths), for a console warning, and
:func:`missing_fields` says, case by case, which of its paths found nothing (the case
table's ``why`` column). Both read the stored run only, so ``clineval show`` says it too.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from clineval.model import Case
from clineval.suites.paths import MISSING, WILDCARD, lookup, parse_path

#: Field paths gathered from each output to suggest the nearest one (enough for any real output).
_MAX_FIELDS = 2000


@dataclass(frozen=True)
class UnmatchedPath:
    """A ``query`` that matched nothing in any case's output."""

    query: str
    evaluators: tuple[str, ...]
    cases: int
    """The cases that ask it (and whose pipeline gave an output)."""
    nearest: str | None

    def message(self) -> str:
        who = ", ".join(self.evaluators)
        hint = (
            f"; nearest existing field: {self.nearest!r}"
            if self.nearest
            else "; the outputs have no field like it"
        )
        where = (
            "the output of the one case that asks it, which scored it"
            if self.cases == 1
            else f"the output of any of the {self.cases} cases that ask it, which each scored it"
        )
        return f"field path {self.query!r} ({who}) matches nothing in {where} as a wrong answer{hint}"


def _evaluations(case: Case) -> list[dict[str, Any]]:
    suite_case = case.metadata.get("suite_case")
    if not isinstance(suite_case, dict):
        return []
    items = suite_case.get("evaluations")
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def _case_metrics(case: Case) -> list[str]:
    suite_case = case.metadata.get("suite_case")
    metrics = suite_case.get("metrics") if isinstance(suite_case, dict) else None
    return [str(m) for m in metrics] if isinstance(metrics, list) else []


def _output(case: Case) -> Any:
    """The pipeline's stored output for the case, or MISSING (none ran, or it failed)."""
    if case.agent_run is not None and case.agent_run.failed:
        return MISSING
    extra = case.metadata.get("agent_output")
    if isinstance(extra, dict) and "output" in extra:
        return extra["output"]
    return MISSING


def _matches(output: Any, query: str) -> bool:
    try:
        segments = parse_path(query)
    except ValueError:
        return False
    found = lookup(output, segments)
    if found is MISSING:
        return False
    return not (WILDCARD in segments and found == [])


def field_paths(value: Any, prefix: str = "") -> Iterator[str]:
    """The field paths of a JSON-like value: ``a``, ``a.b``, ``items[*].name``."""
    if isinstance(value, dict):
        for key, child in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            yield path
            yield from field_paths(child, path)
    elif isinstance(value, list):
        seen: set[str] = set()
        for child in value:
            for path in field_paths(child, f"{prefix}[*]"):
                if path not in seen:
                    seen.add(path)
                    yield path


def missing_fields(case: Case) -> list[str]:
    """The queries of ``case`` whose path found nothing in its output (none when no output)."""
    output = _output(case)
    if output is MISSING:
        return []
    queries = dict.fromkeys(str(item.get("query", "")) for item in _evaluations(case))
    return [query for query in queries if not _matches(output, query)]


def nearest_field(query: str, fields: list[str]) -> str | None:
    close = difflib.get_close_matches(query.lstrip("."), fields, n=1, cutoff=0.6)
    return close[0] if close else None


def unmatched_paths(cases: list[Case]) -> list[UnmatchedPath]:
    """The queries that matched nothing in the output of any case that asks them."""
    asked: dict[str, list[str]] = {}
    evaluators: dict[str, dict[str, None]] = {}
    matched: set[str] = set()
    fields: dict[str, None] = {}
    for case in cases:
        output = _output(case)
        if output is MISSING:
            continue
        if len(fields) < _MAX_FIELDS:
            for path in field_paths(output):
                fields.setdefault(path)
        default = _case_metrics(case)
        for item in _evaluations(case):
            query = str(item.get("query", ""))
            asked.setdefault(query, []).append(case.id)
            names = item.get("metrics") or default
            evaluators.setdefault(query, {}).update(dict.fromkeys(str(n) for n in names))
            if query not in matched and _matches(output, query):
                matched.add(query)
    options = list(fields)
    return [
        UnmatchedPath(
            query=query,
            evaluators=tuple(evaluators.get(query, {})),
            cases=len(dict.fromkeys(ids)),
            nearest=nearest_field(query, options),
        )
        for query, ids in asked.items()
        if query not in matched and query.strip() not in ("", ".")
    ]
