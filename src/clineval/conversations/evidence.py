"""The evidence views of the conversation metrics, beside them (:mod:`clineval.conversations.metrics`).

Per-turn gold against chosen agent (or tools), per-segment verdicts, per-fact source
support, the rating's transcript, TBFact of one agent's messages; and the case's
conversation drawn message by message (:func:`transcript`, the case input view of a
conversation). Registered when the viewer first looks a view up
(:data:`clineval.plugins.BUILTIN_EVIDENCE`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from clineval.conversations.cases import CONVERSATION_KEY, conversation_of
from clineval.evidence.html import as_list, as_text, dict_items, fmt, h, join, missing_note
from clineval.evidence.registry import EvidenceContext, case_input_view, evidence_view
from clineval.evidence.widgets import (
    chip,
    importance_chip,
    judge_line,
    ok_chip,
    reason_note,
    speaker_slot,
    turns_html,
    verdict_chip,
    verdict_of,
)
from clineval.metrics.factuality_evidence import is_tbfact, render_tbfact
from clineval.model import Case

__all__ = ["transcript"]


def _conversation(case: Case) -> Any:
    try:
        return conversation_of(case)
    except Exception:  # a stored conversation this version cannot read: no transcript
        return None


def _agent_text(case: Case, agent: str) -> str | None:
    conversation = _conversation(case)
    if conversation is None:
        return None
    wanted = agent.strip().lower()
    texts = [
        m.text for m in conversation.messages if m.role == "assistant" and m.speaker.strip().lower() == wanted
    ]
    return "\n\n".join(t for t in texts if t.strip()) or None


def _transcript(
    case: Case, prefix: str | None, annotations: Mapping[int, Markup] | None = None
) -> Markup | None:
    """The conversation of a case, message by message; ``annotations`` by user-turn number (1-based)."""
    conversation = _conversation(case)
    if conversation is None:
        if isinstance(case.input, list):
            return turns_html(case.input, prefix)
        return None
    items = []
    user_turn = 0
    speakers: dict[str, int] = {}
    for k, message in enumerate(conversation.messages):
        if message.role == "system":
            continue
        note = None
        if message.role == "user":
            user_turn += 1
            gold = []
            if message.gold_agent:
                gold.append(f"gold agent: {message.gold_agent}")
            if message.gold_tools is not None:
                gold.append("gold tools: " + (", ".join(message.gold_tools) or "none"))
            note = join(
                [
                    h("span", f"turn {user_turn}", class_="ev-turn-n"),
                    h("span", " · ".join(gold), class_="ev-gold") if gold else None,
                    annotations.get(user_turn) if annotations else None,
                ]
            )
        calls = [
            h(
                "li",
                h("code", c.name, class_="ev-call-name"),
                h("code", "(" + as_text(c.arguments) + ")", class_="ev-call-args"),
                h(
                    "details",
                    h("summary", "result"),
                    h("pre", as_text(c.result), class_="ev-pre"),
                    class_="ev-fold",
                )
                if c.result is not None
                else None,
            )
            for c in message.tool_calls
        ]
        items.append(
            h(
                "li",
                h(
                    "div",
                    h("span", message.speaker, class_="ev-speaker"),
                    h("span", message.role, class_="ev-role")
                    if message.role.lower() != message.speaker.strip().lower()
                    else None,
                    note,
                    class_="ev-msg-head",
                ),
                h("div", message.text, class_="ev-text") if message.text.strip() else None,
                h("ul", calls, class_="ev-tool-calls") if calls else None,
                class_=f"ev-msg ev-role-{message.role} ev-spk-{speaker_slot(speakers, message.speaker)}",
                id=f"{prefix}-msg{k}" if prefix else None,
            )
        )
    return h("ol", items, class_="ev-transcript")


def _names(value: Any) -> str:
    return ", ".join(map(as_text, as_list(value)))


def _render_turns(ctx: EvidenceContext) -> Markup:
    rows = dict_items(ctx.details.get("turns"))
    tools = any("called" in r for r in rows)
    annotations: dict[int, Markup] = {}
    trs = []
    for row in rows:
        turn = row.get("turn")
        if tools:
            cells = [
                h("td", ", ".join(map(as_text, as_list(row.get("gold")))) or missing_note("none")),
                h("td", ", ".join(map(as_text, as_list(row.get("called")))) or missing_note("none")),
                h(
                    "td",
                    ", ".join(map(as_text, as_list(row.get("missing")))) or "–",
                    class_="ev-diff-missing",
                ),
                h("td", ", ".join(map(as_text, as_list(row.get("extra")))) or "–", class_="ev-diff-extra"),
            ]
            note = f"called: {', '.join(map(as_text, as_list(row.get('called')))) or 'none'}"
        else:
            cells = [
                h("td", as_text(row.get("gold"))),
                h("td", as_text(row.get("selected")) or missing_note("nobody")),
                h("td", ", ".join(map(as_text, as_list(row.get("answered_by")))) or "–"),
            ]
            note = f"chosen: {as_text(row.get('selected')) or 'nobody'}"
        if isinstance(turn, int):
            annotations[turn] = join(
                [" ", h("span", note, class_="ev-chosen"), " ", ok_chip(row.get("correct"))]
            )
        trs.append(
            h(
                "tr",
                h("td", as_text(turn), class_="ev-col-n"),
                h("td", as_text(row.get("query")), class_="ev-fact"),
                *cells,
                h("td", ok_chip(row.get("correct"))),
                class_="ev-turn-row " + ("ev-v-entailed" if row.get("correct") else "ev-v-contradicted"),
            )
        )
    head = (
        ["Turn", "User request", "Gold tools", "Called", "Missing", "Extra", ""]
        if tools
        else ["Turn", "User request", "Gold agent", "Chosen agent", "Answered by", ""]
    )
    table = h(
        "div",
        h(
            "table",
            h("thead", h("tr", [h("th", c, scope="col") for c in head])),
            h("tbody", trs),
            class_="ev-grid",
        ),
        class_="ev-scroll",
    )
    transcript = _transcript(ctx.case, ctx.id("tr"), annotations)
    return join(
        [
            h("h4", "Per labelled user turn"),
            table if rows else h("p", "No labelled turn.", class_="ev-empty"),
            h(
                "details",
                h(
                    "summary",
                    "Transcript with the gold and chosen " + ("tools" if tools else "agent") + " per turn",
                ),
                transcript,
                class_="ev-fold",
                open=any(r.get("correct") is False for r in rows),
            )
            if transcript is not None
            else None,
        ]
    )


def _render_segments(ctx: EvidenceContext) -> Markup:
    rows = dict_items(ctx.details.get("segments"))
    trs = []
    for row in rows:
        if "skipped" in row:
            verdict = chip("skipped", "ev-v-na", as_text(row.get("skipped")))
        else:
            verdict = (
                chip("relevant", "ev-v-entailed")
                if row.get("relevant")
                else chip("not relevant", "ev-v-contradicted")
            )
        trs.append(
            h(
                "tr",
                h("td", as_text(row.get("segment")), class_="ev-col-n"),
                h(
                    "td",
                    as_text(row.get("request")),
                    h("div", f"({row['request_from']})", class_="ev-hint")
                    if row.get("request_from") == "earlier"
                    else None,
                ),
                h("td", as_text(row.get("response"))),
                h(
                    "td",
                    verdict,
                    h("div", as_text(row.get("explanation") or row.get("skipped")), class_="ev-why"),
                ),
            )
        )
    agent = as_text(ctx.details.get("agent"))
    return join(
        [
            h(
                "div",
                [
                    h("span", f"agent {agent}", class_="ev-meta-item") if agent else None,
                    judge_line(ctx.details),
                ],
                class_="ev-meta",
            ),
            h("h4", "Each segment of the agent against the user's request"),
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
                                for c in ("#", "Request", "Agent's response", "Verdict")
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


def _render_source_support(ctx: EvidenceContext) -> Markup:
    facts = dict_items(ctx.details.get("facts"))
    head = h(
        "thead",
        h(
            "tr",
            h("th", "#", scope="col"),
            h("th", "Fact", scope="col"),
            h("th", "Importance · category", scope="col"),
            h("th", "Best support", scope="col"),
            h("th", "Document · evidence", scope="col"),
        ),
    )

    def row(i: int, f: dict[str, Any]) -> Markup:
        cls, _ = verdict_of(f.get("label"), f.get("reason"))
        docs = [as_text(x) for x in as_list(f.get("supporting_documents"))]
        document = as_text(f.get("document"))
        also = [x for x in docs if x != document]
        return h(
            "tr",
            h("td", str(i), class_="ev-col-n"),
            h(
                "td",
                h("div", as_text(f.get("fact")), class_="ev-fact-text"),
                h("div", as_text(f.get("explanation")), class_="ev-why") if f.get("explanation") else None,
                class_="ev-fact",
            ),
            h(
                "td",
                importance_chip(f.get("importance")),
                h("div", as_text(f.get("category")) or "–", class_="ev-cat"),
            ),
            h(
                "td",
                verdict_chip(f.get("label"), f.get("reason"), grounding=True),
                h("div", reason_note(f.get("reason"), "source documents"), class_="ev-reason-line")
                if f.get("reason")
                else None,
                class_="ev-verdict",
            ),
            h(
                "td",
                h("div", h("code", document), class_="ev-doc") if document else missing_note("no document"),
                h("q", as_text(f.get("evidence")), class_="ev-quote") if f.get("evidence") else None,
                h("div", "also entailed by: " + ", ".join(also), class_="ev-hint") if also else None,
                class_="ev-evidence",
            ),
            class_=f"ev-fact-row {cls}",
        )

    def table(rows: Sequence[tuple[int, dict[str, Any]]]) -> Markup:
        return h(
            "div",
            h("table", head, h("tbody", [row(i, f) for i, f in rows]), class_="ev-grid ev-facts"),
            class_="ev-scroll",
        )

    numbered = list(enumerate(facts, start=1))
    weak = [(i, f) for i, f in numbered if f.get("label") != "entailed"]
    strong = [(i, f) for i, f in numbered if f.get("label") == "entailed"]
    d = ctx.details
    meta = [
        h("span", f"agent {d['agent']}", class_="ev-meta-item") if d.get("agent") else None,
        h("span", f"patient {d['patient_id']}", class_="ev-meta-item") if d.get("patient_id") else None,
        h("span", "documents: " + ", ".join(map(as_text, as_list(d.get("documents")))), class_="ev-meta-item")
        if d.get("documents")
        else None,
        judge_line(d),
    ]
    return join(
        [
            h("div", [m for m in meta if m], class_="ev-meta"),
            h("h4", f"Facts not fully supported by any source document ({len(weak)})"),
            table(weak)
            if weak
            else h("p", "Every fact is entailed by a source document.", class_="ev-empty"),
            h(
                "details",
                h("summary", f"Facts entailed by a source document ({len(strong)})"),
                table(strong),
                class_="ev-fold",
                open=not weak,
            )
            if strong
            else None,
        ]
    )


def _render_rating(ctx: EvidenceContext) -> Markup:
    d = ctx.details
    transcript = _transcript(ctx.case, ctx.id("tr"))
    note = d.get("note")
    return join(
        [
            h(
                "div",
                [
                    h("span", f"orchestrator {d['orchestrator']}", class_="ev-meta-item")
                    if d.get("orchestrator")
                    else None,
                    h("span", f"{d['user_turns']} user turn(s)", class_="ev-meta-item")
                    if d.get("user_turns") is not None
                    else None,
                    judge_line(d),
                ],
                class_="ev-meta",
            ),
            h("p", note, class_="ev-hint") if isinstance(note, str) else None,
            h("details", h("summary", "Transcript the judge rated"), transcript, class_="ev-fold")
            if transcript is not None
            else None,
        ]
    )


def _render_agent_tbfact_segments(ctx: EvidenceContext) -> Markup:
    rows = dict_items(ctx.details.get("per_segment"))
    trs = [
        h(
            "tr",
            h("td", as_text(r.get("segment")), class_="ev-col-n"),
            h("td", as_text(r.get("status"))),
            h("td", fmt(r.get("f1"))),
            h("td", as_text(r.get("explanation"))),
        )
        for r in rows
    ]
    return join(
        [
            h(
                "div",
                h("span", f"agent {as_text(ctx.details.get('agent'))}", class_="ev-meta-item"),
                class_="ev-meta",
            ),
            h("h4", "TBFact per segment"),
            h(
                "table",
                h("thead", h("tr", [h("th", c) for c in ("#", "Status", "F1", "Explanation")])),
                h("tbody", trs),
                class_="ev-grid",
            ),
        ]
    )


# --------------------------------------------------------------------------- registrations

HAO = "Healthcare Agent Orchestrator evaluation"


@case_input_view("conversation", case_keys=[CONVERSATION_KEY])
def transcript(case: Case, prefix: str | None) -> Markup | None:
    """The case's conversation message by message, or ``None`` when it holds none."""
    return _transcript(case, prefix) if _conversation(case) is not None else None


def _is_agent_tbfact(ctx: EvidenceContext) -> bool:
    agent = ctx.details.get("agent")
    return isinstance(agent, str) and bool(agent) and is_tbfact(ctx.details)


@evidence_view("agent_tbfact", title="TBFact", matches=_is_agent_tbfact, order=5, sub_scores_limit=0)
def agent_tbfact_view(ctx: EvidenceContext) -> Markup:
    """TBFact of one agent's messages: the response facts are marked in them; the
    patient's reference text is not stored with the case, so nothing is marked there."""
    agent = str(ctx.details["agent"])
    return render_tbfact(ctx, [("agent's messages", _agent_text(ctx.case, agent))], [])


def _is_turns(ctx: EvidenceContext) -> bool:
    turns = dict_items(ctx.details.get("turns"))
    return bool(turns) and all("turn" in t for t in turns)


def _is_segments(ctx: EvidenceContext) -> bool:
    return bool(dict_items(ctx.details.get("segments"))) and "agent" in ctx.details


def _is_source_support(ctx: EvidenceContext) -> bool:
    return bool(dict_items(ctx.details.get("facts"))) and "documents" in ctx.details


def _is_rating(ctx: EvidenceContext) -> bool:
    return "scale_min" in ctx.details and "scale_max" in ctx.details


def _is_agent_segments(ctx: EvidenceContext) -> bool:
    return "per_segment" in ctx.details and "agent" in ctx.details


evidence_view("agent_tbfact_segments", title="TBFact per segment", matches=_is_agent_segments, order=20)(
    _render_agent_tbfact_segments
)
evidence_view("turns", title=f"conversation ({HAO})", matches=_is_turns, order=100)(_render_turns)
evidence_view("segments", title=f"conversation ({HAO})", matches=_is_segments, order=110)(_render_segments)
evidence_view("source_support", title=f"source support ({HAO})", matches=_is_source_support, order=120)(
    _render_source_support
)
evidence_view("rating", title=f"conversation rating ({HAO})", matches=_is_rating, order=130)(_render_rating)
