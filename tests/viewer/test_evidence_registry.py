"""The evidence view registry: chosen by metric name first, then by the details' shape;
a run's own metric file imported for its views, a missing one told in one line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from markupsafe import Markup

from clineval.errors import ConfigError
from clineval.evidence import EvidenceContext, evidence_view, h
from clineval.evidence import registry as reg
from clineval.evidence.lookup import find_view, load_views_of
from clineval.model import Case, ResultRecord, Score
from clineval.viewer.evidence import render_evidence


@pytest.fixture
def views(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(reg, "_VIEWS", dict(reg._VIEWS))  # registrations of a test stay in it
    yield


def _ctx(metric: str, details: dict[str, object]) -> EvidenceContext:
    result = ResultRecord(run_id="r", case_id="c", metric=metric, score=Score(value=1.0, details=details))
    return EvidenceContext(case=Case(id="c", input="q"), result=result, prefix="p", details=details)


def test_a_view_needs_metrics_or_a_shape(views: None) -> None:
    with pytest.raises(ConfigError, match="say which results it draws"):
        evidence_view("lost")(lambda ctx: None)


def test_name_first_then_shape_by_order(views: None) -> None:
    @evidence_view("mine", metrics=["faithfulness_of_mine"])
    def mine(ctx: EvidenceContext) -> Markup:
        return h("p", "mine")

    # faithfulness's details, but the metric has a view of its own by name
    assert find_view(_ctx("faithfulness_of_mine", {"statements": []})) is not None
    assert find_view(_ctx("faithfulness_of_mine", {"statements": []})).name == "mine"  # type: ignore[union-attr]
    assert find_view(_ctx("other", {"statements": []})).name == "faithfulness"  # type: ignore[union-attr]
    assert find_view(_ctx("other", {"anything": 1})) is None


def test_a_second_view_under_a_taken_name_is_refused(views: None) -> None:
    evidence_view("twice", metrics=["m"])(_first)
    evidence_view("twice", metrics=["m"])(_first)  # the same function again: fine
    with pytest.raises(ConfigError, match="'twice' is already registered"):
        evidence_view("twice", metrics=["m"])(_second)


def _first(ctx: EvidenceContext) -> Markup:
    return h("p", "1")


def _second(ctx: EvidenceContext) -> Markup:
    return h("p", "2")


def test_a_missing_metric_file_is_one_line_and_the_table_is_shown(tmp_path: Path) -> None:
    gone = tmp_path / "gone.py"
    problems = load_views_of([{"name": f"{gone}:dose"}, "rouge", "not a spec((("], None)
    assert len(problems) == 1 and problems[0].startswith(f"metric '{gone}:dose': its evidence view")
    result = ResultRecord(
        run_id="r", case_id="c", metric="dose", score=Score(value=0.5, details={"dose": "5 mg"})
    )
    html = str(render_evidence(Case(id="c", input="q"), result))
    assert "ev-fam-generic" in html and "5 mg" in html


def test_radiology_abbreviations_get_a_legend() -> None:
    from clineval.environments.radbench.evidence import legend

    html = str(legend(["radbench.ld_exec_gt", "radbench.uar", "radbench.completion"]))
    assert "Abbreviations (LD, UAR)" in html
    assert "<dt>LD</dt><dd>Levenshtein distance between chains of tool categories" in html
    assert "<dt>UAR</dt><dd>unsolvability awareness: declined" in html
    assert legend(["completion"]) is None
