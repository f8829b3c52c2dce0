"""TBFact's evidence view, beside the metric (:mod:`clineval.metrics.factuality`).

The response's facts checked against the reference (precision) and the reference's facts
checked against the response (recall, omissions), with category, importance, verdict,
reason and quoted evidence, and each quotation marked in the text it was taken from.
Drawn for any result whose details carry TBFact's facts (``details.facts`` with a
``direction``), so that a suite evaluator built on TBFact gets the same view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from clineval.evidence.html import as_list, as_number, as_text, dict_items, fmt, h, join
from clineval.evidence.registry import EvidenceContext, evidence_view
from clineval.evidence.widgets import (
    Quote,
    best_text,
    chip,
    importance_chip,
    judge_line,
    mark_quotes,
    quotation,
    reason_note,
    support_note,
    tone,
    verdict_chip,
    verdict_of,
)

__all__ = ["is_tbfact", "render_tbfact"]


def is_tbfact(details: Mapping[str, Any]) -> bool:
    """Whether details carry TBFact's facts (each with a fact and a label, some with a direction)."""
    facts = dict_items(details.get("facts"))
    return (
        bool(facts)
        and all("fact" in f and "label" in f for f in facts)
        and any("direction" in f for f in facts)
    )


def _tbfact_summary(
    ctx: EvidenceContext, precision: list[dict[str, Any]], recall: list[dict[str, Any]]
) -> Markup:
    subs = ctx.result.score.sub_scores
    d = ctx.details
    policy = d.get("policy", "default")
    suffix = "" if policy in (None, "default") else f"_{policy}"

    def metric(name: str, label: str, n: str | None) -> Markup:
        value = subs.get(f"{name}{suffix}", subs.get(name))
        return h(
            "span",
            h("span", label, class_="ev-stat-name"),
            h("span", fmt(value), class_=f"ev-stat-value {tone(value, False)}"),
            h("span", n, class_="ev-stat-n") if n else None,
            class_="ev-stat",
        )

    contradicted = sum(
        1 for f in precision if f.get("label") != "entailed" and f.get("reason") == "incorrect"
    )
    unsupported = sum(
        1 for f in precision if f.get("label") == "not_entailed" and f.get("reason") != "incorrect"
    )
    omitted = [f for f in recall if f.get("label") == "not_entailed" and f.get("reason") == "missing"]
    misstated = sum(1 for f in recall if f.get("label") == "not_entailed" and f.get("reason") != "missing")
    omitted_high = sum(1 for f in omitted if f.get("importance") == "high")
    partial_r = sum(1 for f in recall if f.get("label") == "partial")
    counts = [
        chip(
            f"{contradicted} contradicted",
            "ev-v-contradicted" if contradicted else "ev-v-none",
            "response facts the reference contradicts",
        ),
        chip(
            f"{unsupported} unsupported",
            "ev-v-not-entailed" if unsupported else "ev-v-none",
            "response facts the reference does not support",
        ),
        chip(
            f"{len(omitted)} omitted" + (f" ({omitted_high} high importance)" if omitted_high else ""),
            "ev-v-not-entailed" if omitted else "ev-v-none",
            "reference facts the response does not state",
        ),
        chip(
            f"{misstated} misstated",
            "ev-v-not-entailed",
            "reference facts the response states wrongly or ambiguously",
        )
        if misstated
        else None,
        chip(
            f"{partial_r} partly stated",
            "ev-v-partial" if partial_r else "ev-v-none",
            "reference facts the response states in part",
        ),
    ]
    meta = [
        h("span", f"{policy} policy", class_="ev-meta-item") if policy else None,
        h("span", f"reference facts: {d['reference_facts_source']}", class_="ev-meta-item")
        if d.get("reference_facts_source")
        else None,
        h("span", f"directions: {d['directions']}", class_="ev-meta-item") if d.get("directions") else None,
        h("span", f"agent {d['agent']}", class_="ev-meta-item") if d.get("agent") else None,
        judge_line(d),
    ]
    notes = [h("li", n) for n in as_list(d.get("notes")) if isinstance(n, str)]
    return h(
        "div",
        h(
            "div",
            metric("precision", "Precision", f"{len(precision)} response fact(s)"),
            metric("recall", "Recall", f"{len(recall)} reference fact(s)"),
            metric("f1", "F1", None),
            class_="ev-stats",
        ),
        h("div", counts, class_="ev-counts"),
        h("div", [m for m in meta if m], class_="ev-meta"),
        h("ul", notes, class_="ev-notes") if notes else None,
        h(
            "p",
            "Point at or click a fact to light up the words it was checked against; the small "
            "numbers in the texts are fact numbers.",
            class_="ev-hint",
        )
        if precision or recall
        else None,
        class_="ev-summary",
    )


def _fact_table(
    ctx: EvidenceContext,
    side: str,
    facts: list[dict[str, Any]],
    *,
    found: set[str],
    marks_of: Mapping[str, list[str]],
    other_name: str,
    located: bool,
) -> Markup:
    head = h(
        "tr",
        h("th", "#", scope="col", class_="ev-col-n"),
        h("th", "Fact", scope="col"),
        h("th", "Importance · category", scope="col"),
        h("th", "Verdict", scope="col"),
        h("th", f"Evidence quoted from the {other_name}", scope="col"),
    )
    rows = []
    for index, fact in enumerate(facts, start=1):
        row_id = ctx.id(side, "f", index)
        cls, _ = verdict_of(fact.get("label"), fact.get("reason"))
        evidence = as_text(fact.get("evidence"))
        explanation = as_text(fact.get("explanation"))
        support = as_number(fact.get("support"))
        if evidence.strip():
            where = None
            if located and row_id not in found:
                where = h("span", f"not found word for word in the {other_name}", class_="ev-hint")
            evidence_html = quotation(evidence, fact.get("label"), where)
        else:
            evidence_html = h("span", "no quotation", class_="ev-missing")
        rows.append(
            h(
                "tr",
                h("td", str(index), class_="ev-col-n"),
                h(
                    "td",
                    h("div", as_text(fact.get("fact")), class_="ev-fact-text"),
                    h("div", explanation, class_="ev-why") if explanation else None,
                    class_="ev-fact",
                ),
                h(
                    "td",
                    importance_chip(fact.get("importance")),
                    h("div", as_text(fact.get("category")) or "–", class_="ev-cat"),
                ),
                h(
                    "td",
                    verdict_chip(fact.get("label"), fact.get("reason")),
                    h(
                        "div",
                        reason_note(fact.get("reason"), other_name, label=fact.get("label")),
                        class_="ev-reason-line",
                    )
                    if fact.get("reason")
                    else None,
                    support_note(support, fact.get("label")),
                    class_="ev-verdict",
                ),
                h("td", evidence_html, class_="ev-evidence"),
                id=row_id,
                class_=f"ev-fact-row {cls}",
                tabindex="0",
                data_ev_targets=" ".join(marks_of.get(row_id, [])) or None,
            )
        )
    return h(
        "div",
        h("table", h("thead", head), h("tbody", rows), class_="ev-grid ev-facts"),
        class_="ev-scroll",
    )


def _matches(ctx: EvidenceContext) -> bool:
    return is_tbfact(ctx.details)


@evidence_view("tbfact", title="TBFact", matches=_matches, order=10, sub_scores_limit=0)
def tbfact_view(ctx: EvidenceContext) -> Markup:
    """TBFact against the case's own texts: the response, and the reference (else the
    curated facts as a list: the case's gold facts or a reference_facts file)."""
    case = ctx.case
    recall = [f for f in dict_items(ctx.details.get("facts")) if f.get("direction") == "recall"]
    gold_text = "\n".join(f"- {g.text}" for g in case.gold_facts) if case.gold_facts else None
    recall_text = "\n".join(f"- {as_text(f.get('fact'))}" for f in recall) if recall else None
    reference_candidates: list[tuple[str, str | None]]
    if case.reference is not None:
        reference_candidates = [("reference", case.reference)]
    elif gold_text is not None:
        reference_candidates = [("gold facts", gold_text), ("reference facts", recall_text)]
    else:
        reference_candidates = [("reference facts", recall_text)]
    return render_tbfact(ctx, [("response", case.response)], reference_candidates)


def render_tbfact(
    ctx: EvidenceContext,
    response_candidates: Sequence[tuple[str, str | None]],
    reference_candidates: Sequence[tuple[str, str | None]],
) -> Markup:
    """The two fact tables, each beside the text its quotations are marked in: the
    candidate ``(name, text)`` in which most quotations are found."""
    facts = dict_items(ctx.details.get("facts"))
    precision = [f for f in facts if f.get("direction") == "precision"]
    recall = [f for f in facts if f.get("direction") == "recall"]
    sections = [_tbfact_summary(ctx, precision, recall)]
    sides = (
        (
            "p",
            precision,
            "Response facts checked against the reference",
            "precision: is what the response says supported?",
            reference_candidates,
            "reference",
        ),
        (
            "r",
            recall,
            "Reference facts checked against the response",
            "recall: what did the response leave out or get wrong?",
            response_candidates,
            "response",
        ),
    )
    for side, side_facts, title, hint, candidates, other in sides:
        if not side_facts:
            empty = "The response states no fact" if side == "p" else "The reference states no fact"
            if ctx.details.get("directions") and ctx.details.get("directions") != "both":
                empty = "This direction was not checked (directions: " + str(ctx.details["directions"]) + ")"
            sections.append(
                h("section", h("h4", title), h("p", empty + ".", class_="ev-empty"), class_="ev-side")
            )
            continue
        quotes = [
            Quote(
                ctx.id(side, "f", i),
                str(i),
                verdict_of(f.get("label"), f.get("reason"))[0],
                as_text(f.get("evidence")),
            )
            for i, f in enumerate(side_facts, start=1)
        ]
        chosen = best_text(candidates, [q.quote for q in quotes])
        marked_html: Markup | None = None
        marks_of: dict[str, list[str]] = {}
        found: set[str] = set()
        other_name = other
        not_found = False
        if chosen is not None:
            other_name, other_text = chosen
            marked_html, marks_of, found = mark_quotes(other_text, quotes, ctx.id(side, "t"))
            if not found:
                # nothing quoted is in the stored text: the judge read another text
                not_found, marked_html = any(q.quote.strip() for q in quotes), None
        table = _fact_table(
            ctx,
            side,
            side_facts,
            found=found,
            marks_of=marks_of,
            other_name=other_name,
            located=marked_html is not None,
        )
        text_panel = (
            h(
                "div",
                h("h5", f"The {other_name}, with the quoted evidence marked"),
                marked_html,
                class_="ev-other",
            )
            if marked_html is not None
            else h(
                "p",
                f"None of the quotations is in the {other_name} stored with this case "
                "(the judge read another text); they are shown in the table."
                if not_found
                else f"The {other} the judge read is not stored with this case; "
                "the quotations are shown in the table.",
                class_="ev-hint",
            )
        )
        sections.append(
            h(
                "section",
                h("h4", title, " ", h("span", hint, class_="ev-h-hint")),
                h(
                    "label",
                    h("input", type="checkbox", class_="ev-only-problems"),
                    " show only the facts short of entailed",
                    class_="ev-filter",
                )
                if any(f.get("label") == "entailed" for f in side_facts)
                else None,
                h("div", table, text_panel, class_="ev-pair"),
                class_="ev-side",
                data_side="precision" if side == "p" else "recall",
            )
        )
    return join(sections)
