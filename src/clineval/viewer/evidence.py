"""A metric's evidence block, as the viewer's pages and the HTML report show it.

:func:`render_evidence` gives the block of one metric's result on one case: the value
(or, for an unscored or not-applicable result, the reason, never shown as a 0), the label
and explanation, and the evidence view registered for the metric's family beside the
metric (:func:`clineval.evidence.evidence_view`; chosen by
:func:`clineval.evidence.lookup.find_view`); without one, the sub-scores and the details
as a nested table. This module knows no metric family: TBFact's view lives in
:mod:`clineval.metrics.factuality_evidence`, the RAG metrics' in
:mod:`clineval.metrics.rag_evidence`, and so on (:data:`clineval.plugins.BUILTIN_EVIDENCE`).

:func:`render_case_texts` gives the case itself (input, or the view registered for its
kind of input, e.g. a conversation turn by turn; response; reference; contexts; gold
facts; trajectories). :func:`load_run_views` imports the modules of a run's own metrics
(named by import path), so that a view registered beside a user's metric is used.

Every text that came from a case, an agent or a judge is escaped (built with
:func:`markupsafe.escape`; ``Markup`` only wraps HTML assembled from escaped parts).
Ids are derived from the metric name and positions, never random, so the same input gives
the same HTML. ``EVIDENCE_CSS`` styles the ``ev-`` classes; ``EVIDENCE_JS`` (no
dependencies, safe inline in a file opened from disk) links rows to their marked
evidence on hover, focus and click. Without JS the marks and their numbers stay visible.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from markupsafe import Markup

from clineval.evidence.html import as_number, block_text, fmt, h, missing_note, slug
from clineval.evidence.lookup import find_view, load_views, load_views_of
from clineval.evidence.registry import EvidenceContext, case_input_views, drawn_case_keys
from clineval.evidence.widgets import (
    LONG_ROWS,
    call_html,
    importance_chip,
    kv_table,
    locate,
    tone,
    turns_html,
    value_html,
)
from clineval.model import Case, ResultRecord, RunRecord, ToolCall

__all__ = [
    "EVIDENCE_CSS",
    "EVIDENCE_JS",
    "load_run_views",
    "locate",
    "render_case_texts",
    "render_evidence",
]

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- the block


def _value_badge(result: ResultRecord, lower_is_better: bool) -> Markup:
    score = result.score
    status = score.status
    if status == "error":
        return h("span", "unscored", class_="ev-value ev-status-error", title="never counted as 0")
    if status == "not_applicable":
        return h("span", "not applicable", class_="ev-value ev-status-na", title="left out of means")
    value = score.value
    details = score.details if isinstance(score.details, dict) else {}
    scale_min, scale_max = as_number(details.get("scale_min")), as_number(details.get("scale_max"))
    if value is None:
        return h("span", "sub-scores only", class_="ev-value ev-tone-neutral")
    tone_value: float | None = value
    shown = fmt(value)
    if scale_min is not None and scale_max is not None and scale_max > scale_min:
        tone_value = (value - scale_min) / (scale_max - scale_min)
        shown = f"{fmt(value)} / {fmt(scale_max)}"
    return h("span", shown, class_=f"ev-value {tone(tone_value, lower_is_better)}")


def _header(result: ResultRecord, lower_is_better: bool, family: str) -> Markup:
    score = result.score
    label = score.label if score.label and score.label != "not_applicable" else None
    return h(
        "header",
        h("h3", result.metric, class_="ev-metric"),
        _value_badge(result, lower_is_better),
        h("span", label, class_="ev-label") if label else None,
        h("span", family, class_="ev-family") if family else None,
        class_="ev-head",
    )


def _status_note(result: ResultRecord) -> Markup | None:
    score = result.score
    if score.status == "error":
        return h(
            "div",
            h("strong", "Unscored: "),
            re.sub(r"^\s*unscored\s*:\s*", "", score.error or "", flags=re.IGNORECASE)
            or "no reason recorded",
            h(
                "div",
                "The metric could not score this case; this is not a 0 and is left out of means.",
                class_="ev-hint",
            ),
            class_="ev-status-box ev-status-error",
            role="note",
        )
    if score.status == "not_applicable":
        return h(
            "div",
            h("strong", "Not applicable: "),
            score.explanation or "no reason recorded",
            h(
                "div",
                "The metric does not apply to this case; this is not a 0 and is left out of means.",
                class_="ev-hint",
            ),
            class_="ev-status-box ev-status-na",
            role="note",
        )
    return None


def _explanation(result: ResultRecord) -> Markup | None:
    score = result.score
    if score.status != "scored" or not score.explanation:
        return None
    return h("p", score.explanation, class_="ev-explanation")


def _sub_scores(result: ResultRecord, *, limit: int | None = None) -> Markup | None:
    subs = result.score.sub_scores
    if not subs:
        return None
    items = list(subs.items())
    cells = [
        h(
            "div",
            h("span", k, class_="ev-sub-name"),
            h("span", fmt(v), class_="ev-sub-value"),
            class_="ev-sub",
        )
        for k, v in items
    ]
    grid = h("div", cells, class_="ev-subs")
    if limit is not None and len(items) > limit:
        return h("details", h("summary", f"Sub-scores ({len(items)})"), grid, class_="ev-fold")
    return h("div", h("h4", "Sub-scores"), grid)


def _raw_details(result: ResultRecord, *, title: str = "All details", open_: bool = False) -> Markup | None:
    details = result.score.details
    if not details:
        return None
    return h("details", h("summary", title), value_html(details), class_="ev-fold ev-raw", open=open_)


def load_run_views(record: RunRecord) -> list[str]:
    """Import the modules of the run's metrics named by import path (``my_metrics.py:name``,
    relative to the run's folder), so that the views registered beside them are found; the
    problems, one line each (a missing file leaves the generic table, never an error)."""
    config = record.config
    specs = config.get("metrics") if isinstance(config.get("metrics"), list) else []
    base = config.get("base_dir")
    if config.get("kind") == "suite" and config.get("suite_file"):
        base = str(Path(str(config["suite_file"])).parent)
    return load_views_of(specs or [], base if isinstance(base, str) else None)


def render_evidence(
    case: Case,
    result: ResultRecord,
    *,
    lower_is_better: bool = False,
    id_prefix: str | None = None,
) -> Markup:
    """The evidence block of one metric's result on one case (see the module docstring).

    ``lower_is_better`` colours the value the other way round (latency); ``id_prefix``
    keeps ids apart when one page shows the same metric twice (two runs side by side).
    Never raises: a view that fails on unexpected details falls back to the generic table.
    """
    # without a prefix the run keeps ids apart when one page shows two runs' blocks
    scope = slug(id_prefix) if id_prefix else hashlib.sha1(result.run_id.encode("utf-8")).hexdigest()[:6]
    prefix = f"ev-{scope}-{slug(result.metric)}"
    details = result.score.details if isinstance(result.score.details, dict) else {}
    ctx = EvidenceContext(case=case, result=result, prefix=prefix, details=details)
    status = result.score.status
    family, title = "generic", ""
    sub_limit: int | None = 8
    body: Markup | None = None
    failure: str | None = None
    if status != "error" or details:
        try:
            view = find_view(ctx)
            if view is not None:
                family, title, sub_limit = view.name, view.title, view.sub_scores_limit
                if status != "error" or view.when_unscored:
                    body = view.render(ctx)
        except Exception as exc:  # a view must never break the page: fall back to the table
            log.warning("evidence view for %s failed: %s", result.metric, exc, exc_info=True)
            failure = f"{type(exc).__name__}: {exc}"
            family, title, body = "generic", "", None
    parts: list[Any] = [
        _header(result, lower_is_better, title),
        _status_note(result),
        _explanation(result),
    ]
    if failure:
        parts.append(
            h(
                "p",
                f"The detailed view could not be drawn ({failure}); the details follow as stored.",
                class_="ev-hint",
            )
        )
    digest: str | None = None
    if body is not None:
        # the same view of the same things (five trajectory metrics on two empty trajectories):
        # EVIDENCE_JS shows it once, with the number of metrics it stands for
        same = f"{family}\n{status}\n{str(body).replace(prefix, '')}"
        digest = hashlib.sha1(same.encode("utf-8")).hexdigest()[:12]
        parts.append(h("div", body, class_="ev-body"))
        parts.append(_sub_scores(result, limit=sub_limit))
        parts.append(_raw_details(result, title="All details as stored"))
    else:
        parts.append(_sub_scores(result, limit=None if status == "scored" else 8))
        details_html = value_html(details) if details else None
        if details_html is not None:
            long = len(details) > LONG_ROWS or len(json.dumps(details, default=str)) > 1500
            parts.append(
                h("details", h("summary", "Details"), details_html, class_="ev-fold ev-raw", open=not long)
            )
    return h(
        "section",
        parts,
        class_=f"ev-result ev-status-{status} ev-fam-{family.replace('_', '-')}",
        id=prefix,
        data_metric=result.metric,
        data_ev_digest=digest,
    )


# --------------------------------------------------------------------------- the case


def _input_html(case: Case, prefix: str | None) -> Markup:
    """The case's input: the first registered input view that draws it (a conversation),
    else its turns, else its text."""
    load_views()
    for view in case_input_views():
        try:
            drawn = view(case, f"{prefix}-conv" if prefix else None)
        except Exception as exc:  # an input view must never break the page
            log.warning("input view failed: %s", exc, exc_info=True)
            drawn = None
        if drawn is not None:
            return h("section", h("h3", "Conversation"), drawn, class_="ev-case-part")
    if isinstance(case.input, list):  # turns of a chat: drawn as a conversation
        turns = turns_html(case.input, f"{prefix}-conv" if prefix else None)
        return h("section", h("h3", "Conversation"), turns, class_="ev-case-part")
    return h("section", h("h3", "Input"), block_text(case.input), class_="ev-case-part")


def render_case_texts(case: Case, *, id_prefix: str | None = None) -> Markup:
    """The case: input (a conversation turn by turn), response, reference, contexts, gold
    facts, trajectories, expected output and the agent run; missing and empty told apart."""
    # ids only with a prefix: a page may show the same case of two runs
    prefix = f"ev-case-{slug(id_prefix)}" if id_prefix else None
    parts: list[Any] = []
    parts.append(_input_html(case, prefix))
    if case.agent_run is not None and case.agent_run.failed:
        parts.append(
            h(
                "div",
                h("strong", "The agent failed: "),
                case.agent_run.error or "no error recorded",
                class_="ev-status-box ev-status-error",
            )
        )
    parts.append(
        h(
            "div",
            h("section", h("h3", "Response"), block_text(case.response), class_="ev-case-part"),
            h("section", h("h3", "Reference"), block_text(case.reference), class_="ev-case-part"),
            class_="ev-two",
        )
    )
    if case.contexts is not None:
        ctx_html = (
            h(
                "ol",
                [
                    h("li", h("div", f"Context {i}", class_="ev-ctx-n"), block_text(c), class_="ev-ctx")
                    for i, c in enumerate(case.contexts, start=1)
                ],
                class_="ev-contexts",
            )
            if case.contexts
            else h("span", "(no context)", class_="ev-missing")
        )
        parts.append(
            h("section", h("h3", f"Contexts ({len(case.contexts)})"), ctx_html, class_="ev-case-part")
        )
    if case.gold_facts:
        rows = [
            h(
                "tr",
                h("td", str(i), class_="ev-col-n"),
                h("td", g.text, class_="ev-fact"),
                h("td", g.category or "–"),
                h("td", importance_chip(g.importance)),
            )
            for i, g in enumerate(case.gold_facts, start=1)
        ]
        parts.append(
            h(
                "section",
                h("h3", f"Gold facts ({len(case.gold_facts)})"),
                h(
                    "table",
                    h("thead", h("tr", [h("th", c) for c in ("#", "Fact", "Category", "Importance")])),
                    h("tbody", rows),
                    class_="ev-grid ev-facts",
                ),
                class_="ev-case-part",
            )
        )
    if case.trajectory is not None or case.reference_trajectory is not None:

        def calls(seq: Sequence[ToolCall] | None) -> Markup:
            if seq is None:
                return missing_note()
            if not seq:
                return h("span", "(no call)", class_="ev-missing")
            return h(
                "ol",
                [h("li", call_html(c, i, set(), "x"), class_="ev-call") for i, c in enumerate(seq)],
                class_="ev-calls",
            )

        parts.append(
            h(
                "div",
                h("section", h("h3", "Trajectory"), calls(case.trajectory), class_="ev-case-part"),
                h(
                    "section",
                    h("h3", "Reference trajectory"),
                    calls(case.reference_trajectory),
                    class_="ev-case-part",
                ),
                class_="ev-two",
            )
        )
    if case.expected is not None:
        parts.append(h("section", h("h3", "Expected"), value_html(case.expected), class_="ev-case-part"))
    drawn = drawn_case_keys()  # shown by a registered view: not again as raw JSON
    shown_meta = {k: v for k, v in case.metadata.items() if k != "agent_output" and k not in drawn}
    extra = case.metadata.get("agent_output")
    if isinstance(extra, dict):
        rest = {k: v for k, v in extra.items() if k not in drawn}
        if rest:
            shown_meta["agent_output"] = rest
    if shown_meta:
        parts.append(
            h(
                "details",
                h("summary", f"Metadata ({len(shown_meta)})"),
                kv_table(shown_meta),
                class_="ev-fold ev-case-part",
            )
        )
    if case.agent_run is not None and case.agent_run.latency_s is not None:
        parts.append(
            h(
                "p",
                f"Agent latency {fmt(case.agent_run.latency_s, 3)} s"
                + (f", {case.agent_run.attempts} attempts" if case.agent_run.attempts > 1 else ""),
                class_="ev-hint",
            )
        )
    return h("div", parts, class_="ev-case", id=prefix)


_ASSETS = Path(__file__).parent / "templates" / "evidence"


EVIDENCE_CSS: str = (_ASSETS / "evidence.css").read_text(encoding="utf-8")


EVIDENCE_JS: str = (_ASSETS / "evidence.js").read_text(encoding="utf-8")
