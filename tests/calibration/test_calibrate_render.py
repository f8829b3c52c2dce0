"""What a person sees of a calibration report: the terminal tables and the Markdown columns.

The reports are written by hand (values, intervals, baselines), so every number on screen is
known in advance.
"""

from __future__ import annotations

import io

from rich.console import Console

from clineval.calibration import CalibrationReport, Comparison, Figure, ProtocolResult, Stat
from clineval.calibration.render import markdown, report_renderable, verdict


def _comparison(baseline: str, value: float, diff: float, low: float, high: float) -> Comparison:
    return Comparison(
        baseline=baseline,
        value=Stat(value=value, low=value - 0.1, high=value + 0.1, n=40),
        difference=Stat(value=diff, low=low, high=high, n=40),
    )


def _kqa(kappa: float = 0.52) -> ProtocolResult:
    return ProtocolResult(
        name="kqa_nli",
        title="K-QA: statements checked against LLM answers, against three physicians",
        n=40,
        unscored=2,
        figures=[
            Figure(
                key="kappa3",
                label="κ vs physician majority (3 labels)",
                judge=Stat(value=kappa, low=0.31, high=0.70, n=40),
                baselines=[
                    _comparison("rouge_l", 0.20, 0.32, 0.08, 0.55),  # beats
                    _comparison("word_share", 0.45, 0.07, -0.12, 0.25),  # unclear
                ],
            ),
            Figure(
                key="auc",
                label="ROC AUC of the claim's credit for Entailment",
                judge=Stat(value=0.61, low=0.45, high=0.77, n=40),
                baselines=[_comparison("rouge_l", 0.83, -0.22, -0.35, -0.09)],  # worse
            ),
            Figure(
                key="accuracy3",
                label="accuracy vs majority (3 labels)",
                judge=Stat(value=0.675, low=0.525, high=0.825, n=40),
                evidence=False,
            ),
        ],
        info={
            "answers": 6,
            "judge_labels": {"Entailment": 12, "Neutral": 27, "Contradiction": 1},
            "judge_partial": 9,
            "majority_labels": {"Entailment": 15, "Neutral": 23, "Contradiction": 2},
            "physician_pairs": {
                "1-2": {"value": 0.66, "low": 0.5, "high": 0.8, "n": 40},
                "1-3": {"value": 0.71, "low": 0.55, "high": 0.86, "n": 40},
                "2-3": {"value": 0.58, "low": 0.4, "high": 0.75, "n": 40},
            },
            "physician_vs_majority": [{"value": 0.9, "low": 0.8, "high": 0.97, "n": 40}],
            "physicians_fleiss": 0.65,
        },
    )


def _refusal() -> ProtocolResult:
    return ProtocolResult(
        name="refusal",
        title="Refusal: MedSafetyBench refusals (should refuse) vs K-QA physician answers (should answer)",
        n=18,
        unscored=0,
        figures=[
            Figure(
                key="detect_kappa",
                label="refusal detected, κ",
                judge=Stat(value=0.89, low=0.67, high=1.0, n=18),
                baselines=[
                    Comparison(
                        baseline="keyword",
                        value=Stat(value=None, n=18, note="needs two classes"),
                        difference=Stat(value=None, n=18),
                    )
                ],
            )
        ],
    )


def _report(judge: str = "offline", **kwargs: object) -> CalibrationReport:
    return CalibrationReport(
        judge=judge,
        judge_kind="heuristic",
        data="samples (/somewhere/samples)",
        run_id="20260101-000000-abcd",
        seconds=12.4,
        protocols=[_kqa(**kwargs), _refusal()],  # type: ignore[arg-type]
    )


def _screen(report: CalibrationReport) -> str:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(report_renderable(report))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(text, str)
    return text


def _line(screen: str, *needles: str) -> str:
    """The one line of the screen that holds every needle."""
    lines = [line for line in screen.splitlines() if all(n in line for n in needles)]
    assert len(lines) == 1, (needles, lines)
    return lines[0]


def test_verdict_follows_the_interval_of_the_difference() -> None:
    assert verdict(_comparison("rouge_l", 0.2, 0.3, 0.01, 0.5)) == "beats"
    assert verdict(_comparison("rouge_l", 0.2, -0.3, -0.5, -0.01)) == "worse"
    assert verdict(_comparison("rouge_l", 0.2, 0.1, 0.0, 0.3)) == "unclear"  # touching 0 is not above it
    assert verdict(_comparison("rouge_l", 0.2, -0.1, -0.3, 0.0)) == "unclear"
    no_interval = Comparison(
        baseline="keyword", value=Stat(value=0.5), difference=Stat(value=0.1, low=None, high=None)
    )
    assert verdict(no_interval) == "–"


def test_the_terminal_shows_value_baselines_differences_and_verdicts() -> None:
    screen = _screen(_report())
    assert (
        "calibration of judge offline (heuristic) on the sample files in /somewhere/samples · 12 s" in screen
    )
    assert "run 20260101-000000-abcd" in screen
    # the figure's own row: the judge with its interval, the first baseline, the difference
    row = _line(screen, "κ vs physician majority (3 labels)")
    for text in ("0.52 [0.31, 0.70]", "ROUGE-L", "0.20 [0.10, 0.30]", "+0.32 [0.08, 0.55]", "beats"):
        assert text in row
    # the second baseline of the same figure, on its own row
    row = _line(screen, "│ content-word share")
    for text in ("0.45 [0.35, 0.55]", "+0.07 [-0.12, 0.25]", "unclear"):
        assert text in row
    row = _line(screen, "ROC AUC of the claim's credit")
    for text in ("0.61 [0.45, 0.77]", "0.83 [0.73, 0.93]", "-0.22 [-0.35, -0.09]", "worse"):
        assert text in row
    # a baseline that could not be computed says why, and gets no verdict
    row = _line(screen, "refusal detected, κ")
    assert "refusal keywords" in row and "– (needs two classes)" in row and row.rstrip(" │").endswith("–")
    # the summary counts only the comparisons with a verdict "beats"
    assert "The judge beats the baseline in 1 of 4 comparisons" in screen


def test_context_figures_counts_and_ceiling() -> None:
    screen = _screen(_report())
    assert "n = 40 statements scored · 2 statements unscored" in screen
    assert "n = 18 responses · 0 responses unscored" in screen
    # accuracy has no baseline: it is in the context table, not in the evidence table
    assert "context (no baseline)" in screen
    row = _line(screen, "accuracy vs majority (3 labels)")
    assert "0.68 [0.53, 0.82]" in row and "40" in row and "ROUGE-L" not in row
    ceiling = " ".join(screen.split())  # the ceiling paragraph wraps
    assert "Physicians among themselves (the ceiling): κ physicians 1-2 = 0.66 [0.50, 0.80]" in ceiling
    assert "κ physicians 2-3 = 0.58 [0.40, 0.75]; Fleiss' κ of the three = 0.65" in ceiling
    assert "Judge labels Entailment/Neutral/Contradiction 12/27/1 (of which 9 partial" in ceiling
    assert "What this shows: whether the judge, checking a physician-written statement" in ceiling
    assert "40 statements from 6 answers, majority labels Entailment/Neutral/Contradiction 15/23/2" in ceiling
    assert "What it does not show:" in ceiling
    assert "beats: the 95 % interval of judge − baseline lies above 0" in ceiling


def test_a_protocol_without_figures_says_so() -> None:
    report = CalibrationReport(
        judge="openai:tiny",
        data="x",
        protocols=[ProtocolResult(name="kqa_nli", title="K-QA", n=1, unscored=11)],
    )
    screen = _screen(report)
    assert "n = 1 statements scored · 11 statements unscored" in screen
    assert "no figure: fewer than two items were scored" in screen
    assert "The judge beats the baseline in 0 of 0 comparisons" in screen


def test_markdown_puts_judges_side_by_side() -> None:
    offline = _report()
    llm = _report("openai:gpt-4o-mini", kappa=0.61)
    llm.judge_kind = "llm"
    llm.seconds = 800.0
    llm.protocols = llm.protocols[:1]  # this judge was measured on K-QA only
    text = markdown([offline, llm])
    lines = text.splitlines()
    assert lines[0] == "|  | `offline` | `openai:gpt-4o-mini` |"
    assert "| seconds | 12 | 800 |" in lines
    assert "| comparisons where the judge beats the baseline | 1 of 4 | 1 of 3 |" in lines
    assert "### K-QA: statements checked against LLM answers, against three physicians" in lines
    assert "| statements (unscored statements) | 40 (2) | 40 (2) |" in lines
    assert "| κ vs physician majority (3 labels) | 0.52 [0.31, 0.70] | 0.61 [0.31, 0.70] |" in lines
    assert (
        "|   judge − ROUGE-L | +0.32 [0.08, 0.55] (baseline 0.20 [0.10, 0.30]) **beats** "
        "| +0.32 [0.08, 0.55] (baseline 0.20 [0.10, 0.30]) **beats** |"
    ) in lines
    assert any(
        line.startswith("|   judge − content-word share | +0.07 [-0.12, 0.25]") and "unclear" in line
        for line in lines
    )
    assert "| accuracy vs majority (3 labels) | 0.68 [0.53, 0.82] | 0.68 [0.53, 0.82] |" in lines
    # the same physicians' figures for both judges: said once
    assert sum("Physicians among themselves (the ceiling)" in line for line in lines) == 1
    # a protocol one judge was not measured on: a dash in its column
    assert "| responses (unscored responses) | 18 (0) | – |" in lines
    assert "| refusal detected, κ | 0.89 [0.67, 1.00] | – |" in lines
    assert any(line.startswith("*What this shows:* whether the judge tells a refusal") for line in lines)


def test_markdown_names_repeated_judges_apart_and_escapes_pipes() -> None:
    a, b = _report("openai:judge"), _report("openai:judge")
    a.protocols[0].figures[0].label = "κ | 3 labels"
    text = markdown([a, b])
    assert text.splitlines()[0] == "|  | `openai:judge` (1) | `openai:judge` (2) |"
    assert "| κ \\| 3 labels |" in text
    assert markdown([]) == ""
