"""A calibration report for people: rich renderables for the terminal, Markdown for docs.

:func:`report_renderable` shows one :class:`~clineval.calibration.runner.CalibrationReport`
protocol by protocol: the figures that are evidence for the judge, each with the judge's
value and 95 % interval, every trivial baseline's value on the same items, the paired
interval of the difference (judge minus baseline) and whether the judge beats the baseline
(that interval lies above 0); then the figures shown for context, the physicians' own
agreement where the set has it (the ceiling), the counts, and what the protocol shows and
does not show. :func:`markdown` writes the same for several judges side by side, one
column per judge. The JSON form is ``report.model_dump_json()``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from clineval.calibration.data import SAMPLES
from clineval.calibration.protocols import BASELINE_NAMES, Comparison, Figure, ProtocolResult, Stat
from clineval.calibration.runner import PROTOCOLS, CalibrationReport

__all__ = [
    "INTERVALS",
    "Verdict",
    "ceiling_text",
    "markdown",
    "print_report",
    "protocol_renderable",
    "report_renderable",
    "scope_text",
    "verdict",
]

INTERVALS = (
    "95 % intervals: percentile bootstrap over items (2,000 resamples, seed 0); the interval of "
    "judge − baseline is paired (the same resampled items for both). For a κ or Youden's J, ROUGE-L "
    "and content-word share label an item with the threshold that does best on the other half of the items."
)

Verdict = str
"""``beats`` (the interval of judge − baseline lies above 0), ``worse`` (below 0),
``unclear`` (it contains 0) or ``–`` (no interval)."""


def verdict(comparison: Comparison) -> Verdict:
    """How the judge compares with one baseline on one figure (see :data:`Verdict`)."""
    low, high = comparison.difference.low, comparison.difference.high
    if low is None or high is None:
        return "–"
    if low > 0:
        return "beats"
    if high < 0:
        return "worse"
    return "unclear"


_VERDICT_STYLE = {"beats": "bold green", "worse": "bold red", "unclear": "yellow", "–": "dim"}


def _num(value: float | None, digits: int = 2, sign: bool = False) -> str:
    if value is None:
        return "–"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def _stat(stat: Stat, *, sign: bool = False) -> str:
    """``0.35 [0.21, 0.49]``; a figure that could not be computed says why."""
    if stat.value is None:
        return "–" + (f" ({stat.note})" if stat.note else "")
    text = _num(stat.value, sign=sign)
    if stat.low is not None and stat.high is not None:
        text += f" [{_num(stat.low)}, {_num(stat.high)}]"
    return text


def _baseline(name: str) -> str:
    return BASELINE_NAMES.get(name, name)


def _plain(label: str) -> str:
    return label.replace("`", "")


def _source(data: str) -> str:
    if data == f"samples ({SAMPLES})":
        return "the samples packaged with clineval"
    if data.startswith("samples (") and data.endswith(")"):
        return f"the sample files in {data[len('samples (') : -1]}"
    return data


def _judge_name(report: CalibrationReport) -> str:
    return report.judge + (f" ({report.judge_kind})" if report.judge_kind else "")


# --- what each protocol is about ---------------------------------------------------------------


@dataclass(frozen=True)
class _About:
    unit: str
    """What ``n`` counts."""
    unscored_unit: str
    """What ``unscored`` counts."""
    shows: Callable[[ProtocolResult], str]
    not_shown: str


def _count(info: dict[str, Any], key: str) -> dict[str, int]:
    value = info.get(key)
    return value if isinstance(value, dict) else {}


def _labels(counts: dict[str, int], order: Sequence[str]) -> str:
    return "/".join(str(counts.get(label, 0)) for label in order)


def _kqa_nli(p: ProtocolResult) -> str:
    answers = p.info.get("answers")
    majority = _count(p.info, "majority_labels")
    from_answers = f" from {answers} answers" if answers else ""
    return (
        f"whether the judge, checking a physician-written statement against an LLM's answer to a "
        f"real patient question, reaches the verdict of three physicians (K-QA, Manes et al., "
        f"2024): {p.n} statements{from_answers}, majority labels Entailment/Neutral/Contradiction "
        f"{_labels(majority, ('Entailment', 'Neutral', 'Contradiction'))}. This is the claim check "
        "(check_facts) that TBFact, conversational faithfulness and faithfulness rest on."
    )


def _kqa_support(p: ProtocolResult) -> str:
    return (
        f"whether `faithfulness` and `conversational_faithfulness` rank the K-QA statements that the "
        f"physicians' majority calls Entailment above the others, with each statement as the answer "
        f"and the LLM's answer as the only retrieved context: ROC AUC on {p.n} statements."
    )


def _radfact(p: ProtocolResult) -> str:
    phrases = sum(_count(p.info, "phrase_labels").values())
    return (
        f"whether the judge's verdict on each phrase of a radiology report, checked against the other "
        f"report of the pair, matches the labels of RadFact (Bannur et al., 2024; {p.n} report pairs, "
        f"{phrases} phrases scored); and whether TBFact's precision, recall and F1 of one report against "
        "the other rank the pairs as the labels' share of entailed phrases does (Spearman)."
    )


def _medec(p: ProtocolResult) -> str:
    types = _count(p.info, "error_types")
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(types.items()))
    kinds_text = f" ({kinds})" if kinds else ""
    return (
        f"whether TBFact with this judge flags the medical error that the experts of MEDEC (Ben Abacha "
        f"et al., 2024) inserted in each of {p.n} clinical texts{kinds_text}: a fact of the erroneous "
        "sentence not supported (a distortion) or a fact of the correct sentence missing (an omission), "
        "checked against the corrected text and against the clean version of the case written by the "
        "set's authors, where sentences are reworded; and how often it flags the reworded correct "
        "sentences. The evidence is the sentence-level Youden's J (detection rate minus false-flag "
        "rate) beside baselines that flag a sentence when it is far from every sentence of the reference."
    )


def _refusal(p: ProtocolResult) -> str:
    count = f"{p.n} responses" if p.n else "the responses"
    return (
        f"whether the judge tells a refusal from an answer in {count}: safe refusals of harmful medical "
        "requests from MedSafetyBench (Han et al., 2024; should refuse) and physicians' answers to K-QA "
        "patient questions (should answer), against that construction and beside a keyword rule; and, "
        "without the labels, whether the judge itself decides that the harmful requests should be "
        "declined (context)."
    )


_ABOUT: dict[str, _About] = {
    "kqa_nli": _About(
        "statements",
        "statements",
        _kqa_nli,
        "how well the judge extracts facts from a text or rates their importance, how it does on "
        "clinical notes or on your own data, or a difference smaller than the intervals.",
    ),
    "kqa_support": _About(
        "statements",
        "statements",
        _kqa_support,
        "faithfulness of long RAG answers to real retrieved passages: each answer here is one "
        "statement and the context one LLM answer.",
    ),
    "radfact": _About(
        "report pairs",
        "phrases",
        _radfact,
        "agreement with radiologists in general: RadFact's examples are few, and the provenance of "
        "their labels is not fully documented.",
    ),
    "medec": _About(
        "texts",
        "text comparisons",
        _medec,
        "notes that leave something out rather than state it wrongly (every MEDEC error is a wrong "
        "statement), errors spread over several sentences, notes with several errors, or clinical "
        "documents other than MEDEC's short case texts. Detection against the corrected text alone "
        "proves little: a sentence that differs from the reference can be flagged by a string "
        "comparison (the 'texts differ' baseline).",
    ),
    "refusal": _About(
        "responses",
        "responses",
        _refusal,
        "refusals of borderline or partly answerable requests. The two sources differ in style, so a "
        "keyword rule already separates them well; a judge's κ near 1 here is necessary, not sufficient.",
    ),
}


def scope_text(protocol: ProtocolResult) -> tuple[str, str]:
    """What a protocol's figures show, and what they do not show (plain sentences)."""
    about = _ABOUT.get(protocol.name)
    if about is None:
        return protocol.title, ""
    return about.shows(protocol), about.not_shown


def _counts(protocol: ProtocolResult) -> str:
    about = _ABOUT.get(protocol.name)
    unit = about.unit if about else "items"
    unscored_unit = about.unscored_unit if about else "items"
    text = f"n = {protocol.n} {unit}"
    if protocol.name == "kqa_nli":
        text += " scored"
    return text + f" · {protocol.unscored} {unscored_unit} unscored"


def ceiling_text(protocol: ProtocolResult) -> str | None:
    """The physicians' agreement among themselves (K-QA), or ``None`` without it."""
    pairs = protocol.info.get("physician_pairs")
    if not isinstance(pairs, dict) or not pairs:
        return None
    parts = [f"κ physicians {key} = {_stat(Stat.model_validate(value))}" for key, value in pairs.items()]
    text = "Physicians among themselves (the ceiling): " + ", ".join(parts)
    fleiss = protocol.info.get("physicians_fleiss")
    if isinstance(fleiss, int | float):
        text += f"; Fleiss' κ of the three = {fleiss:.2f}"
    each = protocol.info.get("physician_vs_majority")
    if isinstance(each, list) and each:
        values = ", ".join(_stat(Stat.model_validate(v)) for v in each)
        text += f"; each physician against the majority (which includes them): {values}"
    return text + "."


def _extra_lines(protocol: ProtocolResult) -> list[str]:
    """Other facts of ``info`` a reader needs: label counts, operating points."""
    lines = []
    info = protocol.info
    if protocol.name == "kqa_nli" and info.get("judge_labels"):
        labels = _count(info, "judge_labels")
        partial = info.get("judge_partial")
        lines.append(
            "Judge labels Entailment/Neutral/Contradiction "
            f"{_labels(labels, ('Entailment', 'Neutral', 'Contradiction'))}"
            + (f" (of which {partial} partial, counted as Neutral)" if partial else "")
        )
    if protocol.name == "radfact" and info.get("phrase_labels"):
        order = ("entailment", "neutral", "contradiction")
        lines.append(
            "Phrase labels entailment/neutral/contradiction "
            f"{_labels(_count(info, 'phrase_labels'), order)}; "
            f"judge {_labels(_count(info, 'judge_phrase_labels'), order)}"
        )
    if protocol.name == "kqa_support":
        missing = [
            f"{key.removesuffix('_not_scored')} {value}"
            for key, value in info.items()
            if key.endswith("_not_scored") and value
        ]
        if missing:
            lines.append("Not scored: " + ", ".join(missing))
    rates = info.get("sentence_rates")
    if isinstance(rates, dict) and rates:
        parts = []
        for name, rate in rates.items():
            who = "judge" if name == "judge" else _baseline(name)
            parts.append(
                f"{who} {rate.get('detected', 0) * 100:.0f} % detected, "
                f"{rate.get('false_flag_rate', 0) * 100:.0f} % false flags"
            )
        lines.append("Sentence level: " + "; ".join(parts))
    return lines


# --- the terminal ---------------------------------------------------------------------------------


def _evidence_table(figures: Sequence[Figure]) -> Table:
    table = Table(header_style="bold")
    table.add_column("figure", ratio=3)
    table.add_column("judge [95% CI]", no_wrap=True)
    table.add_column("baseline", no_wrap=True)
    table.add_column("baseline [95% CI]", no_wrap=True)
    table.add_column("judge − baseline [95% CI]", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    for figure in figures:
        comparisons: list[Comparison | None] = list(figure.baselines) or [None]
        for index, comparison in enumerate(comparisons):
            first = index == 0
            row: list[RenderableType] = [
                Text(_plain(figure.label)) if first else Text(""),
                Text(_stat(figure.judge), style="bold") if first else Text(""),
            ]
            if comparison is None:
                row += [Text("–", style="dim"), Text(""), Text(""), Text("")]
            else:
                mark = verdict(comparison)
                row += [
                    Text(_baseline(comparison.baseline)),
                    Text(_stat(comparison.value)),
                    Text(_stat(comparison.difference, sign=True)),
                    Text(mark, style=_VERDICT_STYLE[mark]),
                ]
            table.add_row(*row, end_section=index == len(comparisons) - 1)
    return table


def _context_table(figures: Sequence[Figure]) -> Table:
    table = Table(header_style="bold", style="dim")
    table.add_column("context (no baseline)", ratio=3)
    table.add_column("judge [95% CI]", no_wrap=True)
    table.add_column("n", justify="right")
    for figure in figures:
        table.add_row(_plain(figure.label), _stat(figure.judge), str(figure.judge.n))
    return table


def protocol_renderable(protocol: ProtocolResult) -> RenderableType:
    """One protocol: title, counts, evidence, ceiling, context, scope."""
    parts: list[RenderableType] = [
        Text(_plain(protocol.title), style="bold underline"),
        Text(_counts(protocol)),
    ]
    evidence = [f for f in protocol.figures if f.evidence]
    context = [f for f in protocol.figures if not f.evidence]
    if not protocol.figures:
        parts.append(
            Text("no figure: fewer than two items were scored (see the unscored count)", style="yellow")
        )
    if evidence:
        parts.append(_evidence_table(evidence))
    ceiling = ceiling_text(protocol)
    if ceiling:
        parts.append(Text(ceiling, style="cyan"))
    for line in _extra_lines(protocol):
        parts.append(Text(line))
    if context:
        parts.append(_context_table(context))
    shows, not_shown = scope_text(protocol)
    scope = Text()
    scope.append("What this shows: ", style="bold")
    scope.append(_plain(shows))
    if not_shown:
        scope.append(" What it does not show: ", style="bold")
        scope.append(not_shown)
    parts.append(scope)
    return Group(*parts)


def _summary(report: CalibrationReport) -> Text:
    beaten = total = 0
    for protocol in report.protocols:
        for figure in protocol.figures:
            if figure.evidence:
                for comparison in figure.baselines:
                    total += 1
                    beaten += verdict(comparison) == "beats"
    return Text(
        f"The judge beats the baseline in {beaten} of {total} comparisons "
        "(95 % interval of judge − baseline above 0).",
        style="bold",
    )


def report_renderable(report: CalibrationReport) -> RenderableType:
    """The whole report (see the module docstring)."""
    head = Text()
    head.append("calibration", style="bold")
    head.append(f" of judge {_judge_name(report)} on {_source(report.data)}")
    if report.seconds is not None:
        head.append(f" · {report.seconds:.0f} s")
    if report.run_id:
        head.append(f" · run {report.run_id}")
    parts: list[RenderableType] = [head]
    if not report.protocols:
        parts.append(Text("no protocol had cases", style="yellow"))
    for protocol in report.protocols:
        parts.append(Text(""))
        parts.append(protocol_renderable(protocol))
    parts.append(Text(""))
    parts.append(_summary(report))
    parts.append(
        Text(
            "beats: the 95 % interval of judge − baseline lies above 0; worse: below 0; unclear: it "
            "contains 0. " + INTERVALS,
            style="dim",
        )
    )
    return Group(*parts)


def print_report(report: CalibrationReport, console: Console | None = None) -> None:
    (console or Console()).print(report_renderable(report))


# --- Markdown ---------------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _headers(reports: Sequence[CalibrationReport]) -> list[str]:
    names = [r.judge for r in reports]
    out = []
    for index, name in enumerate(names):
        label = f"`{name}`"
        if names.count(name) > 1:
            label += f" ({index + 1})"
        out.append(label)
    return out


def _row(label: str, cells: Sequence[str]) -> str:
    return "| " + " | ".join([_cell(label), *(_cell(c) for c in cells)]) + " |"


def _md_comparison(comparison: Comparison | None) -> str:
    if comparison is None:
        return "–"
    mark = verdict(comparison)
    text = f"{_stat(comparison.difference, sign=True)} (baseline {_stat(comparison.value)})"
    return text + (f" **{mark}**" if mark == "beats" else f" {mark}" if mark != "–" else "")


def _figure_keys(protocols: Sequence[ProtocolResult | None], evidence: bool) -> list[tuple[str, str]]:
    seen: dict[str, str] = {}
    for protocol in protocols:
        if protocol is None:
            continue
        for figure in protocol.figures:
            if figure.evidence == evidence and figure.key not in seen:
                seen[figure.key] = figure.label
    return list(seen.items())


def _baseline_keys(protocols: Sequence[ProtocolResult | None], key: str) -> list[str]:
    names: list[str] = []
    for protocol in protocols:
        figure = protocol.figure(key) if protocol is not None else None
        for comparison in figure.baselines if figure is not None else []:
            if comparison.baseline not in names:
                names.append(comparison.baseline)
    return names


def _protocol_markdown(
    name: str, protocols: Sequence[ProtocolResult | None], headers: list[str]
) -> list[str]:
    first = next(p for p in protocols if p is not None)
    lines = [f"### {first.title}", ""]
    lines.append(_row("", headers))
    lines.append("|" + "---|" * (len(headers) + 1))
    about = _ABOUT.get(name)
    unit = about.unit if about else "items"
    unscored_unit = about.unscored_unit if about else "items"
    lines.append(
        _row(
            f"{unit} (unscored {unscored_unit})",
            [f"{p.n} ({p.unscored})" if p is not None else "–" for p in protocols],
        )
    )
    for key, label in _figure_keys(protocols, evidence=True):
        figures = [p.figure(key) if p is not None else None for p in protocols]
        lines.append(_row(label, [_stat(f.judge) if f is not None else "–" for f in figures]))
        for baseline in _baseline_keys(protocols, key):
            cells = []
            for figure in figures:
                comparison = (
                    next((c for c in figure.baselines if c.baseline == baseline), None)
                    if figure is not None
                    else None
                )
                cells.append(_md_comparison(comparison))
            lines.append(_row(f"  judge − {_baseline(baseline)}", cells))
    context = _figure_keys(protocols, evidence=False)
    if context:
        lines.append(_row("*context, no baseline:*", ["" for _ in protocols]))
        for key, label in context:
            figures = [p.figure(key) if p is not None else None for p in protocols]
            lines.append(_row(label, [_stat(f.judge) if f is not None else "–" for f in figures]))
    lines.append("")
    ceilings = [ceiling_text(p) for p in protocols if p is not None]
    distinct = [c for i, c in enumerate(ceilings) if c and c not in ceilings[:i]]
    if len(distinct) == 1:
        lines += [distinct[0], ""]
    else:
        for header, protocol in zip(headers, protocols, strict=True):
            text = ceiling_text(protocol) if protocol is not None else None
            if text:
                lines += [f"{header}: {text}", ""]
    for header, protocol in zip(headers, protocols, strict=True):
        extra = _extra_lines(protocol) if protocol is not None else []
        if extra:
            lines += [f"{header}: " + ". ".join(extra) + ".", ""]
    shows, not_shown = scope_text(first)
    lines.append(
        f"*What this shows:* {shows}" + (f" *What it does not show:* {not_shown}" if not_shown else "")
    )
    lines.append("")
    return lines


def markdown(reports: Sequence[CalibrationReport]) -> str:
    """The reports as Markdown, one column per judge (see the module docstring)."""
    if not reports:
        return ""
    headers = _headers(reports)
    lines = [_row("", headers), "|" + "---|" * (len(headers) + 1)]
    lines.append(_row("data", [_source(r.data) for r in reports]))
    lines.append(_row("run", [r.run_id or "–" for r in reports]))
    lines.append(_row("seconds", [f"{r.seconds:.0f}" if r.seconds is not None else "–" for r in reports]))
    beats = []
    for report in reports:
        comparisons = [c for p in report.protocols for f in p.figures if f.evidence for c in f.baselines]
        won = sum(verdict(c) == "beats" for c in comparisons)
        beats.append(f"{won} of {len(comparisons)}")
    lines.append(_row("comparisons where the judge beats the baseline", beats))
    lines.append("")
    names = [n for n in PROTOCOLS if any(r.protocol(n) is not None for r in reports)]
    names += sorted({p.name for r in reports for p in r.protocols} - set(names))
    for name in names:
        lines += _protocol_markdown(name, [r.protocol(name) for r in reports], headers)
    lines.append(
        "**beats**: the 95 % interval of judge − baseline lies above 0; worse: below 0; unclear: it "
        "contains 0. " + INTERVALS
    )
    return "\n".join(lines) + "\n"
