"""The evidence views of the RAG metrics, beside them (:mod:`clineval.metrics.rag`).

* faithfulness (``details.statements``) and conversational faithfulness
  (``details.sentences`` with ``kind``): the answer's statements or sentences coloured by
  grounding, and the contexts with the supporting spans marked;
* context relevance (RAGAS's sentences, ASTRID's retrieval), refusal accuracy, answer
  relevance: the pieces their details carry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from clineval.evidence.html import as_number, as_text, block_text, dict_items, fmt, h, join
from clineval.evidence.registry import EvidenceContext, evidence_view
from clineval.evidence.widgets import (
    Quote,
    bar,
    chip,
    judge_line,
    mark_quotes,
    quotation,
    reason_note,
    verdict_chip,
    verdict_of,
)

__all__: list[str] = []


def _contexts_marked(
    ctx: EvidenceContext, quotes: Sequence[Quote], tag: str
) -> tuple[Markup | None, dict[str, list[str]], set[str]]:
    contexts = ctx.case.contexts
    if not contexts:
        return None, {}, set()
    blocks = []
    marks_of: dict[str, list[str]] = {}
    found: set[str] = set()
    for i, passage in enumerate(contexts, start=1):
        html, marks, hit = mark_quotes(passage, quotes, ctx.id(tag, "c", i))
        for row, ids in marks.items():
            marks_of.setdefault(row, []).extend(ids)
        found |= hit
        blocks.append(h("li", h("div", f"Context {i}", class_="ev-ctx-n"), html, class_="ev-ctx"))
    return h("ol", blocks, class_="ev-contexts"), marks_of, found


def _retrieval_line(details: Mapping[str, Any]) -> Markup | None:
    retrieval = details.get("retrieval")
    if not isinstance(retrieval, dict):
        return None
    parts = [f"{retrieval.get('passages', '?')} context passage(s)"]
    if retrieval.get("blank_passages"):
        parts.append(f"{retrieval['blank_passages']} blank")
    if retrieval.get("no_context"):
        parts.append("no usable context")
    return h("span", ", ".join(parts), class_="ev-meta-item")


def _grounding_legend(with_kinds: bool) -> Markup:
    return h(
        "div",
        chip("supported", "ev-v-entailed"),
        chip("partly supported", "ev-v-partial"),
        chip("unsupported", "ev-v-not-entailed"),
        chip("contradicted", "ev-v-contradicted"),
        chip("not informative (not judged)", "ev-v-na") if with_kinds else None,
        class_="ev-legend",
    )


def _credit_line(judged: Sequence[Mapping[str, Any]], kind_word: str) -> Markup | None:
    """How the value comes from the verdicts, where a partly supported row counts for its
    credit (so that "1 of 2 grounded" and a value of 1.0 are read together)."""
    credits = [as_number(r.get("credit")) for r in judged]
    if not judged or any(c is None for c in credits):
        return None
    words = {"entailed": "supported", "partial": "partly supported"}
    tally: dict[str, int] = {}
    for r in judged:
        key = words.get(str(r.get("label")), "unsupported")
        tally[key] = tally.get(key, 0) + 1
    if "partly supported" not in tally:
        return None
    total = sum(c for c in credits if c is not None)
    parts = ", ".join(f"{n} {k}" for k, n in tally.items())
    return h(
        "span",
        f"value = credit {fmt(total)} over {len(judged)} judged {kind_word} ({parts}; a partly "
        f"supported one counts for its credit, not as grounded) = {fmt(total / len(judged))}",
        class_="ev-meta-item ev-credit",
    )


def _render_grounding(ctx: EvidenceContext, rows: list[dict[str, Any]], key: str) -> Markup:
    """Faithfulness (statements) or conversational faithfulness (sentences with kinds)."""
    judged = [r for r in rows if "label" in r]
    quotes = [
        Quote(
            ctx.id("g", i), str(i), verdict_of(r.get("label"), r.get("reason"))[0], as_text(r.get("evidence"))
        )
        for i, r in enumerate(rows, start=1)
        if "label" in r
    ]
    contexts_html, marks_of, found = _contexts_marked(ctx, quotes, "g")
    # the answer as flowing text, each sentence / statement coloured
    spans = []
    for i, row in enumerate(rows, start=1):
        text = as_text(row.get(key))
        if "label" in row:
            cls, words = verdict_of(row.get("label"), row.get("reason"), grounding=True)
            title = words + (f": {as_text(row.get('explanation'))}" if row.get("explanation") else "")
        else:
            cls, title = "ev-v-na", f"not judged ({as_text(row.get('kind')) or 'not informative'})"
        spans.append(
            h(
                "span",
                text,
                h("sup", str(i), class_="ev-ref"),
                class_=f"ev-sent {cls}",
                title=title,
                data_ev_targets=" ".join([ctx.id("g", i), *marks_of.get(ctx.id("g", i), [])]),
            )
        )
        spans.append(Markup(" "))
    kind_word = "statements" if key == "statement" else "sentences"
    table_rows = []
    for i, row in enumerate(rows, start=1):
        row_id = ctx.id("g", i)
        if "label" in row:
            verdict = verdict_chip(row.get("label"), row.get("reason"), grounding=True)
            cls = verdict_of(row.get("label"), row.get("reason"))[0]
        else:
            verdict = chip(as_text(row.get("kind")) or "not judged", "ev-v-na")
            cls = "ev-v-na"
        credit = as_number(row.get("credit"))
        evidence = as_text(row.get("evidence"))
        where = None
        if evidence.strip() and contexts_html is not None and row_id not in found:
            where = h("span", "not found word for word in the contexts", class_="ev-hint")
        table_rows.append(
            h(
                "tr",
                h("td", str(i), class_="ev-col-n"),
                h("td", as_text(row.get(key)), class_="ev-fact"),
                h(
                    "td",
                    verdict,
                    h("span", f"credit {credit:.2f}", class_="ev-support") if credit is not None else None,
                ),
                h(
                    "td",
                    reason_note(row.get("reason"), "contexts", label=row.get("label")),
                    h("div", as_text(row.get("explanation")), class_="ev-why")
                    if row.get("explanation")
                    else None,
                ),
                h(
                    "td",
                    quotation(evidence, row.get("label"), where)
                    if evidence.strip()
                    else h("span", "–", class_="ev-missing"),
                ),
                id=row_id,
                class_=f"ev-fact-row {cls}",
                tabindex="0",
                data_ev_targets=" ".join(marks_of.get(row_id, [])) or None,
            )
        )
    table = h(
        "div",
        h(
            "table",
            h(
                "thead",
                h(
                    "tr",
                    h("th", "#", scope="col", class_="ev-col-n"),
                    h("th", kind_word[:-1].capitalize(), scope="col"),
                    h("th", "Grounding", scope="col"),
                    h("th", "Reason", scope="col"),
                    h("th", "Evidence quoted from the contexts", scope="col"),
                ),
            ),
            h("tbody", table_rows),
            class_="ev-grid ev-facts",
        ),
        class_="ev-scroll",
    )
    counts = ctx.details.get("counts")
    meta = [
        h("span", f"{len(judged)} of {len(rows)} {kind_word} judged", class_="ev-meta-item"),
        _credit_line(judged, kind_word),
        h(
            "span",
            ", ".join(f"{v} {k}" for k, v in counts.items()),
            class_="ev-meta-item",
        )
        if isinstance(counts, dict)
        else None,
        _retrieval_line(ctx.details),
        judge_line(ctx.details),
    ]
    title = (
        "The answer's statements, coloured by grounding in the contexts"
        if key == "statement"
        else ("The answer sentence by sentence, coloured by grounding in the contexts")
    )
    return join(
        [
            h("div", [m for m in meta if m], class_="ev-meta"),
            h("h4", title),
            _grounding_legend(key != "statement"),
            h("p", spans, class_="ev-answer") if rows else h("p", "No sentence.", class_="ev-empty"),
            table if rows else None,
            (
                h("h4", "Contexts, with the quoted evidence marked")
                if found
                else h("h4", "Contexts (no quotation of the judge is in them)")
                if quotes and any(q.quote.strip() for q in quotes)
                else None
            )
            if contexts_html is not None
            else None,
            contexts_html
            if found
            else h(
                "details",
                h("summary", f"Contexts ({len(ctx.case.contexts or [])})"),
                contexts_html,
                class_="ev-fold",
            )
            if contexts_html is not None
            else None,
        ]
    )


def _render_context_sentences(ctx: EvidenceContext) -> Markup:
    rows = dict_items(ctx.details.get("sentences"))
    items = []
    for row in rows:
        relevant = bool(row.get("relevant"))
        items.append(
            h(
                "li",
                chip("relevant" if relevant else "not relevant", "ev-v-entailed" if relevant else "ev-v-na"),
                " ",
                h("span", as_text(row.get("sentence"))),
                class_="ev-ctx-sentence " + ("ev-relevant" if relevant else "ev-irrelevant"),
            )
        )
    return join(
        [
            h(
                "div",
                [m for m in (_retrieval_line(ctx.details), judge_line(ctx.details)) if m],
                class_="ev-meta",
            ),
            h("h4", "Context sentences judged for relevance to the question"),
            h("ol", items, class_="ev-sentences"),
        ]
    )


def _render_context_relevance(ctx: EvidenceContext) -> Markup:
    contexts = ctx.case.contexts
    blocks = (
        h(
            "ol",
            [
                h("li", h("div", f"Context {i}", class_="ev-ctx-n"), block_text(c), class_="ev-ctx")
                for i, c in enumerate(contexts, start=1)
            ],
            class_="ev-contexts",
        )
        if contexts
        else h("p", "The case has no context.", class_="ev-empty")
    )
    return join(
        [
            h(
                "div",
                [m for m in (_retrieval_line(ctx.details), judge_line(ctx.details)) if m],
                class_="ev-meta",
            ),
            h("h4", "Question"),
            block_text(ctx.case.input_text() if ctx.case.input is not None else None),
            h(
                "details",
                h("summary", f"Contexts judged ({len(contexts or [])})"),
                blocks,
                class_="ev-fold",
                open=not contexts,
            ),
        ]
    )


def _yes_no(value: Any, yes: str, no: str) -> str:
    if value is None:
        return "unknown"
    return yes if value else no


def _render_refusal(ctx: EvidenceContext) -> Markup:
    d = ctx.details
    expectation: dict[str, Any] = d["expectation"] if isinstance(d.get("expectation"), dict) else {}
    refusal: dict[str, Any] = d["refusal"] if isinstance(d.get("refusal"), dict) else {}
    should = expectation.get("should_refuse")
    refused = refusal.get("refused")
    agree = should is not None and refused is not None and bool(should) == bool(refused)
    source_words = {
        "label": "from the case's label",
        "no_context": "no context to answer from",
        "judged": "judged from the question and context",
    }
    rows = [
        h(
            "tr",
            h("th", "Expected", scope="row"),
            h("td", h("strong", _yes_no(should, "decline", "answer"))),
            h(
                "td",
                source_words.get(str(expectation.get("source")), as_text(expectation.get("source"))),
                h("div", as_text(expectation.get("explanation")), class_="ev-why")
                if expectation.get("explanation")
                else None,
            ),
        ),
        h(
            "tr",
            h("th", "The system", scope="row"),
            h("td", h("strong", _yes_no(refused, "declined", "answered"))),
            h(
                "td",
                h("div", as_text(refusal.get("explanation")), class_="ev-why")
                if refusal.get("explanation")
                else None,
            ),
        ),
    ]
    return join(
        [
            h(
                "table",
                h("tbody", rows),
                class_="ev-kv ev-refusal " + ("ev-agree" if agree else "ev-disagree"),
            ),
            h("h4", "Response"),
            block_text(ctx.case.response),
        ]
    )


def _render_answer_relevance(ctx: EvidenceContext) -> Markup:
    d = ctx.details
    method = as_text(d.get("method"))
    parts: list[Any] = [
        h(
            "div",
            [
                h("span", f"method: {method.replace('_', ' ')}", class_="ev-meta-item") if method else None,
                h("span", "noncommittal" if d.get("noncommittal") else "committal", class_="ev-meta-item")
                if "noncommittal" in d
                else None,
                judge_line(d),
            ],
            class_="ev-meta",
        ),
        h("h4", "Question"),
        block_text(ctx.case.input_text() if ctx.case.input is not None else None),
    ]
    why = d.get("noncommittal_explanation") or d.get("judge_explanation")
    if why and as_text(why) not in (ctx.result.score.explanation or ""):
        parts.append(h("p", h("strong", "Judge: "), as_text(why), class_="ev-why"))
    questions = dict_items(d.get("questions"))
    sentences = dict_items(d.get("sentences"))
    if questions:
        parts.append(h("h4", "Questions written from the answer, with their similarity to the question"))
        parts.append(
            h(
                "table",
                h(
                    "tbody",
                    [
                        h(
                            "tr",
                            h("td", as_text(q.get("question"))),
                            h("td", bar(as_number(q.get("similarity")))),
                        )
                        for q in questions
                    ],
                ),
                class_="ev-grid",
            )
        )
    if sentences:
        parts.append(h("h4", "The answer's sentences, with their similarity to the question"))
        parts.append(
            h(
                "table",
                h(
                    "tbody",
                    [
                        h(
                            "tr",
                            h("td", as_text(s.get("sentence"))),
                            h(
                                "td",
                                chip(
                                    as_text(s.get("kind")) or "–",
                                    "ev-v-entailed" if s.get("kind") == "informative" else "ev-v-na",
                                ),
                            ),
                            h("td", bar(as_number(s.get("similarity")))),
                        )
                        for s in sentences
                    ],
                ),
                class_="ev-grid",
            )
        )
    return join(parts)


# --------------------------------------------------------------------------- registrations


def _is_faithfulness(ctx: EvidenceContext) -> bool:
    return isinstance(ctx.details.get("statements"), list)


def _is_conversational_faithfulness(ctx: EvidenceContext) -> bool:
    sentences = dict_items(ctx.details.get("sentences"))
    return bool(sentences) and "method" not in ctx.details and all("kind" in s for s in sentences)


def _is_context_sentences(ctx: EvidenceContext) -> bool:
    sentences = dict_items(ctx.details.get("sentences"))
    return bool(sentences) and all("relevant" in s for s in sentences)


def _is_answer_relevance(ctx: EvidenceContext) -> bool:
    d = ctx.details
    return "method" in d and ("sentences" in d or "questions" in d)


def _is_refusal(ctx: EvidenceContext) -> bool:
    return "expectation" in ctx.details or "refusal" in ctx.details


def _is_context_relevance(ctx: EvidenceContext) -> bool:
    name = ctx.result.metric.lower()
    return "retrieval" in ctx.details and (name.startswith("context_relevance") or "relevan" in name)


@evidence_view("faithfulness", title="faithfulness (RAGAS)", matches=_is_faithfulness, order=30)
def faithfulness_view(ctx: EvidenceContext) -> Markup:
    return _render_grounding(ctx, dict_items(ctx.details.get("statements")), "statement")


@evidence_view(
    "conversational_faithfulness",
    title="conversational faithfulness (ASTRID)",
    matches=_is_conversational_faithfulness,
    order=40,
)
def conversational_faithfulness_view(ctx: EvidenceContext) -> Markup:
    return _render_grounding(ctx, dict_items(ctx.details.get("sentences")), "sentence")


evidence_view(
    "context_relevance_ragas", title="context relevance (RAGAS)", matches=_is_context_sentences, order=50
)(_render_context_sentences)
evidence_view("answer_relevance", title="answer relevance", matches=_is_answer_relevance, order=60)(
    _render_answer_relevance
)
evidence_view("refusal", title="refusal accuracy (ASTRID)", matches=_is_refusal, order=70)(_render_refusal)
evidence_view(
    "context_relevance", title="context relevance (ASTRID)", matches=_is_context_relevance, order=160
)(_render_context_relevance)
