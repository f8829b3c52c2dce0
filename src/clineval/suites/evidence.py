"""The suite evaluators' evidence view, beside them (:mod:`clineval.suites.evaluators`).

Each evaluation of a suite case (``details.evaluations``): the field, the expected and the
actual output, the value, and pass or fail with the evaluator's explanation. Registered
when the viewer first looks a view up (:data:`clineval.plugins.BUILTIN_EVIDENCE`).
"""

from __future__ import annotations

from markupsafe import Markup

from clineval.evidence.html import as_text, dict_items, fmt, h, join, missing_note
from clineval.evidence.registry import EvidenceContext, evidence_view
from clineval.evidence.widgets import chip, kv_table

__all__: list[str] = []


def _is_evaluations(ctx: EvidenceContext) -> bool:
    return bool(dict_items(ctx.details.get("evaluations")))


@evidence_view("evaluations", title="suite evaluator", matches=_is_evaluations, order=150, sub_scores_limit=0)
def _render_evaluations(ctx: EvidenceContext) -> Markup:
    rows = dict_items(ctx.details.get("evaluations"))
    trs = []
    for r in rows:
        label = as_text(r.get("label"))
        cls = {"pass": "ev-v-entailed", "fail": "ev-v-contradicted"}.get(label, "ev-v-na")
        trs.append(
            h(
                "tr",
                h("td", as_text(r.get("query")) or "–", class_="ev-fact"),
                h("td", as_text(r.get("ground_truth")) if "ground_truth" in r else missing_note("–")),
                h("td", as_text(r.get("response")) if "response" in r else missing_note("–")),
                h("td", fmt(r.get("value")) if r.get("value") is not None else as_text(r.get("status"))),
                h(
                    "td",
                    chip(label, cls) if label else None,
                    h("div", as_text(r.get("explanation") or r.get("error")), class_="ev-why")
                    if r.get("explanation") or r.get("error")
                    else None,
                ),
                class_=f"ev-eval-row {cls}",
            )
        )
    others = {k: v for k, v in ctx.details.items() if k != "evaluations"}
    return join(
        [
            kv_table(others) if others else None,
            h(
                "div",
                h(
                    "table",
                    h(
                        "thead",
                        h(
                            "tr",
                            [
                                h("th", c, scope="col")
                                for c in ("Field", "Expected", "Output", "Value", "Result")
                            ],
                        ),
                    ),
                    h("tbody", trs),
                    class_="ev-grid",
                ),
                class_="ev-scroll",
            ),
        ]
    )
