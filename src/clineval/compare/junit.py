"""A run's per-case results and its gates as a JUnit XML report, for CI test viewers.

The report has one ``<testsuite>`` per metric with one ``<testcase>`` per case:

* ``<error>`` with the message when the score is an error (the case could not be scored);
* ``<skipped>`` when the metric does not apply to the case, or has no result for it;
* ``<failure>`` when the score's label is ``fail`` (or ``failed``), or the metric is
  binary (every scored value 0 or 1) and the case has the bad value: 0 where higher is
  better, 1 where lower is better (``failure``);
* otherwise the case passes. The value, label and sub-scores are in ``<system-out>``.

Then a ``gates`` testsuite with one ``<testcase>`` per gate (``<failure>`` when it failed).
Every ``<testsuite>`` and the root ``<testsuites>`` carry ``tests``, ``failures``,
``errors`` and ``skipped`` counts and the time in seconds.

Times are wall times, never sums of concurrent work: a testcase's is its score's duration;
a metric's testsuite's is the time during which at least one of its scores was being
computed (the union of the intervals that end at each result's ``created_at``); the
root's is the time during which the run was calling the agent or scoring (each case's
agent call ends where its first score starts). Results stored without a time fall back
to the longest single duration (and the root to the run's start to finish).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from clineval.compare.comparison import lower_is_better_metric
from clineval.compare.gates import GateResult
from clineval.compare.stats import is_binary
from clineval.errors import ConfigError
from clineval.model import ResultRecord, Score
from clineval.redaction import redact
from clineval.results.result import EvalResult

FAIL_LABELS = ("fail", "failed")
_COUNTS = ("tests", "failures", "errors", "skipped")


Interval = tuple[float, float]


def wall_seconds(intervals: Sequence[Interval]) -> float:
    """The length of the union of ``(start, end)`` intervals: the wall time they cover."""
    total = 0.0
    current: Interval | None = None
    for start, end in sorted(intervals):
        if current is None or start > current[1]:
            if current is not None:
                total += current[1] - current[0]
            current = (start, end)
        elif end > current[1]:
            current = (current[0], end)
    if current is not None:
        total += current[1] - current[0]
    return total


def _interval(record: ResultRecord) -> Interval:
    return (record.created_at - record.duration_s, record.created_at)


def _timed(records: Sequence[ResultRecord]) -> bool:
    return all(r.created_at > 0 for r in records)


def _suite_seconds(records: Sequence[ResultRecord]) -> float:
    if not records:
        return 0.0
    if not _timed(records):
        return max(r.duration_s for r in records)
    return wall_seconds([_interval(r) for r in records])


def _run_seconds(result: EvalResult) -> float:
    """The run's wall time: its scores, and each case's agent call before its first score."""
    records = list(result.results)
    if not records or not _timed(records):
        run = result.run
        if run.finished_at is not None and run.finished_at >= run.created_at > 0:
            return run.finished_at - run.created_at
        return _suite_seconds(records)
    intervals = [_interval(r) for r in records]
    first: dict[str, float] = {}
    for start, record in zip((i[0] for i in intervals), records, strict=True):
        first[record.case_id] = min(start, first.get(record.case_id, start))
    for case in result.cases:
        agent = case.agent_run
        if agent is not None and agent.latency_s and case.id in first:
            intervals.append((first[case.id] - agent.latency_s, first[case.id]))
    return wall_seconds(intervals)


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else text
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _output(score: Score) -> str:
    lines = []
    if score.value is not None:
        lines.append(f"value: {score.value:g}")
    if score.label:
        lines.append(f"label: {score.label}")
    lines += [f"{name}: {value:g}" for name, value in score.sub_scores.items() if value is not None]
    if score.explanation:
        lines.append(f"explanation: {score.explanation}")
    return "\n".join(lines)


def _suite(name: str) -> ET.Element:
    return ET.Element("testsuite", {"name": name})


def _finish(suite: ET.Element, counts: dict[str, int], seconds: float) -> None:
    for key in _COUNTS:
        suite.set(key, str(counts[key]))
    suite.set("time", f"{seconds:.3f}")


def _case(
    suite: ET.Element, metric: str, case_id: str, record: ResultRecord | None, bad_value: float | None
) -> str:
    """Add one testcase; return its outcome: tests (passed), failures, errors or skipped."""
    element = ET.SubElement(
        suite,
        "testcase",
        {
            "name": case_id,
            "classname": f"clineval.{metric}",
            "time": f"{record.duration_s if record else 0.0:.3f}",
        },
    )
    if record is None:
        ET.SubElement(element, "skipped", {"message": "no result for this case"})
        return "skipped"
    score = record.score
    outcome = "tests"
    if score.status == "error":
        error = score.error or "unscored"
        child = ET.SubElement(element, "error", {"message": _first_line(error), "type": "unscored"})
        child.text = error
        outcome = "errors"
    elif score.status == "not_applicable":
        ET.SubElement(element, "skipped", {"message": _first_line(score.explanation or "not applicable")})
        outcome = "skipped"
    elif (score.label or "").lower() in FAIL_LABELS or (bad_value is not None and score.value == bad_value):
        shown = "–" if score.value is None else f"{score.value:g}"
        label = f" ({score.label})" if score.label else ""
        ET.SubElement(element, "failure", {"message": f"{metric} = {shown}{label}", "type": "failed"})
        outcome = "failures"
    text = _output(score)
    if text:
        ET.SubElement(element, "system-out").text = text
    return outcome


def _metric_suite(
    result: EvalResult, metric: str, records: dict[str, ResultRecord], case_ids: Sequence[str]
) -> tuple[ET.Element, dict[str, int], float]:
    suite = _suite(metric)
    scored = [
        r.score.value for r in records.values() if r.score.status == "scored" and r.score.value is not None
    ]
    bad_value: float | None = None
    if is_binary(scored):
        bad_value = 1.0 if lower_is_better_metric(metric, [result.run]) else 0.0
    counts = dict.fromkeys(_COUNTS, 0)
    for case_id in case_ids:
        outcome = _case(suite, metric, case_id, records.get(case_id), bad_value)
        counts["tests"] += 1
        if outcome != "tests":
            counts[outcome] += 1
    seconds = _suite_seconds(list(records.values()))
    _finish(suite, counts, seconds)
    return suite, counts, seconds


def _gates_suite(gates: Sequence[GateResult]) -> tuple[ET.Element, dict[str, int]]:
    suite = _suite("gates")
    counts = dict.fromkeys(_COUNTS, 0)
    for gate in gates:
        element = ET.SubElement(
            suite, "testcase", {"name": gate.name, "classname": "clineval.gates", "time": "0.000"}
        )
        counts["tests"] += 1
        if not gate.passed:
            ET.SubElement(element, "failure", {"message": gate.message, "type": "gate"})
            counts["failures"] += 1
        lines = [gate.message]
        if gate.observed is not None:
            lines.append(f"observed: {gate.observed:g}")
        if gate.threshold is not None:
            lines.append(f"threshold: {gate.threshold:g}")
        ET.SubElement(element, "system-out").text = "\n".join(lines)
    _finish(suite, counts, 0.0)
    return suite, counts


def junit_report(result: EvalResult, gates: Sequence[GateResult] = ()) -> ET.Element:
    """The ``<testsuites>`` element of a run's per-case results and its gates (see the module docstring)."""
    root = ET.Element("testsuites", {"name": f"clineval run {result.run.id}"})
    by_metric: dict[str, dict[str, ResultRecord]] = {}
    for record in result.results:
        by_metric.setdefault(record.metric, {})[record.case_id] = record
    case_ids = list(dict.fromkeys([*(c.id for c in result.cases), *(r.case_id for r in result.results)]))
    totals = dict.fromkeys(_COUNTS, 0)
    for metric in dict.fromkeys([*result.run.metrics, *by_metric]):
        suite, counts, _ = _metric_suite(result, metric, by_metric.get(metric, {}), case_ids)
        root.append(suite)
        for key in _COUNTS:
            totals[key] += counts[key]
    suite, counts = _gates_suite(gates)
    root.append(suite)
    for key in _COUNTS:
        totals[key] += counts[key]
    _finish(root, totals, _run_seconds(result))
    for element in root.iter():  # no secret in a CI artefact (see clineval.redaction)
        if element.text:
            element.text = redact(element.text)
        for name, value in element.attrib.items():
            element.set(name, redact(value))
    ET.indent(root)
    return root


def write_junit(path: str | Path, result: EvalResult, gates: Sequence[GateResult] = ()) -> Path:
    """Write the report to ``path`` (its folder is created); a :class:`ConfigError` if it cannot be."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        ET.ElementTree(junit_report(result, gates)).write(target, encoding="utf-8", xml_declaration=True)
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        raise ConfigError(
            f"--junit {path}: cannot write ({reason}); give --junit a file in a folder you can write"
        ) from None
    return target
