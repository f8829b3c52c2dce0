"""Widgets that evidence views share: quotations marked in texts, verdict chips, tables of
values, tool calls, conversation turns.

A view of a metric family (:func:`clineval.evidence.evidence_view`) builds its HTML from
these and from :mod:`clineval.evidence.html`, so that every view reads alike and escapes
alike. The ``ev-`` classes are styled by the viewer's ``evidence.css``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from markupsafe import Markup, escape

from clineval.evidence.html import as_text, fmt, h, join, missing_note
from clineval.model import ToolCall

__all__ = [
    "LONG_ROWS",
    "Quote",
    "bar",
    "best_text",
    "call_html",
    "chip",
    "importance_chip",
    "judge_line",
    "kv_table",
    "locate",
    "mark_quotes",
    "ok_chip",
    "quotation",
    "reason_note",
    "records_table",
    "speaker_slot",
    "support_note",
    "tone",
    "turns_html",
    "value_html",
    "verdict_chip",
    "verdict_of",
]


_NORM_RE = re.compile(r"\s+")


def _normalised(text: str) -> tuple[str, list[int]]:
    """Lower-cased text with runs of white space as one space, and each char's origin."""
    out: list[str] = []
    origin: list[int] = []
    previous_space = False
    for i, ch in enumerate(text):
        if ch.isspace():
            if previous_space:
                continue
            out.append(" ")
            origin.append(i)
            previous_space = True
        else:
            out.append(ch.lower())
            origin.append(i)
            previous_space = False
    return "".join(out), origin


_PIECE_SPLIT = re.compile(r"\s*(?:\.\.\.|…|\|\s|\n+|\s\[\.\.\.\]\s)\s*")


def locate(quote: str, text: str) -> list[tuple[int, int]]:
    """Where ``quote`` occurs in ``text``: spans ``(start, end)``, empty when not found.

    Tried in turn: the exact quotation; the same ignoring case and runs of white space;
    and, for a quotation that joins excerpts (``...``, ``…``, ``|``, new lines), each
    excerpt of at least 12 characters on its own.
    """
    quote = quote.strip().strip("\"'“”‘’").strip()
    if len(quote) < 3 or not text:
        return []
    start = text.find(quote)
    if start >= 0:
        return [(start, start + len(quote))]
    norm_text, origin = _normalised(text)
    norm_quote = _NORM_RE.sub(" ", quote.lower()).strip()

    def find(piece: str) -> tuple[int, int] | None:
        at = norm_text.find(piece)
        if at < 0:
            return None
        end_index = at + len(piece) - 1
        return origin[at], origin[end_index] + 1

    found = find(norm_quote)
    if found:
        return [found]
    pieces = [p.strip() for p in _PIECE_SPLIT.split(quote) if len(p.strip()) >= 12]
    if len(pieces) < 1:
        return []
    spans = []
    for piece in pieces:
        hit = find(_NORM_RE.sub(" ", piece.lower()).strip().rstrip(".;,"))
        if hit:
            spans.append(hit)
    return spans


@dataclass
class Quote:
    """One item of evidence: which row quoted it, with which verdict class."""

    row_id: str
    number: str
    verdict: str
    quote: str


def mark_quotes(
    text: str, quotes: Sequence[Quote], mark_prefix: str
) -> tuple[Markup, dict[str, list[str]], set[str]]:
    """``text`` with every located quotation marked, the mark ids per row, and the rows found.

    Overlapping quotations split the text into segments; a segment covered by several
    rows lists them all (``data-ev-rows``) and takes the colour of the most severe verdict.
    Each marked segment is followed by the numbers of the rows quoting it (visible without JS).
    """
    cover: list[tuple[int, int, Quote]] = []
    for quote in quotes:
        for start, end in locate(quote.quote, text):
            if end > start:
                cover.append((start, end, quote))
    found = {q.row_id for _, _, q in cover}
    marks_of: dict[str, list[str]] = {}
    if not cover:
        return h("div", text, class_="ev-text"), marks_of, found
    bounds = sorted({0, len(text), *(s for s, _, _ in cover), *(e for _, e, _ in cover)})
    parts: list[Markup] = []
    n_mark = 0
    for a, b in pairwise(bounds):
        if a == b:
            continue
        segment = text[a:b]
        covering = [q for s, e, q in cover if s <= a and b <= e]
        if not covering:
            parts.append(Markup(escape(segment)))
            continue
        rows = list(dict.fromkeys(q.row_id for q in covering))
        verdicts = {q.verdict for q in covering}
        verdict = verdicts.pop() if len(verdicts) == 1 else "ev-v-mixed"
        mark_id = f"{mark_prefix}-m{n_mark}"
        n_mark += 1
        for row in rows:
            marks_of.setdefault(row, []).append(mark_id)
        ending = [q.number for s, e, q in cover if s <= a and e == b]
        numbers = list(dict.fromkeys(ending))
        parts.append(
            h(
                "mark",
                segment,
                h("sup", ",".join(numbers), class_="ev-ref") if numbers else None,
                class_=f"ev-mark {verdict}",
                id=mark_id,
                data_ev_targets=" ".join(rows),
                title="quoted by " + ", ".join(dict.fromkeys(q.number for q in covering)),
            )
        )
    return h("div", join(parts), class_="ev-text ev-marked"), marks_of, found


_GROUNDING_WORDS = {"entailed": "supported", "partly": "partly supported", "not entailed": "unsupported"}


def verdict_of(label: Any, reason: Any = None, *, grounding: bool = False) -> tuple[str, str]:
    """(css class, words) of an entailment verdict; ``grounding`` words it as support."""
    label = str(label or "")
    cls, words = "", ""
    if label == "entailed":
        cls, words = "ev-v-entailed", "entailed"
    elif label == "partial":
        cls, words = "ev-v-partial", "partly"
    elif label == "not_entailed" and reason == "incorrect":
        cls, words = "ev-v-contradicted", "contradicted"
    elif label == "not_entailed":
        cls, words = "ev-v-not-entailed", "not entailed"
    if cls:
        return cls, _GROUNDING_WORDS.get(words, words) if grounding else words
    return "ev-v-unknown", label.replace("_", " ") or "no verdict"


def chip(text: str, cls: str, title: str | None = None) -> Markup:
    return h("span", text, class_=f"ev-chip {cls}", title=title)


def verdict_chip(label: Any, reason: Any = None, *, grounding: bool = False) -> Markup:
    cls, words = verdict_of(label, reason, grounding=grounding)
    return chip(words, cls)


def importance_chip(importance: Any) -> Markup:
    value = str(importance or "")
    if not value:
        return missing_note("–")
    return chip(value, f"ev-imp ev-imp-{re.sub(r'[^a-z]', '', value.lower()) or 'other'}")


def reason_note(reason: Any, other: str | None = None, *, label: Any = None) -> Markup:
    """The judge's reason for a verdict short of entailed, in words naming the other text;
    for a partly supported verdict (``label`` ``partial``) the words say "part of it", so
    that "partly" never stands beside "not in the reference"."""
    if not reason:
        return Markup("")
    where = f"the {other}" if other else "the other text"
    part = "part of it " if label == "partial" else ""
    words = {
        "missing": f"{part}not in {where}",
        "incorrect": f"{part}conflicts with {where}" if part else f"conflicts with {where}",
        "ambiguous": "ambiguous",
        "other": "other reason",
    }
    key = str(reason)
    return h(
        "span",
        words.get(key, key),
        class_=f"ev-reason ev-reason-{re.sub(r'[^a-z]', '', key.lower()) or 'other'}",
        title=f"judge's reason: {key}",
    )


def tone(value: float | None, lower_is_better: bool) -> str:
    """Colour of a value on a 0-1 scale; a lower-is-better value (latency, cost) has no
    known scale, so only its 0/1 flags (failure) are coloured."""
    if value is None or not 0.0 <= value <= 1.0:
        return "ev-tone-neutral"
    if lower_is_better and value not in (0.0, 1.0):
        return "ev-tone-neutral"
    good = 1.0 - value if lower_is_better else value
    if good >= 0.8:
        return "ev-tone-good"
    if good >= 0.5:
        return "ev-tone-mid"
    return "ev-tone-bad"


LONG_ROWS = 12


def kv_table(data: Mapping[str, Any], depth: int = 0) -> Markup:
    rows = [h("tr", h("th", str(k), scope="row"), h("td", value_html(v, depth + 1))) for k, v in data.items()]
    return h("table", h("tbody", rows), class_="ev-kv")


def records_table(rows: Sequence[Mapping[str, Any]], depth: int) -> Markup:
    keys = list(dict.fromkeys(k for row in rows for k in row))
    head = h("tr", [h("th", k, scope="col") for k in keys])
    body = [h("tr", [h("td", value_html(row.get(k), depth + 1)) for k in keys]) for row in rows]
    return h("div", h("table", h("thead", head), h("tbody", body), class_="ev-grid"), class_="ev-scroll")


def value_html(value: Any, depth: int = 0) -> Markup:
    if depth > 6:
        return h("code", as_text(value)[:500])
    if value is None:
        return h("span", "null", class_="ev-missing")
    if isinstance(value, bool):
        return h("span", "true" if value else "false", class_="ev-bool")
    if isinstance(value, int | float):
        return h("span", fmt(value, 3), class_="ev-num")
    if isinstance(value, str):
        if not value:
            return h("span", "(empty)", class_="ev-missing")
        return h("span", value, class_="ev-str")
    if isinstance(value, Mapping):
        if not value:
            return h("span", "{}", class_="ev-missing")
        table = kv_table(value, depth)
        if len(value) > LONG_ROWS:
            return h("details", h("summary", f"{len(value)} entries"), table, class_="ev-fold")
        return table
    if isinstance(value, list | tuple):
        if not value:
            return h("span", "[]", class_="ev-missing")
        if all(isinstance(v, Mapping) for v in value):
            table = records_table(list(value), depth)
        elif all(isinstance(v, str | int | float | bool) or v is None for v in value) and all(
            len(as_text(v)) <= 40 for v in value
        ):
            # short scalars (tokens, names, numbers) read best inline
            inline = h(
                "span",
                ", ".join(fmt(v, 3) if isinstance(v, float) else as_text(v) for v in value),
                class_="ev-inline-list",
            )
            if len(value) > 40:
                return h("details", h("summary", f"{len(value)} items"), inline, class_="ev-fold")
            return inline
        else:
            table = h("ol", [h("li", value_html(v, depth + 1)) for v in value], class_="ev-list", start="0")
        if len(value) > LONG_ROWS:
            return h("details", h("summary", f"{len(value)} items"), table, class_="ev-fold")
        return table
    return h("span", str(value), class_="ev-str")


def judge_line(details: Mapping[str, Any]) -> Markup | None:
    judge = details.get("judge")
    if not judge:
        return None
    kind = details.get("judge_kind")
    return h("span", f"judge {judge}" + (f" ({kind})" if kind else ""), class_="ev-meta-item")


def bar(value: float | None) -> Markup:
    if value is None:
        return h("span", "–", class_="ev-missing")
    pct = max(0.0, min(1.0, value)) * 100
    return h(
        "span",
        h("span", class_="ev-bar-fill", style=f"width:{pct:.0f}%"),
        h("span", fmt(value), class_="ev-bar-text"),
        class_="ev-bar",
    )


def call_html(call: ToolCall | None, index: int | None, diff: set[str], side: str) -> Markup:
    if call is None or index is None:
        return h("span", "—", class_="ev-missing")
    args = [
        h(
            "li",
            h("span", k, class_="ev-arg-key"),
            ": ",
            h("code", as_text(v)),
            class_="ev-arg ev-arg-diff" if k in diff else "ev-arg",
            title="differs from the other side" if k in diff else None,
        )
        for k, v in call.arguments.items()
    ]
    output = (
        h(
            "details",
            h("summary", "output"),
            h("pre", as_text(call.output), class_="ev-pre"),
            class_="ev-fold",
        )
        if call.output is not None
        else None
    )
    return join(
        [
            h("span", f"{index + 1}.", class_="ev-call-n"),
            h("code", call.name, class_="ev-call-name"),
            h("ul", args, class_="ev-args") if args else h("span", " (no arguments)", class_="ev-missing"),
            output,
        ]
    )


def speaker_slot(speakers: dict[str, int], speaker: str) -> int:
    """A colour slot per speaker, in order of first appearance (deterministic)."""
    return speakers.setdefault(speaker.strip().lower(), len(speakers) % 6)


def turns_html(turns: Sequence[Any], prefix: str | None) -> Markup:
    items = []
    speakers: dict[str, int] = {}
    for k, turn in enumerate(turns):
        slot = speaker_slot(speakers, turn.name or turn.role)
        calls = [
            h(
                "li",
                h("code", c.name, class_="ev-call-name"),
                h("code", "(" + as_text(c.arguments) + ")", class_="ev-call-args"),
            )
            for c in turn.tool_calls
        ]
        items.append(
            h(
                "li",
                h(
                    "div",
                    h("span", turn.name or turn.role, class_="ev-speaker"),
                    h("span", turn.role, class_="ev-role") if turn.name else None,
                    class_="ev-msg-head",
                ),
                h("div", turn.content, class_="ev-text") if turn.content.strip() else None,
                h("ul", calls, class_="ev-tool-calls") if calls else None,
                class_=f"ev-msg ev-role-{turn.role} ev-spk-{slot}",
                id=f"{prefix}-msg{k}" if prefix else None,
            )
        )
    return h("ol", items, class_="ev-transcript")


def ok_chip(correct: Any) -> Markup:
    if correct is True:
        return chip("correct", "ev-v-entailed")
    if correct is False:
        return chip("wrong", "ev-v-contradicted")
    return chip("–", "ev-v-na")


def best_text(candidates: Sequence[tuple[str, str | None]], quotes: Sequence[str]) -> tuple[str, str] | None:
    """The candidate (name, text) in which the most quotations are found (ties: first)."""
    best: tuple[int, str, str] | None = None
    for name, text in candidates:
        if not text or not text.strip():
            continue
        hits = sum(bool(locate(q, text)) for q in quotes if q)
        if best is None or hits > best[0]:
            best = (hits, name, text)
    return None if best is None else (best[1], best[2])


def quotation(evidence: str, label: Any, where: Markup | None = None) -> Markup:
    """The judge's quotation for a verdict: for a verdict short of partly supported it is the
    nearest text found, said to be so ("closest, does not support"), never shown as support."""
    if label in ("entailed", "partial"):
        return join([h("q", evidence, class_="ev-quote"), where])
    return join(
        [
            h("span", "closest, does not support", class_="ev-closest-label"),
            " ",
            h("q", evidence, class_="ev-quote ev-quote-closest"),
            where,
        ]
    )


def support_note(support: float | None, label: Any) -> Markup | None:
    """The judge's graded support, shown where it agrees with the verdict (a partly
    supported fact at support 0.97 would say two things): else only as a tooltip."""
    if support is None:
        return None
    agrees = (label == "entailed" and support >= 0.5) or (label == "not_entailed" and support < 0.5)
    if agrees:
        return h("span", f"support {support:.2f}", class_="ev-support")
    return h("span", "", class_="ev-support ev-support-hidden", title=f"judge's graded support {support:.2f}")
