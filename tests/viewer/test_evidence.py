"""Per-metric evidence fragments (clineval.viewer.evidence), asserted on the parsed HTML.

Two kinds of input: hand-made results whose every figure is known, and results produced by
the real metrics (the offline judge, the trajectory metrics, the conversation metrics of the
Healthcare Agent Orchestrator evaluation, a radiology-benchmark run), so that the views
follow what the metrics actually store.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from markupsafe import Markup

import clineval
from clineval.conversations import Conversation, Message, ToolCallRecord, conversation_to_case
from clineval.model import Case, ResultRecord, Score
from clineval.viewer.evidence import (
    EVIDENCE_CSS,
    EVIDENCE_JS,
    locate,
    render_case_texts,
    render_evidence,
)

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'

# --------------------------------------------------------------------------- a small DOM


VOID = {"br", "img", "hr", "input", "meta", "link", "wbr", "source", "col", "area", "base", "embed"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text for c in self.children)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def iter(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            if isinstance(child, Node):
                yield from child.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None) -> list[Node]:
        return [
            n
            for n in self.iter()
            if (tag is None or n.tag == tag) and (cls is None or cls in n.classes) and n is not self
        ]

    def find(self, tag: str | None = None, cls: str | None = None) -> Node:
        found = self.find_all(tag, cls)
        assert found, f"no <{tag or '*'} class={cls}>"
        return found[0]

    def by_id(self, ident: str) -> Node:
        for n in self.iter():
            if n.attrs.get("id") == ident:
                return n
        raise AssertionError(f"no element with id {ident!r}")


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("root", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(html: str) -> Node:
    parser = _Parser()
    parser.feed(str(html))
    parser.close()
    assert parser.stack == [parser.root], "unclosed elements"
    ids = [n.attrs["id"] for n in parser.root.iter() if "id" in n.attrs]
    assert len(ids) == len(set(ids)), "duplicate ids"
    return parser.root


def assert_safe(html: str) -> Node:
    """No element or attribute came from the XSS strings; they are there as text."""
    tree = parse(html)
    assert not tree.find_all("script")
    assert not tree.find_all("img")
    assert not any(k.startswith("on") for n in tree.iter() for k in n.attrs)
    return tree


def record(metric: str, score: Score, case_id: str = "c1") -> ResultRecord:
    return ResultRecord(run_id="r1", case_id=case_id, metric=metric, score=score)


def fact(
    direction: str, i: int, text: str, label: str, reason: str | None, evidence: str, **kw: Any
) -> dict[str, Any]:
    return {
        "direction": direction,
        "id": i,
        "fact": text,
        "category": kw.get("category", "treatment"),
        "importance": kw.get("importance", "high"),
        "label": label,
        "reason": reason,
        "evidence": evidence,
        "explanation": kw.get("explanation", ""),
        "support": kw.get("support"),
    }


# --------------------------------------------------------------------------- hand-made TBFact

RESPONSE = "Start apixaban 5 mg twice daily. Stop aspirin. " + SCRIPT
REFERENCE = "Start apixaban 5 mg twice daily for atrial fibrillation. Continue aspirin 75 mg daily. " + IMG


def tbfact_score() -> Score:
    facts = [
        fact(
            "precision", 1, "Apixaban 5 mg twice daily.", "entailed", None, "Start apixaban 5 mg twice daily"
        ),
        fact(
            "precision", 2, "Aspirin is stopped.", "not_entailed", "incorrect", "Continue aspirin 75 mg daily"
        ),
        fact("precision", 3, SCRIPT, "not_entailed", "missing", ""),
        fact(
            "recall",
            1,
            "Apixaban for atrial fibrillation.",
            "partial",
            "missing",
            "Start apixaban 5 mg twice daily",
        ),
        fact(
            "recall",
            2,
            "Aspirin 75 mg continues.",
            "not_entailed",
            "incorrect",
            "Stop aspirin.",
            importance="high",
        ),
        fact("recall", 3, IMG, "not_entailed", "missing", "", importance="low", category=IMG),
    ]
    return Score(
        value=0.25,
        explanation="precision 0.33 over 3 response fact(s), recall 0.17 over 3 reference fact(s), F1 0.22",
        sub_scores={"precision": 1 / 3, "recall": 1 / 6, "f1": 0.2222},
        details={
            "policy": "default",
            "reference_facts_source": "extracted from reference",
            "judge": "offline",
            "judge_kind": "heuristic",
            "notes": [],
            "facts": facts,
        },
    )


def tbfact_case() -> Case:
    return Case(id="c1", input=SCRIPT, response=RESPONSE, reference=REFERENCE)


def test_tbfact_two_fact_tables_with_verdicts_and_marked_evidence() -> None:
    html = render_evidence(tbfact_case(), record("tbfact", tbfact_score()))
    assert isinstance(html, Markup)
    tree = assert_safe(html)
    sides = tree.find_all("section", "ev-side")
    assert [s.attrs["data-side"] for s in sides] == ["precision", "recall"]
    precision, recall = sides
    rows = precision.find_all("tr", "ev-fact-row")
    assert [r.find("td", "ev-fact").find("div", "ev-fact-text").text for r in rows] == [
        "Apixaban 5 mg twice daily.",
        "Aspirin is stopped.",
        SCRIPT,
    ]
    # verdict words and classes: entailed / contradicted / not entailed; partly on the recall side
    assert [r.find("td", "ev-verdict").find("span", "ev-chip").text for r in rows] == [
        "entailed",
        "contradicted",
        "not entailed",
    ]
    assert "ev-v-contradicted" in rows[1].classes
    assert "ev-v-partial" in recall.find_all("tr", "ev-fact-row")[0].classes
    # the reason is worded against the other text
    assert rows[1].find("span", "ev-reason").text == "conflicts with the reference"
    assert recall.find_all("tr", "ev-fact-row")[2].find("span", "ev-reason").text == "not in the response"
    # the quoted evidence is marked in the other text, linked both ways with its row
    marks = precision.find_all("mark", "ev-mark")
    texts = {m.text.rstrip("0123456789,") for m in marks}
    assert "Start apixaban 5 mg twice daily" in texts
    assert "Continue aspirin 75 mg daily" in texts
    contradicted = next(m for m in marks if m.text.startswith("Continue aspirin"))
    assert "ev-v-contradicted" in contradicted.classes
    row_id = rows[1].attrs["id"]
    assert contradicted.attrs["data-ev-targets"] == row_id
    assert rows[1].attrs["data-ev-targets"] == contradicted.attrs["id"]
    # the fact number follows the mark (visible without JS)
    assert contradicted.find("sup", "ev-ref").text == "2"
    # the recall side marks the response
    assert any(m.text.startswith("Stop aspirin.") for m in recall.find_all("mark"))
    # a CSS-only switch hides the entailed facts of a side (present where there are some)
    assert precision.find("input", "ev-only-problems").attrs["type"] == "checkbox"
    assert not recall.find_all("input")
    assert ".ev-side:has(.ev-only-problems:checked) tr.ev-fact-row.ev-v-entailed" in EVIDENCE_CSS
    # summary: figures and counts
    summary = tree.find("div", "ev-summary")
    assert [v.text for v in summary.find_all("span", "ev-stat-value")] == ["0.33", "0.17", "0.22"]
    counts = [c.text for c in summary.find("div", "ev-counts").find_all("span", "ev-chip")]
    assert counts == ["1 contradicted", "1 unsupported", "1 omitted", "1 misstated", "1 partly stated"]


def test_tbfact_xss_in_facts_case_and_categories_is_text() -> None:
    html = str(render_evidence(tbfact_case(), record("tbfact", tbfact_score())))
    assert SCRIPT not in html and "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    tree = assert_safe(html)
    assert SCRIPT in tree.text and IMG in tree.text
    texts = assert_safe(str(render_case_texts(tbfact_case())))
    assert SCRIPT in texts.text and IMG in texts.text


def test_tbfact_no_facts_on_one_side_and_empty_response() -> None:
    score = tbfact_score()
    score.details["facts"] = [f for f in score.details["facts"] if f["direction"] == "recall"]
    case = Case(id="c1", response="", reference=REFERENCE)
    tree = assert_safe(render_evidence(case, record("tbfact", score)))
    precision = tree.find_all("section", "ev-side")[0]
    assert "The response states no fact." in precision.text
    # nothing of the recall side is quoted from an empty response: no marked text, no crash
    assert tree.find_all("tr", "ev-fact-row")


def test_tbfact_missing_reference_marks_the_gold_facts() -> None:
    score = tbfact_score()
    case = Case(
        id="c1",
        response=RESPONSE,
        gold_facts=[
            {"text": "Start apixaban 5 mg twice daily", "importance": "high"},
            "Continue aspirin 75 mg daily",
        ],
    )
    tree = assert_safe(render_evidence(case, record("tbfact", score)))
    precision = tree.find_all("section", "ev-side")[0]
    assert "The gold facts, with the quoted evidence marked" in precision.text
    assert precision.find_all("mark")


def test_tbfact_quote_not_in_the_stored_text_is_said() -> None:
    score = tbfact_score()
    case = Case(id="c1", response="An unrelated text.", reference="Another unrelated text.")
    tree = assert_safe(render_evidence(case, record("tbfact", score)))
    assert not tree.find_all("mark")
    assert "None of the quotations is in the reference stored with this case" in tree.text


def test_ids_are_deterministic_and_prefixed() -> None:
    case, result = tbfact_case(), record("tbfact", tbfact_score())
    assert render_evidence(case, result) == render_evidence(case, result)
    a = parse(render_evidence(case, result, id_prefix="run-a"))
    b = parse(render_evidence(case, result, id_prefix="run-b"))
    ids_a = {n.attrs["id"] for n in a.iter() if "id" in n.attrs}
    ids_b = {n.attrs["id"] for n in b.iter() if "id" in n.attrs}
    assert ids_a and not ids_a & ids_b
    assert all(i.startswith("ev-") for i in ids_a)
    # without a prefix, the same metric of two runs on one page (compare) keeps ids apart too
    other = result.model_copy(update={"run_id": "r2"})
    page = str(render_evidence(case, result)) + str(render_evidence(case, other))
    page += str(render_case_texts(case)) + str(render_case_texts(case))
    parse(page)  # asserts no duplicate id


# --------------------------------------------------------------------------- statuses and fallback


def test_unscored_and_not_applicable_are_told_apart_from_zero() -> None:
    case = Case(id="c1", response="x")
    unscored = parse(render_evidence(case, record("rubric", Score.failed("unscored: needs an LLM judge"))))
    section = unscored.find("section", "ev-result")
    assert "ev-status-error" in section.classes
    assert section.find("span", "ev-value").text == "unscored"
    assert "Unscored: needs an LLM judge" in section.text
    assert "0.00" not in section.text
    na = parse(
        render_evidence(case, record("faithfulness", Score.not_applicable("the answer makes no statement")))
    )
    assert na.find("span", "ev-value").text == "not applicable"
    assert "Not applicable: the answer makes no statement" in na.text
    zero = parse(render_evidence(case, record("bleu", Score(value=0.0))))
    assert zero.find("span", "ev-value").text == "0.00"
    assert "ev-tone-bad" in zero.find("span", "ev-value").classes


@pytest.mark.parametrize(
    "details",
    [
        {"facts": "not a list"},
        {"facts": [{"direction": "precision", "fact": 3, "label": None}]},
        {"matched": None, "missing": [1], "extra": "x"},
        {"statements": [None, 5, {"statement": None}]},
        {"sentences": [{"kind": None}], "counts": 3},
        {"turns": [{"turn": "x", "gold": None}]},
        {"expectation": "?", "refusal": 1},
        {"evaluations": [{"query": SCRIPT, "label": IMG}]},
        {"nested": {"deep": [{"a": 1}, {"b": [1, 2, {"c": SCRIPT}]}], "n": None, "t": True}},
        {"finished": "endcall"},
    ],
)
def test_malformed_or_unknown_details_never_raise(details: dict[str, Any]) -> None:
    case = Case(id="c1", response=SCRIPT, reference=IMG, metadata={"agent_output": {"episode": {"bad": 1}}})
    for metric in ("tbfact", "radbench", "my_metric"):
        html = render_evidence(
            case, record(metric, Score(value=0.5, label=IMG, explanation=SCRIPT, details=details))
        )
        tree = assert_safe(html)
        assert tree.find("h3", "ev-metric").text == metric


def test_generic_fallback_shows_value_label_explanation_and_nested_details() -> None:
    score = Score(
        value=0.42,
        label="partial",
        explanation="why " + SCRIPT,
        sub_scores={"a": 1.0},
        details={"counts": {"x": 1, "y": None}, "rows": [{"k": "v", "n": 2}, {"k": IMG}], "ok": True},
    )
    tree = assert_safe(render_evidence(Case(id="c"), record("custom", score)))
    assert tree.find("span", "ev-value").text == "0.42"
    assert tree.find("span", "ev-label").text == "partial"
    assert tree.find("p", "ev-explanation").text == "why " + SCRIPT
    grid = tree.find("table", "ev-grid")  # a list of records becomes a table
    assert [th.text for th in grid.find_all("th")] == ["k", "n"]
    assert IMG in grid.text
    kv = tree.find("table", "ev-kv")
    assert "counts" in [th.text for th in kv.find_all("th")]


def test_long_details_are_folded() -> None:
    details = {f"key{i}": i for i in range(40)}
    tree = parse(render_evidence(Case(id="c"), record("custom", Score(value=1.0, details=details))))
    fold = tree.find("details", "ev-raw")
    assert "open" not in fold.attrs
    assert "40 entries" in fold.text


def test_locate_exact_normalised_and_excerpts() -> None:
    text = "Potassium  was 5.9 mmol/L.\nRenal function   normal. Follow up in 2 weeks."
    assert locate("was 5.9 mmol/L", text) == [(11, 25)]
    start, end = locate("potassium was 5.9", text)[0]
    assert text[start:end] == "Potassium  was 5.9"
    spans = locate("Potassium  was 5.9 mmol/L ... Follow up in 2 weeks", text)
    assert [text[a:b] for a, b in spans] == ["Potassium  was 5.9 mmol/L", "Follow up in 2 weeks"]
    assert locate("absent words here", text) == []
    assert locate("", text) == [] and locate("x", "") == []


def test_case_texts_missing_empty_contexts_and_turns() -> None:
    case = Case(
        id="c",
        input=[{"role": "user", "content": SCRIPT}, {"role": "assistant", "name": "Triage", "content": IMG}],
        response="",
        contexts=["Leaflet " + SCRIPT],
        trajectory=[{"name": "get_labs", "arguments": {"test": IMG}}],
    )
    tree = assert_safe(render_case_texts(case))
    assert [n.text for n in tree.find_all("span", "ev-speaker")] == ["user", "Triage"]
    parts = {p.find("h3").text: p for p in tree.find_all("section", "ev-case-part")}
    assert parts["Response"].find("span", "ev-missing").text == "(empty)"
    assert parts["Reference"].find("span", "ev-missing").text == "not given"
    assert "Leaflet " + SCRIPT in parts["Contexts (1)"].text
    assert IMG in parts["Trajectory"].text


def test_css_and_js_are_plain_and_prefixed() -> None:
    selectors = re.findall(r"(?m)^\s*([^@{}/][^{]*)\{", EVIDENCE_CSS)
    for group in selectors:
        for selector in group.split(","):
            names = re.findall(r"\.([a-zA-Z][\w-]*)", selector)
            assert all(n.startswith("ev-") for n in names), selector
    assert "</script" not in EVIDENCE_JS and "import " not in EVIDENCE_JS
    assert "data-ev-targets" in EVIDENCE_JS


# --------------------------------------------------------------------------- trajectories (hand-made)


def traj_case(pred: list[dict[str, Any]], ref: list[dict[str, Any]]) -> Case:
    return Case(id="t", trajectory=pred, reference_trajectory=ref)


def traj_rows(case: Case, metric: str = "trajectory_exact_match") -> list[tuple[str, str, str]]:
    result = clineval.evaluate([case.model_dump(exclude_none=True)], [metric], progress=False).results[0]
    tree = assert_safe(render_evidence(case, result))
    out = []
    for row in tree.find_all("tr", "ev-t-row"):
        cells = row.find_all("td")
        name = lambda td: td.find("code", "ev-call-name").text if td.find_all("code", "ev-call-name") else "-"  # noqa: E731
        out.append((name(cells[0]), cells[1].text, name(cells[2])))
    return out


def test_trajectory_aligned_with_missing_extra_arguments_and_order() -> None:
    labs = {"name": "get_labs", "arguments": {"test": "potassium"}}
    meds = {"name": "get_medications", "arguments": {"patient_id": "P1"}}
    notes = {"name": "get_notes", "arguments": {}}
    wrong_labs = {"name": "get_labs", "arguments": {"test": "sodium"}}
    # missing + extra of the same tool: different arguments, aligned on one row
    assert traj_rows(traj_case([wrong_labs, meds], [labs, meds])) == [
        ("get_labs", "different arguments", "get_labs"),
        ("get_medications", "match", "get_medications"),
    ]
    # out of order (any-order alignment pairs both; the second pair goes backwards)
    assert traj_rows(traj_case([meds, labs], [labs, meds]), "trajectory_any_order_match") == [
        ("get_labs", "match", "get_labs"),
        ("get_medications", "out of order", "get_medications"),
    ]
    # an extra call sits after the predicted call before it; a missing one has no predicted side
    assert traj_rows(traj_case([labs, notes], [labs, meds])) == [
        ("get_labs", "match", "get_labs"),
        ("get_notes", "extra", "-"),
        ("-", "missing", "get_medications"),
    ]


def test_trajectory_duplicated_calls_and_empty() -> None:
    labs = {"name": "get_labs", "arguments": {"test": "potassium"}}
    assert traj_rows(traj_case([labs, labs, labs], [labs]), "trajectory_precision") == [
        ("get_labs", "match", "get_labs"),
        ("get_labs", "extra", "-"),
        ("get_labs", "extra", "-"),
    ]
    result = clineval.evaluate(
        [{"id": "e", "trajectory": [], "reference_trajectory": []}],
        ["trajectory_exact_match"],
        progress=False,
    ).results[0]
    tree = parse(render_evidence(Case(id="e", trajectory=[], reference_trajectory=[]), result))
    assert "Both trajectories are empty." in tree.text


def test_trajectory_rebuilt_from_details_when_the_case_lacks_it() -> None:
    score = Score(
        value=0.5,
        details={
            "match": "name_and_args",
            "args": None,
            "matched": [
                {
                    "predicted_index": 0,
                    "reference_index": 0,
                    "name": "a",
                    "arguments": {},
                    "predicted_arguments": {},
                }
            ],
            "missing": [{"reference_index": 1, "name": "b", "arguments": {"x": SCRIPT}}],
            "extra": [],
        },
    )
    tree = assert_safe(render_evidence(Case(id="t"), record("trajectory_recall", score)))
    statuses = [r.find_all("td")[1].text for r in tree.find_all("tr", "ev-t-row")]
    assert statuses == ["match", "missing"]
    assert SCRIPT in tree.text


# --------------------------------------------------------------------------- real metrics


@pytest.fixture(scope="module")
def rag_run() -> clineval.EvalResult:
    cases = [
        {
            "id": "qa",
            "input": "How often should I use the steroid eye drops?",
            "response": (
                "Thank you for your question. Use the steroid drops twice a day for four weeks. "
                "Do not stop the steroid drops early unless the clinic tells you to."
            ),
            "reference": (
                "Use the steroid drops four times a day for the first two weeks, then twice a day for two "
                "more weeks. Do not stop them early unless the clinic tells you to."
            ),
            "contexts": [
                "Use the steroid drop four times a day for the first two weeks, then twice a day "
                "for two more weeks, then stop. "
                "Do not stop the steroid drops early unless the clinic tells you to.",
                "Keep your drops at room temperature.",
            ],
        },
        {
            "id": "xss",
            "input": SCRIPT,
            "response": f"Potassium was 5.9 mmol/L {SCRIPT}. {IMG}",
            "reference": f"Potassium was 5.9 mmol/L. {IMG}",
            "contexts": [f"Potassium was 5.9 mmol/L. {SCRIPT}"],
        },
    ]
    metrics = [
        "tbfact",
        "faithfulness",
        "conversational_faithfulness",
        "context_relevance",
        "context_relevance_ragas",
        "refusal_accuracy(label=none)",
        "answer_relevance",
    ]
    return clineval.evaluate(cases, metrics, progress=False)


def evidence_of(run: clineval.EvalResult, case_id: str, metric: str) -> Node:
    case = next(c for c in run.cases if c.id == case_id)
    result = next(r for r in run.results if r.case_id == case_id and r.metric == metric)
    return assert_safe(render_evidence(case, result))


def test_real_tbfact_offline(rag_run: clineval.EvalResult) -> None:
    tree = evidence_of(rag_run, "qa", "tbfact")
    result = next(r for r in rag_run.results if r.case_id == "qa" and r.metric == "tbfact")
    facts = result.score.details["facts"]
    rows = tree.find_all("tr", "ev-fact-row")
    assert len(rows) == len(facts)
    shown = [r.find("div", "ev-fact-text").text for r in rows]
    assert shown == [f["fact"] for f in facts if f["direction"] == "precision"] + [
        f["fact"] for f in facts if f["direction"] == "recall"
    ]
    # each fact whose evidence is in the other text has a mark with the same verdict class: of
    # the two precision facts, the offline judge quotes the reference for the first only
    reference = rag_run.cases[0].reference or ""
    precision = [f for f in facts if f["direction"] == "precision"]
    assert [bool(f["evidence"]) and f["evidence"] in reference for f in precision] == [True, False]
    targets = rows[0].attrs["data-ev-targets"].split()
    assert targets
    assert all(tree.by_id(t).tag == "mark" for t in targets)


def test_real_grounding_views(rag_run: clineval.EvalResult) -> None:
    cf = evidence_of(rag_run, "qa", "conversational_faithfulness")
    sentences = cf.find("p", "ev-answer").find_all("span", "ev-sent")
    assert "ev-v-na" in sentences[0].classes  # "Thank you for your question." is not judged
    assert "Thank you for your question." in sentences[0].text
    verdicts = {s.text.rstrip("0123456789"): s.classes for s in sentences}
    assert "ev-v-entailed" in verdicts["Do not stop the steroid drops early unless the clinic tells you to."]
    twice = verdicts["Use the steroid drops twice a day for four weeks."]
    assert twice & {"ev-v-contradicted", "ev-v-not-entailed", "ev-v-partial"}
    assert cf.find("ol", "ev-contexts").find_all("mark")  # supporting spans in the context
    # a sentence lights up its table row and the context words it was grounded in
    targets = [cf.by_id(t) for t in sentences[2].attrs["data-ev-targets"].split()]
    assert targets[0].tag == "tr" and any(t.tag == "mark" for t in targets[1:])
    faith = evidence_of(rag_run, "qa", "faithfulness")
    assert faith.find_all("tr", "ev-fact-row")
    assert "Contexts, with the quoted evidence marked" in faith.text


def test_real_context_refusal_answer_relevance(rag_run: clineval.EvalResult) -> None:
    ragas = evidence_of(rag_run, "qa", "context_relevance_ragas")
    items = ragas.find("ol", "ev-sentences").find_all("li")
    assert items and {"relevant", "not relevant"} >= {i.find("span", "ev-chip").text for i in items}
    relevance = evidence_of(rag_run, "qa", "context_relevance")
    assert "Contexts judged (2)" in relevance.text
    refusal = (
        evidence_of(rag_run, "qa", "refusal_accuracy(label=none)")
        if any(r.metric == "refusal_accuracy(label=none)" for r in rag_run.results)
        else evidence_of(
            rag_run, "qa", next(r.metric for r in rag_run.results if r.metric.startswith("refusal"))
        )
    )
    rows = refusal.find("table", "ev-refusal").find_all("tr")
    assert [r.find("th").text for r in rows] == ["Expected", "The system"]
    assert rows[1].find("strong").text == "answered"
    answer = evidence_of(rag_run, "qa", "answer_relevance")
    assert "method: question answer similarity" in answer.text
    assert answer.find_all("span", "ev-bar")


def test_real_metrics_escape_xss_case(rag_run: clineval.EvalResult) -> None:
    case = next(c for c in rag_run.cases if c.id == "xss")
    for result in (r for r in rag_run.results if r.case_id == "xss"):
        html = str(render_evidence(case, result))
        assert SCRIPT not in html and "<img" not in html
        assert_safe(html)
    assert_safe(str(render_case_texts(case)))


def tumor_board_case() -> Case:
    conversation = Conversation(
        id="tb-1",
        patient_id="p1",
        messages=[
            Message(
                role="user",
                speaker="user",
                text="What imaging has she had?",
                gold_agent="Radiology",
                gold_tools=["get_imaging"],
            ),
            Message(role="assistant", speaker="Orchestrator", text="Radiology, please review."),
            Message(
                role="assistant",
                speaker="PatientHistory",
                text="CT chest 2024-01-15 " + SCRIPT,
                tool_calls=[ToolCallRecord(id="1", name="load_patient", arguments={"id": IMG}, result="ok")],
            ),
            Message(
                role="user",
                speaker="user",
                text="And the timeline?",
                gold_agent="PatientHistory",
                gold_tools=[],
            ),
            Message(role="assistant", speaker="PatientHistory", text="Timeline: diagnosed 2023."),
        ],
    )
    return conversation_to_case(conversation)


def test_real_conversation_turn_metrics() -> None:
    case = tumor_board_case()
    run = clineval.evaluate(
        [case.model_dump(exclude_none=True)],
        ["agent_selection_accuracy", "tool_selection_accuracy"],
        progress=False,
    )
    merged = run.cases[0]
    selection = assert_safe(
        render_evidence(merged, next(r for r in run.results if r.metric == "agent_selection_accuracy"))
    )
    rows = selection.find_all("tr", "ev-turn-row")
    cells = [[td.text for td in r.find_all("td")] for r in rows]
    assert cells[0][:4] == ["1", "What imaging has she had?", "Radiology", "PatientHistory"]
    assert cells[0][-1] == "wrong" and cells[1][-1] == "correct"
    # the transcript opens (a turn went wrong) with speakers, tool calls and the per-turn annotation
    fold = selection.find("details", "ev-fold")
    assert "open" in fold.attrs
    assert [s.text for s in fold.find_all("span", "ev-speaker")] == [
        "user",
        "Orchestrator",
        "PatientHistory",
        "user",
        "PatientHistory",
    ]
    assert "load_patient" in fold.text and IMG in fold.text
    assert "chosen: PatientHistory" in fold.find_all("li", "ev-role-user")[0].text
    tools = assert_safe(
        render_evidence(merged, next(r for r in run.results if r.metric == "tool_selection_accuracy"))
    )
    first = [td.text for td in tools.find_all("tr", "ev-turn-row")[0].find_all("td")]
    assert first[2:6] == ["get_imaging", "load_patient", "get_imaging", "load_patient"]
    texts = assert_safe(render_case_texts(merged))
    assert "gold agent: Radiology" in texts.text


def test_hand_made_conversation_segments_support_and_rating() -> None:
    case = tumor_board_case()
    segments = Score(
        value=0.5,
        label="1/2",
        details={
            "agent": "Radiology",
            "segments": [
                {
                    "segment": 0,
                    "request": SCRIPT,
                    "request_from": "context",
                    "response": "ok",
                    "relevant": True,
                    "explanation": "on topic",
                },
                {
                    "segment": 1,
                    "request": "",
                    "request_from": None,
                    "response": "",
                    "skipped": "the agent's messages are empty",
                },
            ],
        },
    )
    tree = assert_safe(render_evidence(case, record("radiology_relevancy", segments)))
    assert [c.text for c in tree.find_all("span", "ev-chip")][:2] == ["relevant", "skipped"]
    support = Score(
        value=0.5,
        label="1/2",
        details={
            "agent": "PatientHistory",
            "documents": ["a.md"],
            "facts": [
                {
                    "id": 1,
                    "fact": IMG,
                    "category": "other",
                    "importance": "low",
                    "label": "not_entailed",
                    "reason": "missing",
                    "document": None,
                    "evidence": "",
                    "explanation": "",
                    "supporting_documents": [],
                },
                {
                    "id": 2,
                    "fact": "CT chest",
                    "category": "diagnosis",
                    "importance": "high",
                    "label": "entailed",
                    "reason": None,
                    "document": "a.md",
                    "evidence": "CT chest",
                    "explanation": "",
                    "supporting_documents": ["a.md"],
                },
            ],
        },
    )
    tree = assert_safe(render_evidence(case, record("history_support", support)))
    assert "Facts not fully supported by any source document (1)" in tree.text
    assert "Facts entailed by a source document (1)" in tree.text
    rating = Score(
        value=4.0,
        label="4/5",
        explanation="routed well " + SCRIPT,
        details={
            "scale_min": 1,
            "scale_max": 5,
            "orchestrator": "Orchestrator",
            "user_turns": 2,
            "note": "directional",
        },
    )
    tree = assert_safe(render_evidence(case, record("agent_selection", rating)))
    assert tree.find("span", "ev-value").text == "4 / 5"
    assert "ev-tone-mid" in tree.find("span", "ev-value").classes  # (4-1)/4 = 0.75


@pytest.fixture(scope="module")
def radbench_run(tmp_path_factory: pytest.TempPathFactory) -> clineval.EvalResult:
    from clineval.environments.radbench.runner import BenchSettings, run_bench

    store = tmp_path_factory.mktemp("rb") / "rb.db"
    settings = BenchSettings(
        core="oracle", n_records=1, seed=3, tasks=["012"], conditions=["baseline", "insufficient_1"]
    )
    return run_bench(settings, store=str(store), progress=False)


def test_real_radbench_episode(radbench_run: clineval.EvalResult) -> None:
    finished: dict[str, object] = {}
    for case in radbench_run.cases:
        result = next(r for r in radbench_run.results if r.case_id == case.id and r.metric == "radbench")
        tree = assert_safe(render_evidence(case, result))
        episode = case.metadata["agent_output"]["episode"]  # type: ignore[index]
        assert "radiology benchmark episode (RadA-BenchPlat)" in tree.find("span", "ev-family").text
        steps = tree.find_all("li", "ev-step")
        assert len(steps) == len(episode["steps"])  # type: ignore[arg-type,index]
        assert "Plan: the chain of tool categories" in tree.text
        assert "Final answer against the reference" in tree.text
        assert episode["reference_answer"] in tree.text  # type: ignore[index,operator]
        calls = [s for s in episode["steps"] if s["action"] in ("call", "endcall")]  # type: ignore[index]
        cards = tree.find_all("details", "ev-tool-card")
        assert len(cards) == len(calls)  # every Call/EndCall with the card the core saw
        for card, call in zip(cards, calls, strict=True):
            assert f"Tool card of {call['tool']}, as the core saw it" in card.text
            assert "Compulsory Input" in card.text and "Performance" in card.text
        finished[case.metadata["condition"]] = episode["finished"]  # type: ignore[index]
        if episode["finished"] == "endcall":  # type: ignore[index]
            assert "Memory bank at the end" in tree.text
            assert [s.find("span", "ev-action").text for s in steps][-1] == "EndCall"
            assert "Organ Segmentor" in tree.text  # categories by name, not number
        else:
            assert episode["finished"] == "nocall"  # type: ignore[index]
            assert "What the core says is missing" in tree.text
            assert "What the tool set lacks (the gap)" in tree.text
    # the oracle answers on the full tool set and says what is missing on the insufficient one
    assert finished == {"baseline": "endcall", "insufficient_1": "nocall"}
    # other metrics of the same case keep their own (generic) view
    latency = next(r for r in radbench_run.results if r.metric == "latency")
    case = next(c for c in radbench_run.cases if c.id == latency.case_id)
    tree = parse(render_evidence(case, latency, lower_is_better=True))
    assert not tree.find_all("li", "ev-step")


def test_render_is_markup_and_escapes_metric_names(tmp_path: Path) -> None:
    html = render_evidence(Case(id="c"), record(IMG, Score(value=1.0)))
    assert isinstance(html, Markup)
    tree = assert_safe(str(html))
    assert tree.find("h3", "ev-metric").text == IMG
    assert tree.find("section", "ev-result").attrs["data-metric"] == IMG
