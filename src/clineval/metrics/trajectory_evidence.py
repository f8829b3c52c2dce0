"""The evidence views of the trajectory metrics, beside them (:mod:`clineval.metrics.trajectory`).

Predicted and reference calls side by side (``details.matched/missing/extra``), matching
calls aligned, differences marked; the single-tool metric's calls with the wanted tool's
positions marked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from clineval.evidence.html import as_list, as_text, dict_items, h, join
from clineval.evidence.registry import EvidenceContext, evidence_view
from clineval.evidence.widgets import call_html, chip
from clineval.model import Case, ToolCall

__all__: list[str] = []


@dataclass
class _Row:
    pred: int | None
    ref: int | None
    status: str  # match, out_of_order, args, missing, extra
    diff: set[str] = field(default_factory=set)


def _call_from(data: Any) -> ToolCall | None:
    try:
        return ToolCall.model_validate(data)
    except Exception:
        return None


def _trajectories(
    case: Case, details: Mapping[str, Any]
) -> tuple[list[ToolCall | None], list[ToolCall | None]]:
    """Predicted and reference calls: the case's, else rebuilt from the details."""
    if case.trajectory is not None and case.reference_trajectory is not None:
        return list(case.trajectory), list(case.reference_trajectory)
    pred: dict[int, ToolCall | None] = {}
    ref: dict[int, ToolCall | None] = {}
    for m in dict_items(details.get("matched")):
        i, j = m.get("predicted_index"), m.get("reference_index")
        if isinstance(j, int):
            ref[j] = _call_from({"name": m.get("name"), "arguments": m.get("arguments") or {}})
        if isinstance(i, int):
            pred[i] = _call_from({"name": m.get("name"), "arguments": m.get("predicted_arguments") or {}})
    for m in dict_items(details.get("missing")):
        if isinstance(m.get("reference_index"), int):
            ref[m["reference_index"]] = _call_from(
                {"name": m.get("name"), "arguments": m.get("arguments") or {}}
            )
    for m in dict_items(details.get("extra")):
        if isinstance(m.get("predicted_index"), int):
            pred[m["predicted_index"]] = _call_from(
                {"name": m.get("name"), "arguments": m.get("arguments") or {}}
            )
    p = [pred.get(i) for i in range(max(pred) + 1)] if pred else list(case.trajectory or [])
    r = [ref.get(j) for j in range(max(ref) + 1)] if ref else list(case.reference_trajectory or [])
    return list(p), list(r)


def _arg_diff(a: ToolCall | None, b: ToolCall | None) -> set[str]:
    if a is None or b is None:
        return set()
    keys = set(a.arguments) | set(b.arguments)
    return {
        k
        for k in keys
        if json.dumps(a.arguments.get(k), sort_keys=True) != json.dumps(b.arguments.get(k), sort_keys=True)
    }


def _align_rows(
    pred: Sequence[ToolCall | None], ref: Sequence[ToolCall | None], details: Mapping[str, Any]
) -> list[_Row]:
    pairs = [
        (m["predicted_index"], m["reference_index"])
        for m in dict_items(details.get("matched"))
        if isinstance(m.get("predicted_index"), int) and isinstance(m.get("reference_index"), int)
    ]
    pairs = [(i, j) for i, j in pairs if 0 <= i < len(pred) and 0 <= j < len(ref)]
    pairs.sort(key=lambda pair: pair[1])
    used_p = {i for i, _ in pairs}
    used_r = {j for _, j in pairs}
    missing = [j for j in range(len(ref)) if j not in used_r]
    extra = [i for i in range(len(pred)) if i not in used_p]
    by_ref: dict[int, _Row] = {}
    highest = -1
    for i, j in pairs:
        status = "match" if i > highest else "out_of_order"
        highest = max(highest, i)
        by_ref[j] = _Row(i, j, status, _arg_diff(pred[i], ref[j]))
    # a missing reference call and an extra predicted call of the same tool: different arguments
    free_extra = list(extra)
    names = [call.name if call is not None else None for call in pred]
    for j in missing:
        wanted = ref[j]
        name = wanted.name if wanted is not None else None
        hit = next((i for i in free_extra if name is not None and names[i] == name), None)
        if hit is not None:
            free_extra.remove(hit)
            by_ref[j] = _Row(hit, j, "args", _arg_diff(pred[hit], ref[j]))
        else:
            by_ref[j] = _Row(None, j, "missing")
    rows = [by_ref[j] for j in sorted(by_ref)]
    # each extra call goes after the row holding the closest earlier predicted call
    for i in sorted(free_extra):
        position = 0
        for k, row in enumerate(rows):
            if row.pred is not None and row.pred < i:
                position = k + 1
        rows.insert(position, _Row(i, None, "extra"))
    return rows


_STATUS_WORDS = {
    "match": ("ev-t-match", "match"),
    "out_of_order": ("ev-t-order", "out of order"),
    "args": ("ev-t-args", "different arguments"),
    "missing": ("ev-t-missing", "missing"),
    "extra": ("ev-t-extra", "extra"),
}


def _render_trajectory(ctx: EvidenceContext) -> Markup:
    pred, ref = _trajectories(ctx.case, ctx.details)
    rows = _align_rows(pred, ref, ctx.details)
    mode = ctx.details.get("match")
    keys = ctx.details.get("args")
    meta = [
        h("span", f"{len(pred)} predicted call(s), {len(ref)} reference call(s)", class_="ev-meta-item"),
        h(
            "span",
            "calls match on "
            + ("the tool name only" if mode == "name" else "name and arguments")
            + (f" ({', '.join(map(str, keys))})" if isinstance(keys, list) and keys else ""),
            class_="ev-meta-item",
        )
        if mode
        else None,
    ]
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    chips = [chip(f"{n} {_STATUS_WORDS[s][1]}", _STATUS_WORDS[s][0]) for s, n in counts.items()]
    if not rows:
        body = h("p", "Both trajectories are empty.", class_="ev-empty")
    else:
        trs = []
        for k, row in enumerate(rows):
            cls, words = _STATUS_WORDS[row.status]
            if row.status == "match" and row.diff:
                words = "match (name only; arguments differ)"
            trs.append(
                h(
                    "tr",
                    h(
                        "td",
                        call_html(pred[row.pred] if row.pred is not None else None, row.pred, row.diff, "p"),
                        class_="ev-call",
                    ),
                    h("td", chip(words, cls), class_="ev-t-status"),
                    h(
                        "td",
                        call_html(ref[row.ref] if row.ref is not None else None, row.ref, row.diff, "r"),
                        class_="ev-call",
                    ),
                    class_=f"ev-t-row {cls}",
                    id=ctx.id("t", k),
                )
            )
        body = h(
            "div",
            h(
                "table",
                h(
                    "thead",
                    h(
                        "tr",
                        h("th", "Predicted (the agent's calls)", scope="col"),
                        h("th", "", scope="col"),
                        h("th", "Reference", scope="col"),
                    ),
                ),
                h("tbody", trs),
                class_="ev-grid ev-traj",
            ),
            class_="ev-scroll",
        )
    return join(
        [h("div", [m for m in meta if m], class_="ev-meta"), h("div", chips, class_="ev-counts"), body]
    )


def _render_single_tool(ctx: EvidenceContext) -> Markup:
    wanted = as_text(ctx.details.get("tool_name"))
    positions = {p for p in as_list(ctx.details.get("positions")) if isinstance(p, int)}
    calls = ctx.case.trajectory or []
    items = [
        h("li", call_html(call, i, set(), "p"), class_="ev-call " + ("ev-t-match" if i in positions else ""))
        for i, call in enumerate(calls)
    ]
    return join(
        [
            h("div", h("span", "tool looked for: ", h("code", wanted)), class_="ev-meta"),
            h("ol", items, class_="ev-calls")
            if items
            else h("p", "The trajectory is empty.", class_="ev-empty"),
        ]
    )


_TRAJ_KEYS = {"matched", "missing", "extra"}


def _is_trajectory(ctx: EvidenceContext) -> bool:
    return set(ctx.details) >= _TRAJ_KEYS


def _is_single_tool(ctx: EvidenceContext) -> bool:
    return "tool_name" in ctx.details and "positions" in ctx.details


TITLE = "trajectory (Vertex AI evaluation)"
evidence_view("trajectory", title=TITLE, matches=_is_trajectory, order=80)(_render_trajectory)
evidence_view("single_tool", title=TITLE, matches=_is_single_tool, order=90)(_render_single_tool)
