"""The viewer's read-only queries (clineval.viewer.data) over a real store made through the API."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.viewer.stores import SECRET, XSS_SCRIPT, build_store

from clineval import api
from clineval.viewer.data import CaseQuery, NotFound, RunFilters, ViewerData


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("viewer-data") / "runs.db"
    return path, build_store(path)


@pytest.fixture
def data(store: tuple[Path, dict[str, str]]) -> ViewerData:
    viewer = ViewerData(store[0])
    yield viewer  # type: ignore[misc]
    viewer.close()


def test_runs_newest_first_and_filters(data: ViewerData, store: tuple[Path, dict[str, str]]) -> None:
    ids = store[1]
    assert [r.id for r in data.runs()] == [ids["tbfact"], ids["many"], ids["second"], ids["first"]]
    assert [r.name for r in data.runs(RunFilters(name="SEC"))] == ["second"]
    assert [r.name for r in data.runs(RunFilters(tag="team=a"))] == ["first"]
    assert [r.name for r in data.runs(RunFilters(tag="team"))] == ["second", "first"]
    assert [r.name for r in data.runs(RunFilters(metric="tbfact"))] == ["tbfact"]
    assert len(data.runs(RunFilters(status="completed"))) == 4
    assert data.runs(RunFilters(status="failed")) == []
    first = next(r for r in data.runs() if r.name == "first")
    assert [r.name for r in data.runs(RunFilters(dataset=first.fingerprint[:8]))] == ["second", "first"]
    assert first.n_cases == 3 and first.status == "completed"


def test_aggregates_are_those_of_load_run(data: ViewerData, store: tuple[Path, dict[str, str]]) -> None:
    path, ids = store
    for name in ("first", "many", "tbfact"):
        mine = data.summary(ids[name], all_sub_scores=True).aggregates
        theirs = api.load_run(ids[name], store=path).aggregate()
        assert [a.model_dump() for a in mine] == [a.model_dump() for a in theirs]
    grouped = data.summary(ids["first"], by="task", all_sub_scores=True).by_groups
    expected = api.load_run(ids["first"], store=path).aggregate(by="task")
    key = lambda a: (a.metric, a.group)  # noqa: E731
    assert sorted((a.model_dump() for a in grouped), key=lambda d: (d["metric"], d["group"])) == sorted(
        (a.model_dump() for a in expected), key=lambda d: (d["metric"], d["group"])
    )
    assert sorted(map(key, grouped)) == sorted(map(key, expected))


def test_summary_hand_checked(data: ViewerData, store: tuple[Path, dict[str, str]]) -> None:
    summary = data.summary(store[1]["first"], by="task")
    by_metric = {a.metric: a for a in summary.aggregates}
    # c1 matches its reference, c2 does not, c3 has no reference (unscored)
    assert (by_metric["exact_match"].scored, by_metric["exact_match"].errors) == (2, 1)
    assert by_metric["exact_match"].mean == pytest.approx(0.5)
    assert summary.n_cases == 3 and summary.group_fields == ["task"]
    groups = {(a.metric, a.group): a for a in summary.by_groups}
    assert groups[("exact_match", "labs")].mean == pytest.approx(0.5)
    assert groups[("exact_match", "meds")].mean is None and groups[("exact_match", "meds")].errors == 1
    reasons = {u.metrics[0]: u.count for u in summary.unscored}
    assert reasons == {"exact_match": 1, "token_f1": 1}
    assert sorted(summary.distributions["exact_match"]) == [0.0, 1.0]


def test_sub_scores_limited_like_clineval_show(data: ViewerData, store: tuple[Path, dict[str, str]]) -> None:
    every = data.summary(store[1]["tbfact"], all_sub_scores=True)
    some = data.summary(store[1]["tbfact"])
    subs = [a for a in some.aggregates if a.metric.startswith("tbfact.")]
    assert len(subs) == 8
    assert some.hidden_sub_scores == len(every.aggregates) - len(some.aggregates) > 0


def test_case_page_paginates_in_sql(data: ViewerData, store: tuple[Path, dict[str, str]]) -> None:
    run = store[1]["many"]
    first = data.case_page(run, CaseQuery(size=20))
    assert (first.total, first.n_cases, first.pages) == (25, 25, 2)
    assert [r.case_id for r in first.rows] == [f"m{n:02d}" for n in range(20)]
    second = data.case_page(run, CaseQuery(size=20, page=2))
    assert [r.case_id for r in second.rows] == [f"m{n:02d}" for n in range(20, 25)]
    beyond = data.case_page(run, CaseQuery(size=20, page=99))
    assert beyond.query.page == 2 and len(beyond.rows) == 5
    desc = data.case_page(run, CaseQuery(sort="case", order="desc", size=20))
    assert desc.rows[0].case_id == "m24"


def test_case_page_sort_and_filters(data: ViewerData, store: tuple[Path, dict[str, str]]) -> None:
    run = store[1]["many"]
    # exact_match is 1 for every n divisible by 3: 0, 3, ..., 24 (9 cases)
    matched = data.case_page(run, CaseQuery(metric="exact_match", min=1.0, size=50))
    assert [r.case_id for r in matched.rows] == [f"m{n:02d}" for n in range(0, 25, 3)]
    low = data.case_page(run, CaseQuery(metric="exact_match", max=0.0, size=50))
    assert low.total == 16
    by_value = data.case_page(run, CaseQuery(sort="exact_match", order="desc", size=50))
    values = [r.cells["exact_match"].value for r in by_value.rows]
    assert values == sorted(values, reverse=True)
    assert data.case_page(run, CaseQuery(q="m1", size=50)).total == 10
    assert data.case_page(run, CaseQuery(q="%", size=50)).total == 0  # LIKE wildcards are literal
    unscored = data.case_page(store[1]["first"], CaseQuery(status="error"))
    assert [r.case_id for r in unscored.rows] == ["c3"]
    cell = unscored.rows[0].cells["token_f1"]
    assert cell.status == "error" and cell.note is not None and "reference" in cell.note
    assert data.case_page(store[1]["first"], CaseQuery(metric="token_f1", status="scored")).total == 2


def test_case_page_previews_are_masked(data: ViewerData, store: tuple[Path, dict[str, str]]) -> None:
    page = data.case_page(store[1]["first"])
    texts = " ".join(r.input for r in page.rows)
    assert XSS_SCRIPT in texts  # raw here: the template escapes it
    assert SECRET not in texts and "sk-***" in texts


def test_one_case(data: ViewerData, store: tuple[Path, dict[str, str]]) -> None:
    view = data.case(store[1]["first"], "c2")
    assert view.case.response == "I do not know <b>bold</b>"
    assert [r.metric for r in view.results] == ["exact_match", "token_f1", "latency", "failure"]
    assert (view.index, view.n_cases, view.previous_id, view.next_id) == (1, 3, "c1", "c3")
    masked = data.case(store[1]["first"], "c3")
    assert SECRET not in str(masked.case.input)
    with pytest.raises(NotFound, match="no case 'nope'"):
        data.case(store[1]["first"], "nope")
    with pytest.raises(NotFound, match="no run"):
        data.summary("no-such-run")


def test_compare_reuses_compare_runs(data: ViewerData, store: tuple[Path, dict[str, str]]) -> None:
    view = data.compare(store[1]["first"], store[1]["second"])
    exact = view.comparison.get("exact_match")
    # c2 goes from 0 to 1; c3 is unscored in both
    assert exact.n_paired == 2 and exact.delta == pytest.approx(0.5)
    assert [c.case_id for c in exact.improved_cases] == ["c2"]
    assert view.a.name == "first" and view.b.name == "second"


def test_pending_intervals_keep_every_other_figure(
    store: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import clineval.viewer.data as data_module

    monkeypatch.setattr(data_module, "SYNC_CI_RESULTS", 1)
    for name in ("first", "many", "tbfact"):
        viewer = ViewerData(store[0])
        try:
            quick = viewer.summary(store[1][name], wait_for_cis=False)
            full = viewer.summary(store[1][name])
        finally:
            viewer.close()
        assert quick.cis_pending and not full.cis_pending
        assert all(a.ci_low is None for a in quick.aggregates)
        strip = {"metric", "group", "ci_low", "ci_high"}
        assert [a.metric for a in quick.aggregates] == [a.metric for a in full.aggregates]
        for fast, exact in zip(quick.aggregates, full.aggregates, strict=True):
            # summed by SQLite against numpy: equal up to rounding
            for field, value in exact.model_dump(exclude=strip).items():
                got = getattr(fast, field)
                assert got == (value if value is None else pytest.approx(value, rel=1e-9, abs=1e-12)), (
                    fast.metric,
                    field,
                )
        assert quick.hidden_sub_scores == full.hidden_sub_scores
        assert quick.distributions == full.distributions
        assert quick.unscored == full.unscored and quick.not_applicable == full.not_applicable
