"""How many reviewed cases give a κ interval of a given width: the simulated tables of
docs/reviewing.md ("How many cases").

Two raters (a reviewer and the judge) say yes or no with the same rate of yes and a true
Cohen's κ; each case has one item (a case-level scale) or five facts whose labels are
correlated 0.3 within a case. Each cell is the width of the 95 % interval of κ computed as
``clineval agreement --reviews`` computes it (cases resampled with all their items): the
median and the 10th–90th percentile over 200 simulations of 1,000 resamples, seed 0. The
model is described in :mod:`clineval.review.sample_size`. A second table gives the cases
needed for a width of 0.3, 0.2 and 0.1, read off those medians (interpolated between two
rows, log width linear in log cases; beyond 400 cases by 1/√n).

    python validation/review_sample_size.py               # print the tables
    python validation/review_sample_size.py --write-docs  # also replace the block in docs/reviewing.md

``--write-docs`` replaces what is between ``<!-- sample-size:start -->`` and
``<!-- sample-size:end -->`` in docs/reviewing.md and nothing else; when the file has no such
block, a "## How many cases" section with it is added at the end (the file is created if
it does not exist).

Run time: 2 min 1 s on this repository's 2-core machine for the run that wrote the docs
(3 to 4 minutes while other work ran beside it); it is not part of the test suite
(tests/review/test_sample_size.py recomputes one cell of the table).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from clineval.review.sample_size import WidthResult, simulate_widths

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "reviewing.md"
START, END = "<!-- sample-size:start -->", "<!-- sample-size:end -->"
HEADING = "## How many cases"

N_CASES = (10, 20, 30, 50, 100, 200, 400)
KAPPAS = (0.4, 0.6, 0.8)
RATES = (0.5, 0.8)
FACTS = 5
CORRELATION = 0.3
TARGETS = (0.3, 0.2, 0.1)
SEED = 0
N_SIMS = 200
N_RESAMPLES = 1000

INTRO = (
    "How wide will the 95 % interval of κ (the judge against the reviewers, yes or no) be after "
    "a given number of reviewed cases? The tables below are simulated, not measured: two raters "
    "say yes with the same rate and agree with a true Cohen's κ; a case has one item (a case "
    "scale) or five facts whose labels are correlated 0.3 within the case; each interval is "
    "computed as `clineval agreement --reviews` computes it, resampling whole cases "
    f"({N_SIMS} simulations of {N_RESAMPLES:,} resamples, seed {SEED}; the model is described "
    "in `clineval.review.sample_size`)."
)


@dataclass(frozen=True)
class Setting:
    kappa: float
    rate: float
    items: int = 1
    correlation: float = 0.0

    @property
    def label(self) -> str:
        return f"κ {self.kappa:g}, yes {self.rate * 100:g} %"

    @property
    def level(self) -> str:
        if self.items == 1:
            return "case level"
        return f"{self.items} facts per case, correlation {self.correlation:g}"


CASE_LEVEL = tuple(Setting(k, r) for r in RATES for k in KAPPAS)
FACT_LEVEL = tuple(Setting(k, r, FACTS, CORRELATION) for r in RATES for k in KAPPAS)


def cell(setting: Setting, n_cases: int) -> WidthResult:
    """One cell of the width tables."""
    return simulate_widths(
        n_cases,
        kappa=setting.kappa,
        positive_rate=setting.rate,
        items_per_case=setting.items,
        within_case_correlation=setting.correlation,
        n_sims=N_SIMS,
        n_resamples=N_RESAMPLES,
        seed=SEED,
    )


def _width(value: float) -> str:
    return f"{value:.2f}" if math.isfinite(value) else "∞"


def format_cell(result: WidthResult) -> str:
    """``median (10th–90th percentile)``, and how many simulations gave no usable interval
    (they count as wider than any: ∞)."""
    text = f"{_width(result.median)} ({_width(result.p10)}–{_width(result.p90)})"
    missing = result.n_sims - result.usable
    return f"{text}; {missing} none" if missing else text


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


Results = dict[tuple[Setting, int], WidthResult]


def simulate_all(settings: Sequence[Setting]) -> Results:
    """Every cell of the width tables."""
    results: Results = {}
    for setting in settings:
        started = time.monotonic()
        for n in N_CASES:
            results[setting, n] = cell(setting, n)
        _log(f"  {setting.level}, {setting.label}: {time.monotonic() - started:.1f} s")
    return results


def width_table(title: str, settings: Sequence[Setting], results: Results) -> str:
    lines = [
        f"**{title}**: width of the 95 % interval of κ, median (10th–90th percentile)",
        "",
        "| cases | " + " | ".join(s.label for s in settings) + " |",
        "|---:|" + "---|" * len(settings),
    ]
    for n in N_CASES:
        lines.append(f"| {n} | " + " | ".join(format_cell(results[s, n]) for s in settings) + " |")
    return "\n".join(lines) + "\n"


def _round_up(n: float) -> int:
    """Up to two significant figures: 61 → 61, 316.2 → 320, 1290 → 1300."""
    whole = math.ceil(n - 1e-9)
    if whole < 100:
        return whole
    unit = 10 ** (len(str(whole)) - 2)
    return int(-(-whole // unit) * unit)


def needed(setting: Setting, target: float, results: Results) -> tuple[int, str]:
    """Cases for a median width of ``target``, read off the simulated medians: interpolated
    between two rows (log width linear in log cases), or beyond the last row by 1/√n
    (marked ``*``). ``(10, "≤")`` when the first row is narrow enough already."""
    medians = [results[setting, n].median for n in N_CASES]
    # the first row from which on every row is narrow enough (with few cases a median can be
    # narrower than the next one's, or infinite)
    first = len(N_CASES)
    while first > 0 and medians[first - 1] <= target:
        first -= 1
    if first == 0:
        return N_CASES[0], "≤"
    if first == len(N_CASES):
        if not math.isfinite(medians[-1]):
            raise SystemExit(f"{setting.level}, {setting.label}: no finite width to extrapolate from")
        return _round_up(N_CASES[-1] * (medians[-1] / target) ** 2), "*"
    n0, m0, n1, m1 = N_CASES[first - 1], medians[first - 1], N_CASES[first], medians[first]
    if not math.isfinite(m0) or m1 <= 0:
        return n1, ""
    slope = (math.log(n1) - math.log(n0)) / (math.log(m1) - math.log(m0))
    return _round_up(math.exp(math.log(n0) + (math.log(target) - math.log(m0)) * slope)), ""


def needed_table(settings: Sequence[Setting], results: Results) -> str:
    lines = [
        "**Cases needed** for a median width of "
        + ", ".join(f"{t:g}" for t in TARGETS)
        + ", read off the medians above (interpolated between two rows, log width against log "
        f"cases; * beyond {N_CASES[-1]} cases, by 1/√cases), rounded up to two significant figures",
        "",
        "| items | κ, rate of yes | " + " | ".join(f"width {t:g}" for t in TARGETS) + " |",
        "|---|---|" + "---:|" * len(TARGETS),
    ]
    for s in settings:
        shown = []
        for t in TARGETS:
            n, mark = needed(s, t, results)
            shown.append(f"≤ {n}" if mark == "≤" else f"{n:,}{mark}")
        lines.append(f"| {s.level} | {s.label} | " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"


def markdown(results: Results) -> str:
    fact_title = f"Fact level ({FACTS} facts per case, within-case correlation {CORRELATION:g})"
    return "\n".join(
        [
            width_table("Case level", CASE_LEVEL, results),
            width_table(fact_title, FACT_LEVEL, results),
            f"'k none': in k of the {N_SIMS} simulations there was no usable interval: κ undefined "
            "(both said the same of every item), or an interval of no width (every resample gave "
            "the same κ: the two agreed on every item, κ 1.00 from 1.00 to 1.00, or one of them "
            "said the same of every item). Such a simulation counts as wider than any (∞): it "
            "says nothing of how precise κ is. Widths fall about as 1/√cases: four times the cases "
            "halve the interval.",
            "",
            needed_table(CASE_LEVEL + FACT_LEVEL, results),
        ]
    )


def write_docs(block: str, command: str, doc: Path = DOC) -> None:
    stamp = f"<!-- generated by: {command} -->\n\n"
    marked = START + "\n" + stamp + block.rstrip() + "\n\n" + END
    if not doc.exists():
        doc.write_text(f"{HEADING}\n\n{INTRO}\n\n{marked}\n", encoding="utf-8")
        return
    text = doc.read_text(encoding="utf-8")
    if START in text and END in text:
        head, rest = text.split(START, 1)
        _, tail = rest.split(END, 1)
        doc.write_text(head + marked + tail, encoding="utf-8")
        return
    if START in text or END in text:
        sys.exit(f"{doc} has only one of {START} and {END}: add the other, or remove it")
    doc.write_text(text.rstrip() + f"\n\n{HEADING}\n\n{INTRO}\n\n{marked}\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--write-docs", action="store_true", help="replace the sample-size block of docs/reviewing.md"
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    block = markdown(simulate_all(CASE_LEVEL + FACT_LEVEL))
    print(block)
    _log(f"done in {time.monotonic() - started:.0f} s")
    if args.write_docs:
        write_docs(block, "python validation/review_sample_size.py --write-docs")
        print(f"updated {DOC}")


if __name__ == "__main__":
    main()
