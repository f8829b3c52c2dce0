"""The figures the docs quote about this example, measured by running it.

    python examples/tumor_board/figures.py           # measure; say whether the docs agree (exit 1 if not)
    python examples/tumor_board/figures.py --write   # measure, then rewrite figures.json and the docs
    python examples/tumor_board/figures.py --docs-only   # the docs from figures.json (wording changes)

It simulates the four scenarios (2 trials each, the scripted user) and scores them offline
with the metrics of simulate.yaml, twice: the system as shipped, and with its deliberate
weakness fixed (``report_current_status=True``: PatientHistory also reports the undated
current status). The means go to figures.json and into the blocks between
``<!-- tumor-board-figures:NAME -->`` and ``<!-- /tumor-board-figures -->`` in this
folder's README.md and in docs/conversations.md, so the docs say what the example does.
tests/examples/test_tumor_board_suite.py checks the figures as shipped against figures.json
and the docs against the figures.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FIGURES = HERE / "figures.json"
DOCS = (HERE / "README.md", ROOT / "docs" / "conversations.md")
BLOCK = re.compile(
    r"(<!-- tumor-board-figures:(?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- /tumor-board-figures -->)", re.S
)

#: What is measured: (figure name, metric, sub-score or None for the metric's value).
MEASURED = (
    ("agent_selection_accuracy", "agent_selection_accuracy", None),
    ("tool_selection_accuracy", "tool_selection_accuracy", None),
    ("history_tbfact_f1", "history_tbfact", None),
    ("history_tbfact_precision", "history_tbfact", "precision"),
    ("history_tbfact_recall", "history_tbfact", "recall"),
    ("history_support", "history_support", None),
    ("radiology_relevancy", "radiology_relevancy", None),
)


def measure(*, report_current_status: bool = False) -> dict[str, Any]:
    """Simulate and score the example once; the mean of each measured figure (2 decimals)."""
    from clineval.conversations.simulate import load_simulation_config, simulate_and_score

    config = load_simulation_config(HERE / "simulate.yaml")
    with tempfile.TemporaryDirectory(prefix="tumor-board-") as tmp:
        system = config.system.model_copy(
            update={"args": {**config.system.args, "report_current_status": report_current_status}}
        )
        config = config.model_copy(update={"out": str(Path(tmp) / "saved"), "system": system})
        result = simulate_and_score(config, store=str(Path(tmp) / "runs.db"), progress=False)
        return figures_of(result.results, conversations=len(result.cases))


def figures_of(results: Any, *, conversations: int) -> dict[str, Any]:
    """The measured figures from a run's results."""
    values: dict[str, list[float]] = {name: [] for name, _, _ in MEASURED}
    unscored: set[str] = set()
    for record in results:
        for name, metric, sub in MEASURED:
            if record.metric != metric:
                continue
            value = record.score.value if sub is None else (record.score.sub_scores or {}).get(sub)
            if value is not None:
                values[name].append(float(value))
    for record in results:
        if record.score.status != "scored":
            unscored.add(record.metric)
    out: dict[str, Any] = {"conversations": conversations}
    out.update({name: round(sum(v) / len(v), 2) if v else None for name, v in values.items()})
    out["unscored"] = sorted(unscored)
    return out


def render(figures: dict[str, Any]) -> dict[str, str]:
    """The text of each docs block."""
    shipped, fixed = figures["as_shipped"], figures["current_status_reported"]

    def f(value: float) -> str:
        return f"{value:.2f}"

    blocks = {
        "summary": (
            f"Offline, {shipped['conversations']} conversations: agent and tool selection accuracy "
            f"{f(shipped['agent_selection_accuracy'])} and {f(shipped['tool_selection_accuracy'])}; "
            f"PatientHistory TBFact F1 {f(shipped['history_tbfact_f1'])} (recall "
            f"{f(shipped['history_tbfact_recall'])}: its timeline drops the undated current status, the "
            f"example's deliberate weakness; {f(fixed['history_tbfact_recall'])} once it reports it), "
            f"source support {f(shipped['history_support'])} (the Healthcare Agent Orchestrator evaluation "
            f"reports 97 % for its agent); Radiology relevancy {f(shipped['radiology_relevancy'])}; the "
            "three ratings unscored until an LLM judge is given. Measured by "
            "`python examples/tumor_board/figures.py`."
        ),
        "weakness": (
            f"* `agent_tbfact` for PatientHistory against `data/references`: recall (omissions). With the\n"
            f"  offline judge, recall is {f(shipped['history_tbfact_recall'])} as shipped and "
            f"{f(fixed['history_tbfact_recall'])} when the current status is\n"
            f"  appended to the timeline (F1 {f(shipped['history_tbfact_f1'])} and "
            f"{f(fixed['history_tbfact_f1'])}; scripted user, {shipped['conversations']} conversations;\n"
            "  `python figures.py` measures both);\n"
        ),
        "scores": (
            f"With the offline judge and the scripted user, the conversations above score "
            f"{f(shipped['agent_selection_accuracy'])} on\n"
            f"`agent_selection_accuracy` and {f(shipped['radiology_relevancy'])} on "
            f"`agent_context_relevancy(agent=Radiology)`, {f(shipped['history_tbfact_f1'])} on\n"
            f"`agent_tbfact` and {f(shipped['history_support'])} on `agent_source_support` for "
            "PatientHistory (means over the conversations).\n"
        ),
    }
    blocks["summary"] = textwrap.fill(blocks["summary"], width=95, break_on_hyphens=False) + "\n"
    return blocks


def rewrite(text: str, blocks: dict[str, str]) -> str:
    """``text`` with each marked block's body replaced by its rendering."""

    def body(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in blocks:
            raise SystemExit(f"unknown figures block {name!r}; known: {', '.join(blocks)}")
        return match.group(1) + blocks[name] + match.group(4)

    return BLOCK.sub(body, text)


def stale_docs(figures: dict[str, Any]) -> list[Path]:
    """The docs whose blocks differ from ``figures``."""
    blocks = render(figures)
    texts = {path: path.read_text(encoding="utf-8") for path in DOCS}
    return [path for path, text in texts.items() if rewrite(text, blocks) != text]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite figures.json and the docs' blocks")
    parser.add_argument(
        "--docs-only", action="store_true", help="rewrite the docs' blocks from figures.json (no measuring)"
    )
    args = parser.parse_args()
    if args.docs_only:
        blocks = render(json.loads(FIGURES.read_text(encoding="utf-8")))
        for path in DOCS:
            path.write_text(rewrite(path.read_text(encoding="utf-8"), blocks), encoding="utf-8")
        return
    sys.path.insert(0, str(HERE))  # system.py, as the simulation file names it
    figures = {
        "as_shipped": measure(),
        "current_status_reported": measure(report_current_status=True),
    }
    print(json.dumps(figures, indent=2))
    if args.write:
        FIGURES.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
        blocks = render(figures)
        for path in DOCS:
            path.write_text(rewrite(path.read_text(encoding="utf-8"), blocks), encoding="utf-8")
        print(f"wrote {FIGURES.name} and the figures in {', '.join(str(p.relative_to(ROOT)) for p in DOCS)}")
        return
    stale = stale_docs(figures)
    if stale:
        names = ", ".join(str(p.relative_to(ROOT)) for p in stale)
        print(f"stale: {names}; run with --write", file=sys.stderr)
        sys.exit(1)
    print("the docs quote these figures")


if __name__ == "__main__":
    main()
