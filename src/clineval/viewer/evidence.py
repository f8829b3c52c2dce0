"""Per-metric evidence as HTML fragments: what a reviewer reads to see why a case scored low.

:func:`render_evidence` gives the evidence block of one metric's result on one case: the
value (or, for an unscored or not-applicable result, the reason, never shown as a 0), the
label and explanation, and a view chosen from the shape of the score's details, so that a
suite evaluator built on TBFact or on faithfulness gets the same view as the metric itself:

* TBFact (``details.facts`` with a ``direction``): the response's facts checked against the
  reference (precision) and the reference's facts checked against the response (recall,
  omissions), with category, importance, verdict, reason and quoted evidence, and each
  quotation marked in the text it was taken from.
* faithfulness (``details.statements``) and conversational faithfulness
  (``details.sentences`` with ``kind``): the answer's statements or sentences coloured by
  grounding, and the contexts with the supporting spans marked.
* context relevance, refusal accuracy, answer relevance: the pieces their details carry.
* trajectory metrics (``details.matched/missing/extra``): predicted and reference calls
  side by side, matching calls aligned, differences marked.
* conversation metrics: per-turn gold against chosen agent (or tools), per-segment
  verdicts, per-fact source support, with the transcript.
* radiology-benchmark episodes (the case's ``agent_output.episode``): the plan, every
  step with the tool it used, the memory bank as it grew, the answer against the reference.
* anything else: value, label, explanation, sub-scores and details as a nested table.

:func:`render_case_texts` gives the case itself (input, or the conversation turn by turn;
response; reference; contexts; gold facts; trajectories).

Every text that came from a case, an agent or a judge is escaped (built with
:func:`markupsafe.escape`; ``Markup`` only wraps HTML assembled here from escaped parts).
Ids are derived from the metric name and positions, never random, so the same input gives
the same HTML. ``EVIDENCE_CSS`` styles the ``ev-`` classes; ``EVIDENCE_JS`` (no
dependencies, safe inline in a file opened from disk) links fact rows to their marked
evidence on hover, focus and click. Without JS the marks and their fact numbers stay visible.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from markupsafe import Markup, escape

from clineval.model import Case, ResultRecord, ToolCall

__all__ = ["EVIDENCE_CSS", "EVIDENCE_JS", "locate", "render_case_texts", "render_evidence"]

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- HTML building


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


def _slug(text: str) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "m"
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:6]
    return f"{base}-{digest}"


def _fmt(value: Any, digits: int = 2) -> str:
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


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and math.isfinite(float(value)):
        return float(value)
    return None


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in _list(value) if isinstance(v, dict)]


def _missing(what: str = "not given") -> Markup:
    return h("span", what, class_="ev-missing")


def _block_text(text: str | None, *, missing: str = "not given") -> Markup:
    if text is None:
        return _missing(missing)
    if not text.strip():
        return h("span", "(empty)", class_="ev-missing")
    return h("div", text, class_="ev-text")


# --------------------------------------------------------------------------- evidence spans


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
class _Quote:
    """One item of evidence: which row quoted it, with which verdict class."""

    row_id: str
    number: str
    verdict: str
    quote: str


def _marked(
    text: str, quotes: Sequence[_Quote], mark_prefix: str
) -> tuple[Markup, dict[str, list[str]], set[str]]:
    """``text`` with every located quotation marked, the mark ids per row, and the rows found.

    Overlapping quotations split the text into segments; a segment covered by several
    rows lists them all (``data-ev-rows``) and takes the colour of the most severe verdict.
    Each marked segment is followed by the numbers of the rows quoting it (visible without JS).
    """
    cover: list[tuple[int, int, _Quote]] = []
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


# --------------------------------------------------------------------------- verdicts


_GROUNDING_WORDS = {"entailed": "supported", "partly": "partly supported", "not entailed": "unsupported"}


def _verdict(label: Any, reason: Any = None, *, grounding: bool = False) -> tuple[str, str]:
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


def _chip(text: str, cls: str, title: str | None = None) -> Markup:
    return h("span", text, class_=f"ev-chip {cls}", title=title)


def _verdict_chip(label: Any, reason: Any = None, *, grounding: bool = False) -> Markup:
    cls, words = _verdict(label, reason, grounding=grounding)
    return _chip(words, cls)


def _importance_chip(importance: Any) -> Markup:
    value = str(importance or "")
    if not value:
        return _missing("–")
    return _chip(value, f"ev-imp ev-imp-{re.sub(r'[^a-z]', '', value.lower()) or 'other'}")


def _reason(reason: Any, other: str | None = None) -> Markup:
    """The judge's reason for a verdict short of entailed, in words naming the other text."""
    if not reason:
        return Markup("")
    where = f"the {other}" if other else "the other text"
    words = {
        "missing": f"not in {where}",
        "incorrect": f"conflicts with {where}",
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


# --------------------------------------------------------------------------- score header


def _tone(value: float | None, lower_is_better: bool) -> str:
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


def _value_badge(result: ResultRecord, lower_is_better: bool) -> Markup:
    score = result.score
    status = score.status
    if status == "error":
        return h("span", "unscored", class_="ev-value ev-status-error", title="never counted as 0")
    if status == "not_applicable":
        return h("span", "not applicable", class_="ev-value ev-status-na", title="left out of means")
    value = score.value
    details = score.details if isinstance(score.details, dict) else {}
    scale_min, scale_max = _num(details.get("scale_min")), _num(details.get("scale_max"))
    if value is None:
        return h("span", "sub-scores only", class_="ev-value ev-tone-neutral")
    tone_value: float | None = value
    shown = _fmt(value)
    if scale_min is not None and scale_max is not None and scale_max > scale_min:
        tone_value = (value - scale_min) / (scale_max - scale_min)
        shown = f"{_fmt(value)} / {_fmt(scale_max)}"
    return h("span", shown, class_=f"ev-value {_tone(tone_value, lower_is_better)}")


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


# --------------------------------------------------------------------------- generic tables


_LONG_ROWS = 12


def _kv_table(data: Mapping[str, Any], depth: int = 0) -> Markup:
    rows = [
        h("tr", h("th", str(k), scope="row"), h("td", _value_html(v, depth + 1))) for k, v in data.items()
    ]
    return h("table", h("tbody", rows), class_="ev-kv")


def _records_table(rows: Sequence[Mapping[str, Any]], depth: int) -> Markup:
    keys = list(dict.fromkeys(k for row in rows for k in row))
    head = h("tr", [h("th", k, scope="col") for k in keys])
    body = [h("tr", [h("td", _value_html(row.get(k), depth + 1)) for k in keys]) for row in rows]
    return h("div", h("table", h("thead", head), h("tbody", body), class_="ev-grid"), class_="ev-scroll")


def _value_html(value: Any, depth: int = 0) -> Markup:
    if depth > 6:
        return h("code", _text(value)[:500])
    if value is None:
        return h("span", "null", class_="ev-missing")
    if isinstance(value, bool):
        return h("span", "true" if value else "false", class_="ev-bool")
    if isinstance(value, int | float):
        return h("span", _fmt(value, 3), class_="ev-num")
    if isinstance(value, str):
        if not value:
            return h("span", "(empty)", class_="ev-missing")
        return h("span", value, class_="ev-str")
    if isinstance(value, Mapping):
        if not value:
            return h("span", "{}", class_="ev-missing")
        table = _kv_table(value, depth)
        if len(value) > _LONG_ROWS:
            return h("details", h("summary", f"{len(value)} entries"), table, class_="ev-fold")
        return table
    if isinstance(value, list | tuple):
        if not value:
            return h("span", "[]", class_="ev-missing")
        if all(isinstance(v, Mapping) for v in value):
            table = _records_table(list(value), depth)
        elif all(isinstance(v, str | int | float | bool) or v is None for v in value) and all(
            len(_text(v)) <= 40 for v in value
        ):
            # short scalars (tokens, names, numbers) read best inline
            inline = h(
                "span",
                ", ".join(_fmt(v, 3) if isinstance(v, float) else _text(v) for v in value),
                class_="ev-inline-list",
            )
            if len(value) > 40:
                return h("details", h("summary", f"{len(value)} items"), inline, class_="ev-fold")
            return inline
        else:
            table = h("ol", [h("li", _value_html(v, depth + 1)) for v in value], class_="ev-list", start="0")
        if len(value) > _LONG_ROWS:
            return h("details", h("summary", f"{len(value)} items"), table, class_="ev-fold")
        return table
    return h("span", str(value), class_="ev-str")


def _sub_scores(result: ResultRecord, *, limit: int | None = None) -> Markup | None:
    subs = result.score.sub_scores
    if not subs:
        return None
    items = list(subs.items())
    cells = [
        h(
            "div",
            h("span", k, class_="ev-sub-name"),
            h("span", _fmt(v), class_="ev-sub-value"),
            class_="ev-sub",
        )
        for k, v in items
    ]
    grid = h("div", cells, class_="ev-subs")
    if limit is not None and len(items) > limit:
        return h("details", h("summary", f"Sub-scores ({len(items)})"), grid, class_="ev-fold")
    return h("div", h("h4", "Sub-scores"), grid)


_JUDGE_KEYS = ("judge", "judge_kind", "judge_settings")


def _raw_details(result: ResultRecord, *, title: str = "All details", open_: bool = False) -> Markup | None:
    details = result.score.details
    if not details:
        return None
    return h("details", h("summary", title), _value_html(details), class_="ev-fold ev-raw", open=open_)


def _judge_line(details: Mapping[str, Any]) -> Markup | None:
    judge = details.get("judge")
    if not judge:
        return None
    kind = details.get("judge_kind")
    return h("span", f"judge {judge}" + (f" ({kind})" if kind else ""), class_="ev-meta-item")


# --------------------------------------------------------------------------- context


@dataclass
class _Ctx:
    case: Case
    result: ResultRecord
    prefix: str
    details: dict[str, Any] = field(default_factory=dict)

    def id(self, *parts: Any) -> str:
        return "-".join([self.prefix, *(str(p) for p in parts)])


# --------------------------------------------------------------------------- TBFact


def _is_tbfact(details: Mapping[str, Any]) -> bool:
    facts = _dicts(details.get("facts"))
    return (
        bool(facts)
        and all("fact" in f and "label" in f for f in facts)
        and any("direction" in f for f in facts)
    )


def _agent_text(case: Case, agent: str) -> str | None:
    try:
        from clineval.conversations.cases import conversation_of

        conversation = conversation_of(case)
    except Exception:
        return None
    if conversation is None:
        return None
    wanted = agent.strip().lower()
    texts = [
        m.text for m in conversation.messages if m.role == "assistant" and m.speaker.strip().lower() == wanted
    ]
    return "\n\n".join(t for t in texts if t.strip()) or None


def _best_text(candidates: Sequence[tuple[str, str | None]], quotes: Sequence[str]) -> tuple[str, str] | None:
    """The candidate (name, text) in which the most quotations are found (ties: first)."""
    best: tuple[int, str, str] | None = None
    for name, text in candidates:
        if not text or not text.strip():
            continue
        hits = sum(bool(locate(q, text)) for q in quotes if q)
        if best is None or hits > best[0]:
            best = (hits, name, text)
    return None if best is None else (best[1], best[2])


def _tbfact_summary(ctx: _Ctx, precision: list[dict[str, Any]], recall: list[dict[str, Any]]) -> Markup:
    subs = ctx.result.score.sub_scores
    d = ctx.details
    policy = d.get("policy", "default")
    suffix = "" if policy in (None, "default") else f"_{policy}"

    def metric(name: str, label: str, n: str | None) -> Markup:
        value = subs.get(f"{name}{suffix}", subs.get(name))
        return h(
            "span",
            h("span", label, class_="ev-stat-name"),
            h("span", _fmt(value), class_=f"ev-stat-value {_tone(value, False)}"),
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
        _chip(
            f"{contradicted} contradicted",
            "ev-v-contradicted" if contradicted else "ev-v-none",
            "response facts the reference contradicts",
        ),
        _chip(
            f"{unsupported} unsupported",
            "ev-v-not-entailed" if unsupported else "ev-v-none",
            "response facts the reference does not support",
        ),
        _chip(
            f"{len(omitted)} omitted" + (f" ({omitted_high} high importance)" if omitted_high else ""),
            "ev-v-not-entailed" if omitted else "ev-v-none",
            "reference facts the response does not state",
        ),
        _chip(
            f"{misstated} misstated",
            "ev-v-not-entailed",
            "reference facts the response states wrongly or ambiguously",
        )
        if misstated
        else None,
        _chip(
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
        _judge_line(d),
    ]
    notes = [h("li", n) for n in _list(d.get("notes")) if isinstance(n, str)]
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
    ctx: _Ctx,
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
        cls, _ = _verdict(fact.get("label"), fact.get("reason"))
        evidence = _text(fact.get("evidence"))
        explanation = _text(fact.get("explanation"))
        support = _num(fact.get("support"))
        if evidence.strip():
            where = None
            if located and row_id not in found:
                where = h("span", f"not found word for word in the {other_name}", class_="ev-hint")
            evidence_html = join([h("q", evidence, class_="ev-quote"), where])
        else:
            evidence_html = h("span", "no quotation", class_="ev-missing")
        rows.append(
            h(
                "tr",
                h("td", str(index), class_="ev-col-n"),
                h(
                    "td",
                    h("div", _text(fact.get("fact")), class_="ev-fact-text"),
                    h("div", explanation, class_="ev-why") if explanation else None,
                    class_="ev-fact",
                ),
                h(
                    "td",
                    _importance_chip(fact.get("importance")),
                    h("div", _text(fact.get("category")) or "–", class_="ev-cat"),
                ),
                h(
                    "td",
                    _verdict_chip(fact.get("label"), fact.get("reason")),
                    h("div", _reason(fact.get("reason"), other_name), class_="ev-reason-line")
                    if fact.get("reason")
                    else None,
                    h("span", f"support {support:.2f}", class_="ev-support") if support is not None else None,
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


def _render_tbfact(ctx: _Ctx) -> Markup:
    facts = _dicts(ctx.details.get("facts"))
    precision = [f for f in facts if f.get("direction") == "precision"]
    recall = [f for f in facts if f.get("direction") == "recall"]
    case = ctx.case
    agent = ctx.details.get("agent")
    agent_text = _agent_text(case, str(agent)) if isinstance(agent, str) and agent else None
    gold_text = "\n".join(f"- {g.text}" for g in case.gold_facts) if case.gold_facts else None
    recall_text = "\n".join(f"- {_text(f.get('fact'))}" for f in recall) if recall else None
    if agent:
        response_candidates: list[tuple[str, str | None]] = [("agent's messages", agent_text)]
        # the patient's reference text is not stored with the case: no text to mark
        reference_candidates: list[tuple[str, str | None]] = []
    else:
        response_candidates = [("response", case.response)]
        # what TBFact checked the response's facts against: the reference, else the
        # curated facts as a list (the case's gold facts or a reference_facts file)
        if case.reference is not None:
            reference_candidates = [("reference", case.reference)]
        elif gold_text is not None:
            reference_candidates = [("gold facts", gold_text), ("reference facts", recall_text)]
        else:
            reference_candidates = [("reference facts", recall_text)]
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
            _Quote(
                ctx.id(side, "f", i),
                str(i),
                _verdict(f.get("label"), f.get("reason"))[0],
                _text(f.get("evidence")),
            )
            for i, f in enumerate(side_facts, start=1)
        ]
        chosen = _best_text(candidates, [q.quote for q in quotes])
        marked_html: Markup | None = None
        marks_of: dict[str, list[str]] = {}
        found: set[str] = set()
        other_name = other
        not_found = False
        if chosen is not None:
            other_name, other_text = chosen
            marked_html, marks_of, found = _marked(other_text, quotes, ctx.id(side, "t"))
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


# --------------------------------------------------------------------------- grounding (ASTRID / RAGAS)


def _contexts_marked(
    ctx: _Ctx, quotes: Sequence[_Quote], tag: str
) -> tuple[Markup | None, dict[str, list[str]], set[str]]:
    contexts = ctx.case.contexts
    if not contexts:
        return None, {}, set()
    blocks = []
    marks_of: dict[str, list[str]] = {}
    found: set[str] = set()
    for i, passage in enumerate(contexts, start=1):
        html, marks, hit = _marked(passage, quotes, ctx.id(tag, "c", i))
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
        _chip("supported", "ev-v-entailed"),
        _chip("partly supported", "ev-v-partial"),
        _chip("unsupported", "ev-v-not-entailed"),
        _chip("contradicted", "ev-v-contradicted"),
        _chip("not informative (not judged)", "ev-v-na") if with_kinds else None,
        class_="ev-legend",
    )


def _render_grounding(ctx: _Ctx, rows: list[dict[str, Any]], key: str) -> Markup:
    """Faithfulness (statements) or conversational faithfulness (sentences with kinds)."""
    judged = [r for r in rows if "label" in r]
    quotes = [
        _Quote(ctx.id("g", i), str(i), _verdict(r.get("label"), r.get("reason"))[0], _text(r.get("evidence")))
        for i, r in enumerate(rows, start=1)
        if "label" in r
    ]
    contexts_html, marks_of, found = _contexts_marked(ctx, quotes, "g")
    # the answer as flowing text, each sentence / statement coloured
    spans = []
    for i, row in enumerate(rows, start=1):
        text = _text(row.get(key))
        if "label" in row:
            cls, words = _verdict(row.get("label"), row.get("reason"), grounding=True)
            title = words + (f": {_text(row.get('explanation'))}" if row.get("explanation") else "")
        else:
            cls, title = "ev-v-na", f"not judged ({_text(row.get('kind')) or 'not informative'})"
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
            verdict = _verdict_chip(row.get("label"), row.get("reason"), grounding=True)
            cls = _verdict(row.get("label"), row.get("reason"))[0]
        else:
            verdict = _chip(_text(row.get("kind")) or "not judged", "ev-v-na")
            cls = "ev-v-na"
        credit = _num(row.get("credit"))
        evidence = _text(row.get("evidence"))
        where = None
        if evidence.strip() and contexts_html is not None and row_id not in found:
            where = h("span", "not found word for word in the contexts", class_="ev-hint")
        table_rows.append(
            h(
                "tr",
                h("td", str(i), class_="ev-col-n"),
                h("td", _text(row.get(key)), class_="ev-fact"),
                h(
                    "td",
                    verdict,
                    h("span", f"credit {credit:.2f}", class_="ev-support") if credit is not None else None,
                ),
                h(
                    "td",
                    _reason(row.get("reason"), "contexts"),
                    h("div", _text(row.get("explanation")), class_="ev-why")
                    if row.get("explanation")
                    else None,
                ),
                h(
                    "td",
                    join([h("q", evidence, class_="ev-quote"), where])
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
        h(
            "span",
            ", ".join(f"{v} {k}" for k, v in counts.items()),
            class_="ev-meta-item",
        )
        if isinstance(counts, dict)
        else None,
        _retrieval_line(ctx.details),
        _judge_line(ctx.details),
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


def _render_context_sentences(ctx: _Ctx) -> Markup:
    rows = _dicts(ctx.details.get("sentences"))
    items = []
    for row in rows:
        relevant = bool(row.get("relevant"))
        items.append(
            h(
                "li",
                _chip("relevant" if relevant else "not relevant", "ev-v-entailed" if relevant else "ev-v-na"),
                " ",
                h("span", _text(row.get("sentence"))),
                class_="ev-ctx-sentence " + ("ev-relevant" if relevant else "ev-irrelevant"),
            )
        )
    return join(
        [
            h(
                "div",
                [m for m in (_retrieval_line(ctx.details), _judge_line(ctx.details)) if m],
                class_="ev-meta",
            ),
            h("h4", "Context sentences judged for relevance to the question"),
            h("ol", items, class_="ev-sentences"),
        ]
    )


def _render_context_relevance(ctx: _Ctx) -> Markup:
    contexts = ctx.case.contexts
    blocks = (
        h(
            "ol",
            [
                h("li", h("div", f"Context {i}", class_="ev-ctx-n"), _block_text(c), class_="ev-ctx")
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
                [m for m in (_retrieval_line(ctx.details), _judge_line(ctx.details)) if m],
                class_="ev-meta",
            ),
            h("h4", "Question"),
            _block_text(ctx.case.input_text() if ctx.case.input is not None else None),
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


def _render_refusal(ctx: _Ctx) -> Markup:
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
                source_words.get(str(expectation.get("source")), _text(expectation.get("source"))),
                h("div", _text(expectation.get("explanation")), class_="ev-why")
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
                h("div", _text(refusal.get("explanation")), class_="ev-why")
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
            _block_text(ctx.case.response),
        ]
    )


def _bar(value: float | None) -> Markup:
    if value is None:
        return h("span", "–", class_="ev-missing")
    pct = max(0.0, min(1.0, value)) * 100
    return h(
        "span",
        h("span", class_="ev-bar-fill", style=f"width:{pct:.0f}%"),
        h("span", _fmt(value), class_="ev-bar-text"),
        class_="ev-bar",
    )


def _render_answer_relevance(ctx: _Ctx) -> Markup:
    d = ctx.details
    method = _text(d.get("method"))
    parts: list[Any] = [
        h(
            "div",
            [
                h("span", f"method: {method.replace('_', ' ')}", class_="ev-meta-item") if method else None,
                h("span", "noncommittal" if d.get("noncommittal") else "committal", class_="ev-meta-item")
                if "noncommittal" in d
                else None,
                _judge_line(d),
            ],
            class_="ev-meta",
        ),
        h("h4", "Question"),
        _block_text(ctx.case.input_text() if ctx.case.input is not None else None),
    ]
    why = d.get("noncommittal_explanation") or d.get("judge_explanation")
    if why and _text(why) not in (ctx.result.score.explanation or ""):
        parts.append(h("p", h("strong", "Judge: "), _text(why), class_="ev-why"))
    questions = _dicts(d.get("questions"))
    sentences = _dicts(d.get("sentences"))
    if questions:
        parts.append(h("h4", "Questions written from the answer, with their similarity to the question"))
        parts.append(
            h(
                "table",
                h(
                    "tbody",
                    [
                        h("tr", h("td", _text(q.get("question"))), h("td", _bar(_num(q.get("similarity")))))
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
                            h("td", _text(s.get("sentence"))),
                            h(
                                "td",
                                _chip(
                                    _text(s.get("kind")) or "–",
                                    "ev-v-entailed" if s.get("kind") == "informative" else "ev-v-na",
                                ),
                            ),
                            h("td", _bar(_num(s.get("similarity")))),
                        )
                        for s in sentences
                    ],
                ),
                class_="ev-grid",
            )
        )
    return join(parts)


# --------------------------------------------------------------------------- trajectories


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
    for m in _dicts(details.get("matched")):
        i, j = m.get("predicted_index"), m.get("reference_index")
        if isinstance(j, int):
            ref[j] = _call_from({"name": m.get("name"), "arguments": m.get("arguments") or {}})
        if isinstance(i, int):
            pred[i] = _call_from({"name": m.get("name"), "arguments": m.get("predicted_arguments") or {}})
    for m in _dicts(details.get("missing")):
        if isinstance(m.get("reference_index"), int):
            ref[m["reference_index"]] = _call_from(
                {"name": m.get("name"), "arguments": m.get("arguments") or {}}
            )
    for m in _dicts(details.get("extra")):
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
        for m in _dicts(details.get("matched"))
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


def _call_html(call: ToolCall | None, index: int | None, diff: set[str], side: str) -> Markup:
    if call is None or index is None:
        return h("span", "—", class_="ev-missing")
    args = [
        h(
            "li",
            h("span", k, class_="ev-arg-key"),
            ": ",
            h("code", _text(v)),
            class_="ev-arg ev-arg-diff" if k in diff else "ev-arg",
            title="differs from the other side" if k in diff else None,
        )
        for k, v in call.arguments.items()
    ]
    output = (
        h("details", h("summary", "output"), h("pre", _text(call.output), class_="ev-pre"), class_="ev-fold")
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


def _render_trajectory(ctx: _Ctx) -> Markup:
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
    chips = [_chip(f"{n} {_STATUS_WORDS[s][1]}", _STATUS_WORDS[s][0]) for s, n in counts.items()]
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
                        _call_html(pred[row.pred] if row.pred is not None else None, row.pred, row.diff, "p"),
                        class_="ev-call",
                    ),
                    h("td", _chip(words, cls), class_="ev-t-status"),
                    h(
                        "td",
                        _call_html(ref[row.ref] if row.ref is not None else None, row.ref, row.diff, "r"),
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


def _render_single_tool(ctx: _Ctx) -> Markup:
    wanted = _text(ctx.details.get("tool_name"))
    positions = {p for p in _list(ctx.details.get("positions")) if isinstance(p, int)}
    calls = ctx.case.trajectory or []
    items = [
        h("li", _call_html(call, i, set(), "p"), class_="ev-call " + ("ev-t-match" if i in positions else ""))
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


# --------------------------------------------------------------------------- conversations


def _conversation(case: Case) -> Any:
    try:
        from clineval.conversations.cases import conversation_of

        return conversation_of(case)
    except Exception:
        return None


def _transcript(
    case: Case, prefix: str | None, annotations: Mapping[int, Markup] | None = None
) -> Markup | None:
    """The conversation of a case, message by message; ``annotations`` by user-turn number (1-based)."""
    conversation = _conversation(case)
    if conversation is None:
        if isinstance(case.input, list):
            return _turns(case.input, prefix)
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
                h("code", "(" + _text(c.arguments) + ")", class_="ev-call-args"),
                h(
                    "details",
                    h("summary", "result"),
                    h("pre", _text(c.result), class_="ev-pre"),
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
                class_=f"ev-msg ev-role-{message.role} ev-spk-{_speaker_index(speakers, message.speaker)}",
                id=f"{prefix}-msg{k}" if prefix else None,
            )
        )
    return h("ol", items, class_="ev-transcript")


def _speaker_index(speakers: dict[str, int], speaker: str) -> int:
    """A colour slot per speaker, in order of first appearance (deterministic)."""
    return speakers.setdefault(speaker.strip().lower(), len(speakers) % 6)


def _turns(turns: Sequence[Any], prefix: str | None) -> Markup:
    items = []
    speakers: dict[str, int] = {}
    for k, turn in enumerate(turns):
        slot = _speaker_index(speakers, turn.name or turn.role)
        calls = [
            h(
                "li",
                h("code", c.name, class_="ev-call-name"),
                h("code", "(" + _text(c.arguments) + ")", class_="ev-call-args"),
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


def _ok(correct: Any) -> Markup:
    if correct is True:
        return _chip("correct", "ev-v-entailed")
    if correct is False:
        return _chip("wrong", "ev-v-contradicted")
    return _chip("–", "ev-v-na")


def _render_turns(ctx: _Ctx) -> Markup:
    rows = _dicts(ctx.details.get("turns"))
    tools = any("called" in r for r in rows)
    annotations: dict[int, Markup] = {}
    trs = []
    for row in rows:
        turn = row.get("turn")
        if tools:
            cells = [
                h("td", ", ".join(map(_text, _list(row.get("gold")))) or _missing("none")),
                h("td", ", ".join(map(_text, _list(row.get("called")))) or _missing("none")),
                h("td", ", ".join(map(_text, _list(row.get("missing")))) or "–", class_="ev-diff-missing"),
                h("td", ", ".join(map(_text, _list(row.get("extra")))) or "–", class_="ev-diff-extra"),
            ]
            note = f"called: {', '.join(map(_text, _list(row.get('called')))) or 'none'}"
        else:
            cells = [
                h("td", _text(row.get("gold"))),
                h("td", _text(row.get("selected")) or _missing("nobody")),
                h("td", ", ".join(map(_text, _list(row.get("answered_by")))) or "–"),
            ]
            note = f"chosen: {_text(row.get('selected')) or 'nobody'}"
        if isinstance(turn, int):
            annotations[turn] = join([" ", h("span", note, class_="ev-chosen"), " ", _ok(row.get("correct"))])
        trs.append(
            h(
                "tr",
                h("td", _text(turn), class_="ev-col-n"),
                h("td", _text(row.get("query")), class_="ev-fact"),
                *cells,
                h("td", _ok(row.get("correct"))),
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


def _render_segments(ctx: _Ctx) -> Markup:
    rows = _dicts(ctx.details.get("segments"))
    trs = []
    for row in rows:
        if "skipped" in row:
            verdict = _chip("skipped", "ev-v-na", _text(row.get("skipped")))
        else:
            verdict = (
                _chip("relevant", "ev-v-entailed")
                if row.get("relevant")
                else _chip("not relevant", "ev-v-contradicted")
            )
        trs.append(
            h(
                "tr",
                h("td", _text(row.get("segment")), class_="ev-col-n"),
                h(
                    "td",
                    _text(row.get("request")),
                    h("div", f"({row['request_from']})", class_="ev-hint")
                    if row.get("request_from") == "earlier"
                    else None,
                ),
                h("td", _text(row.get("response"))),
                h(
                    "td",
                    verdict,
                    h("div", _text(row.get("explanation") or row.get("skipped")), class_="ev-why"),
                ),
            )
        )
    agent = _text(ctx.details.get("agent"))
    return join(
        [
            h(
                "div",
                [
                    h("span", f"agent {agent}", class_="ev-meta-item") if agent else None,
                    _judge_line(ctx.details),
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


def _render_source_support(ctx: _Ctx) -> Markup:
    facts = _dicts(ctx.details.get("facts"))
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
        cls, _ = _verdict(f.get("label"), f.get("reason"))
        docs = [_text(x) for x in _list(f.get("supporting_documents"))]
        document = _text(f.get("document"))
        also = [x for x in docs if x != document]
        return h(
            "tr",
            h("td", str(i), class_="ev-col-n"),
            h(
                "td",
                h("div", _text(f.get("fact")), class_="ev-fact-text"),
                h("div", _text(f.get("explanation")), class_="ev-why") if f.get("explanation") else None,
                class_="ev-fact",
            ),
            h(
                "td",
                _importance_chip(f.get("importance")),
                h("div", _text(f.get("category")) or "–", class_="ev-cat"),
            ),
            h(
                "td",
                _verdict_chip(f.get("label"), f.get("reason"), grounding=True),
                h("div", _reason(f.get("reason"), "source documents"), class_="ev-reason-line")
                if f.get("reason")
                else None,
                class_="ev-verdict",
            ),
            h(
                "td",
                h("div", h("code", document), class_="ev-doc") if document else _missing("no document"),
                h("q", _text(f.get("evidence")), class_="ev-quote") if f.get("evidence") else None,
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
        h("span", "documents: " + ", ".join(map(_text, _list(d.get("documents")))), class_="ev-meta-item")
        if d.get("documents")
        else None,
        _judge_line(d),
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


def _render_rating(ctx: _Ctx) -> Markup:
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
                    _judge_line(d),
                ],
                class_="ev-meta",
            ),
            h("p", note, class_="ev-hint") if isinstance(note, str) else None,
            h("details", h("summary", "Transcript the judge rated"), transcript, class_="ev-fold")
            if transcript is not None
            else None,
        ]
    )


def _render_agent_tbfact_segments(ctx: _Ctx) -> Markup:
    rows = _dicts(ctx.details.get("per_segment"))
    trs = [
        h(
            "tr",
            h("td", _text(r.get("segment")), class_="ev-col-n"),
            h("td", _text(r.get("status"))),
            h("td", _fmt(r.get("f1"))),
            h("td", _text(r.get("explanation"))),
        )
        for r in rows
    ]
    return join(
        [
            h(
                "div",
                h("span", f"agent {_text(ctx.details.get('agent'))}", class_="ev-meta-item"),
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


# --------------------------------------------------------------------------- radiology benchmark


def _episode(case: Case) -> Any:
    output = case.metadata.get("agent_output")
    if not (isinstance(output, dict) and isinstance(output.get("episode"), dict)):
        return None
    try:
        from clineval.environments.radbench.model import Episode

        return Episode.model_validate(output["episode"])
    except Exception:
        return None


_FINISH_WORDS = {
    "endcall": ("the core ended with an EndCall", "ev-v-entailed"),
    "nocall": ("the core declined (NoCall)", "ev-v-partial"),
    "step_limit": ("the step limit was reached", "ev-v-not-entailed"),
    "io_error": ("a call failed: the chain is broken", "ev-v-contradicted"),
    "malformed": ("a reply could not be read", "ev-v-contradicted"),
    "no_plan": ("the plan could not be read", "ev-v-contradicted"),
    "core_error": ("the core raised an error", "ev-v-contradicted"),
}


def _category(value: Any) -> str:
    """A radiology tool category by name (``Organ Segmentor``), whatever form it is stored in."""
    if value is None:
        return ""
    try:
        from clineval.environments.radbench.vocab import CATEGORY_NAMES, Category

        return CATEGORY_NAMES[Category(int(value))]
    except Exception:
        return _text(value)


def _readable(data: Mapping[str, Any]) -> dict[str, Any]:
    """A radiology record (gap, NoCall) with categories by name and empty fields left out."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if value in (None, "", []):
            continue
        out[key.replace("_", " ")] = _category(value) if key == "category" else value
    return out


def _render_radbench(ctx: _Ctx, episode: Any) -> Markup:
    finish_words, finish_cls = _FINISH_WORDS.get(episode.finished, (episode.finished, "ev-v-na"))
    meta = [
        h("span", f"record {episode.record_id}", class_="ev-meta-item"),
        h("span", f"task {episode.task}", class_="ev-meta-item"),
        h("span", f"condition {episode.condition}", class_="ev-meta-item"),
        h("span", f"core {episode.core}", class_="ev-meta-item"),
        h("span", f"{episode.n_tools} tool(s) offered", class_="ev-meta-item"),
        h("span", "solvable" if episode.solvable else "unsolvable with these tools", class_="ev-meta-item"),
    ]
    parts: list[Any] = [
        h("div", meta, class_="ev-meta"),
        h(
            "p",
            _chip(episode.finished, finish_cls),
            " ",
            finish_words,
            h("span", f" — {episode.error}", class_="ev-why") if episode.error else None,
            class_="ev-finish",
        ),
    ]
    if episode.gap is not None:
        gap = _readable(episode.gap.model_dump(mode="json"))
        parts.append(
            h(
                "details",
                h("summary", "What the tool set lacks (the gap)"),
                _kv_table(gap),
                class_="ev-fold",
                open=True,
            )
        )
    # plan
    gt = list(episode.gt_chain)
    if episode.plan is None:
        parts.append(h("h4", "Plan"))
        parts.append(h("p", "No plan.", class_="ev-empty"))
    else:
        chain = list(episode.plan.chain)
        plan_items = [
            h(
                "li",
                _category(c),
                class_="ev-chain-step " + ("ev-t-match" if k < len(gt) and gt[k] == c else "ev-t-args"),
            )
            for k, c in enumerate(chain)
        ]
        gt_items = [h("li", _category(c), class_="ev-chain-step") for c in gt]
        parts.append(h("h4", "Plan: the chain of tool categories"))
        parts.append(
            h(
                "div",
                h(
                    "div",
                    h("h5", "Planned"),
                    h("ol", plan_items, class_="ev-chain") if plan_items else _missing("empty"),
                ),
                h("div", h("h5", "Ground truth"), h("ol", gt_items, class_="ev-chain")),
                class_="ev-two",
            )
        )
        if episode.plan.known:
            parts.append(h("p", "Known from the question: ", ", ".join(episode.plan.known), class_="ev-hint"))
        if episode.plan.raw:
            parts.append(
                h(
                    "details",
                    h("summary", "The plan as written"),
                    h("pre", episode.plan.raw, class_="ev-pre"),
                    class_="ev-fold",
                )
            )
    # steps with the memory bank as it grows
    memory: dict[str, str] = {}
    written_by: dict[str, int] = {}
    steps = []
    for step in episode.steps:
        action = {"call": "Call", "endcall": "EndCall", "nocall": "NoCall", "malformed": "Malformed"}.get(
            step.action, step.action
        )
        status_cls = (
            "ev-v-entailed"
            if step.ok
            else ("ev-v-partial" if step.action == "nocall" else "ev-v-contradicted")
        )
        card = {
            "tool": step.tool,
            "category": _category(step.category),
            "inputs": ", ".join(step.inputs) if step.inputs else None,
            "performance": _fmt(step.score) if step.score is not None else None,
            "rank among suitable tools": f"{step.rank} of {step.n_suitable}"
            if step.rank is not None
            else None,
        }
        card_rows = {k: v for k, v in card.items() if v not in (None, "")}
        new = {k: v for k, v in step.outputs.items() if memory.get(k) != v}
        for k, v in step.outputs.items():
            memory[k] = v
            written_by[k] = step.index
        body: list[Any] = [
            h(
                "div",
                h("span", f"step {step.index + 1}", class_="ev-step-n"),
                _chip(action, f"ev-action ev-action-{step.action}"),
                " ",
                h("code", step.tool, class_="ev-call-name") if step.tool else None,
                " ",
                _chip(
                    "declined"
                    if step.action == "nocall"
                    else "ok"
                    if step.ok
                    else (step.error_kind or "failed").replace("_", " "),
                    "ev-v-partial" if step.action == "nocall" else status_cls,
                ),
                class_="ev-step-head",
            ),
        ]
        new_html = (
            h("div", h("h5", "Added to the memory bank"), _kv_table(new), class_="ev-memory-new")
            if new
            else None
        )
        body.append(h("div", _kv_table(card_rows) if card_rows else h("div"), new_html, class_="ev-two"))
        if step.card:
            shown = {k: ", ".join(map(str, v)) if isinstance(v, list) else v for k, v in step.card.items()}
            body.append(
                h(
                    "details",
                    h("summary", f"Tool card of {step.card.get('Name', step.tool)}, as the core saw it"),
                    _kv_table(shown),
                    class_="ev-fold ev-tool-card",
                )
            )
        if step.error:
            body.append(h("p", step.error, class_="ev-why ev-error-text"))
        if step.nocall is not None:
            nocall = _readable(step.nocall.model_dump(mode="json", exclude={"raw"}))
            body.append(h("div", h("h5", "What the core says is missing"), _kv_table(nocall)))
        if step.built_tool:
            body.append(h("p", f"automated tool building added {step.built_tool}", class_="ev-hint"))
        if step.reply:
            body.append(
                h(
                    "details",
                    h("summary", "The core's reply"),
                    h("pre", step.reply, class_="ev-pre"),
                    class_="ev-fold",
                )
            )
        steps.append(h("li", body, class_=f"ev-step ev-step-{step.action}", id=ctx.id("s", step.index)))
    parts.append(h("h4", f"Steps ({len(episode.steps)})"))
    parts.append(
        h("ol", steps, class_="ev-steps") if steps else h("p", "No step was taken.", class_="ev-empty")
    )
    final_memory = episode.memory or memory
    if final_memory:
        rows = [
            h(
                "tr",
                h("th", k, scope="row"),
                h("td", v),
                h("td", f"step {written_by[k] + 1}" if k in written_by else "given", class_="ev-hint"),
            )
            for k, v in final_memory.items()
        ]
        parts.append(h("h4", "Memory bank at the end"))
        parts.append(h("table", h("tbody", rows), class_="ev-kv"))
    parts.append(h("h4", "Final answer against the reference"))
    parts.append(
        h(
            "div",
            h("div", h("h5", "Answer"), _block_text(episode.answer, missing="no answer")),
            h("div", h("h5", "Reference"), _block_text(episode.reference_answer)),
            class_="ev-two",
        )
    )
    return join(parts)


# --------------------------------------------------------------------------- suite evaluations


def _render_evaluations(ctx: _Ctx) -> Markup:
    rows = _dicts(ctx.details.get("evaluations"))
    trs = []
    for r in rows:
        label = _text(r.get("label"))
        cls = {"pass": "ev-v-entailed", "fail": "ev-v-contradicted"}.get(label, "ev-v-na")
        trs.append(
            h(
                "tr",
                h("td", _text(r.get("query")) or "–", class_="ev-fact"),
                h("td", _text(r.get("ground_truth")) if "ground_truth" in r else _missing("–")),
                h("td", _text(r.get("response")) if "response" in r else _missing("–")),
                h("td", _fmt(r.get("value")) if r.get("value") is not None else _text(r.get("status"))),
                h(
                    "td",
                    _chip(label, cls) if label else None,
                    h("div", _text(r.get("explanation") or r.get("error")), class_="ev-why")
                    if r.get("explanation") or r.get("error")
                    else None,
                ),
                class_=f"ev-eval-row {cls}",
            )
        )
    others = {k: v for k, v in ctx.details.items() if k != "evaluations"}
    return join(
        [
            _kv_table(others) if others else None,
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


# --------------------------------------------------------------------------- dispatch


_TRAJ_KEYS = {"matched", "missing", "extra"}


def _family(result: ResultRecord, case: Case) -> str:
    d = result.score.details if isinstance(result.score.details, dict) else {}
    name = result.metric.lower()
    if _is_tbfact(d):
        return "tbfact"
    if "per_segment" in d and "agent" in d:
        return "agent_tbfact_segments"
    if isinstance(d.get("statements"), list):
        return "faithfulness"
    sentences = _dicts(d.get("sentences"))
    if sentences and "method" not in d and all("kind" in s for s in sentences):
        return "conversational_faithfulness"
    if sentences and all("relevant" in s for s in sentences):
        return "context_relevance_ragas"
    if "method" in d and ("sentences" in d or "questions" in d):
        return "answer_relevance"
    if "expectation" in d or "refusal" in d:
        return "refusal"
    if set(d) >= _TRAJ_KEYS:
        return "trajectory"
    if "tool_name" in d and "positions" in d:
        return "single_tool"
    if _dicts(d.get("turns")) and all("turn" in t for t in _dicts(d.get("turns"))):
        return "turns"
    if _dicts(d.get("segments")) and "agent" in d:
        return "segments"
    if _dicts(d.get("facts")) and "documents" in d:
        return "source_support"
    if "scale_min" in d and "scale_max" in d:
        return "rating"
    if name == "radbench" or (set(d) == {"finished"} and _episode(case) is not None):
        return "radbench"
    if _dicts(d.get("evaluations")):
        return "evaluations"
    if "retrieval" in d and (name.startswith("context_relevance") or "relevan" in name):
        return "context_relevance"
    return "generic"


_FAMILY_TITLES = {
    "tbfact": "TBFact",
    "faithfulness": "faithfulness (RAGAS)",
    "conversational_faithfulness": "conversational faithfulness (ASTRID)",
    "context_relevance_ragas": "context relevance (RAGAS)",
    "context_relevance": "context relevance (ASTRID)",
    "answer_relevance": "answer relevance",
    "refusal": "refusal accuracy (ASTRID)",
    "trajectory": "trajectory (Vertex AI evaluation)",
    "single_tool": "trajectory (Vertex AI evaluation)",
    "turns": "conversation (Healthcare Agent Orchestrator evaluation)",
    "segments": "conversation (Healthcare Agent Orchestrator evaluation)",
    "source_support": "source support (Healthcare Agent Orchestrator evaluation)",
    "rating": "conversation rating (Healthcare Agent Orchestrator evaluation)",
    "agent_tbfact_segments": "TBFact per segment",
    "radbench": "radiology benchmark episode (RadA-BenchPlat)",
    "evaluations": "suite evaluator",
    "generic": "",
}


def _body(ctx: _Ctx, family: str) -> Markup | None:
    if family == "tbfact":
        return _render_tbfact(ctx)
    if family == "faithfulness":
        return _render_grounding(ctx, _dicts(ctx.details.get("statements")), "statement")
    if family == "conversational_faithfulness":
        return _render_grounding(ctx, _dicts(ctx.details.get("sentences")), "sentence")
    if family == "context_relevance_ragas":
        return _render_context_sentences(ctx)
    if family == "context_relevance":
        return _render_context_relevance(ctx)
    if family == "answer_relevance":
        return _render_answer_relevance(ctx)
    if family == "refusal":
        return _render_refusal(ctx)
    if family == "trajectory":
        return _render_trajectory(ctx)
    if family == "single_tool":
        return _render_single_tool(ctx)
    if family == "turns":
        return _render_turns(ctx)
    if family == "segments":
        return _render_segments(ctx)
    if family == "source_support":
        return _render_source_support(ctx)
    if family == "rating":
        return _render_rating(ctx)
    if family == "agent_tbfact_segments":
        return _render_agent_tbfact_segments(ctx)
    if family == "radbench":
        episode = _episode(ctx.case)
        return _render_radbench(ctx, episode) if episode is not None else None
    if family == "evaluations":
        return _render_evaluations(ctx)
    return None


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
    scope = _slug(id_prefix) if id_prefix else hashlib.sha1(result.run_id.encode("utf-8")).hexdigest()[:6]
    prefix = f"ev-{scope}-{_slug(result.metric)}"
    details = result.score.details if isinstance(result.score.details, dict) else {}
    ctx = _Ctx(case=case, result=result, prefix=prefix, details=details)
    family = "generic"
    body: Markup | None = None
    failure: str | None = None
    if result.score.status != "error" or details:
        try:
            family = _family(result, case)
            body = _body(ctx, family)
        except Exception as exc:  # a view must never break the page: fall back to the table
            log.warning("evidence view for %s failed: %s", result.metric, exc, exc_info=True)
            failure = f"{type(exc).__name__}: {exc}"
            family, body = "generic", None
    if result.score.status == "error":
        body = None if family not in ("radbench",) else body
    status = result.score.status
    sub_limit: int | None = 0 if family in ("tbfact", "evaluations") else None if family == "radbench" else 8
    parts: list[Any] = [
        _header(result, lower_is_better, _FAMILY_TITLES.get(family, "")),
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
    if body is not None:
        parts.append(h("div", body, class_="ev-body"))
        parts.append(_sub_scores(result, limit=sub_limit))
        parts.append(_raw_details(result, title="All details as stored"))
    else:
        parts.append(_sub_scores(result, limit=None if status == "scored" else 8))
        details_html = _value_html(details) if details else None
        if details_html is not None:
            long = len(details) > _LONG_ROWS or len(json.dumps(details, default=str)) > 1500
            parts.append(
                h("details", h("summary", "Details"), details_html, class_="ev-fold ev-raw", open=not long)
            )
    return h(
        "section",
        parts,
        class_=f"ev-result ev-status-{status} ev-fam-{family.replace('_', '-')}",
        id=prefix,
        data_metric=result.metric,
    )


# --------------------------------------------------------------------------- the case


def render_case_texts(case: Case, *, id_prefix: str | None = None) -> Markup:
    """The case: input (a conversation turn by turn), response, reference, contexts, gold
    facts, trajectories, expected output and the agent run; missing and empty told apart."""
    # ids only with a prefix: a page may show the same case of two runs
    prefix = f"ev-case-{_slug(id_prefix)}" if id_prefix else None
    parts: list[Any] = []
    transcript = _transcript(case, f"{prefix}-conv" if prefix else None)
    if transcript is not None:
        parts.append(h("section", h("h3", "Conversation"), transcript, class_="ev-case-part"))
    elif isinstance(case.input, list):
        parts.append(
            h(
                "section",
                h("h3", "Input"),
                _turns(case.input, f"{prefix}-in" if prefix else None),
                class_="ev-case-part",
            )
        )
    else:
        parts.append(h("section", h("h3", "Input"), _block_text(case.input), class_="ev-case-part"))
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
            h("section", h("h3", "Response"), _block_text(case.response), class_="ev-case-part"),
            h("section", h("h3", "Reference"), _block_text(case.reference), class_="ev-case-part"),
            class_="ev-two",
        )
    )
    if case.contexts is not None:
        ctx_html = (
            h(
                "ol",
                [
                    h("li", h("div", f"Context {i}", class_="ev-ctx-n"), _block_text(c), class_="ev-ctx")
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
                h("td", _importance_chip(g.importance)),
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
                return _missing()
            if not seq:
                return h("span", "(no call)", class_="ev-missing")
            return h(
                "ol",
                [h("li", _call_html(c, i, set(), "x"), class_="ev-call") for i, c in enumerate(seq)],
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
        parts.append(h("section", h("h3", "Expected"), _value_html(case.expected), class_="ev-case-part"))
    shown_meta = {k: v for k, v in case.metadata.items() if k not in ("agent_output", "conversation")}
    extra = case.metadata.get("agent_output")
    if isinstance(extra, dict):
        rest = {k: v for k, v in extra.items() if k not in ("conversation", "episode")}
        if rest:
            shown_meta["agent_output"] = rest
    if shown_meta:
        parts.append(
            h(
                "details",
                h("summary", f"Metadata ({len(shown_meta)})"),
                _kv_table(shown_meta),
                class_="ev-fold ev-case-part",
            )
        )
    if case.agent_run is not None and case.agent_run.latency_s is not None:
        parts.append(
            h(
                "p",
                f"Agent latency {_fmt(case.agent_run.latency_s, 3)} s"
                + (f", {case.agent_run.attempts} attempts" if case.agent_run.attempts > 1 else ""),
                class_="ev-hint",
            )
        )
    return h("div", parts, class_="ev-case", id=prefix)


# --------------------------------------------------------------------------- CSS and JS


_ASSETS = Path(__file__).parent / "templates" / "evidence"
#: The styles of every ``ev-`` class (served by the viewer, inlined by the report).
EVIDENCE_CSS: str = (_ASSETS / "evidence.css").read_text(encoding="utf-8")
#: Hover, focus and click linking of fact rows and evidence marks; plain JS, safe inline.
EVIDENCE_JS: str = (_ASSETS / "evidence.js").read_text(encoding="utf-8")
