"""How many reviewed cases give a κ interval of a given width: the simulation, the search,
the CLI's line and the table in docs/reviewing.md, against hand-worked values."""

from __future__ import annotations

import functools
import importlib.util
import math
import re
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from clineval.agreement import cluster, stats
from clineval.review.sample_size import (
    joint_distribution,
    required_cases,
    search_sims,
    simulate_ratings,
    simulate_widths,
    width_note,
)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "validation" / "review_sample_size.py"


@functools.cache
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("review_sample_size", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- the 2×2 table


def _kappa_of(table: np.ndarray) -> float:
    p_o = table[0, 0] + table[1, 1]
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    p_e = rows[0] * cols[0] + rows[1] * cols[1]
    return float((p_o - p_e) / (1 - p_e))


def test_joint_distribution_has_the_asked_kappa_and_rate() -> None:
    # κ = 0.6, p = 0.5: p_yy = 0.25 + 0.6·0.25 = 0.4, p_yn = p_ny = 0.4·0.25 = 0.1, p_nn = 0.4
    table = joint_distribution(0.6, 0.5)
    assert table.ravel().tolist() == pytest.approx([0.4, 0.1, 0.1, 0.4])
    # p_o = 0.8, p_e = 0.5·0.5 + 0.5·0.5 = 0.5: κ = 0.3 / 0.5 = 0.6
    assert _kappa_of(table) == pytest.approx(0.6)
    # κ = 0.4, p = 0.8: p(1−p) = 0.16; p_yy = 0.64 + 0.064 = 0.704, p_yn = 0.6·0.16 = 0.096,
    # p_nn = 0.04 + 0.064 = 0.104; both say yes 0.704 + 0.096 = 0.8 of the time
    table = joint_distribution(0.4, 0.8)
    assert table.ravel().tolist() == pytest.approx([0.704, 0.096, 0.096, 0.104])
    assert table.sum(axis=1).tolist() == pytest.approx([0.8, 0.2])
    assert table.sum(axis=0).tolist() == pytest.approx([0.8, 0.2])
    assert _kappa_of(table) == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("kappa", "rate", "message"),
    [
        (0.6, 0.0, "positive_rate must be strictly between 0 and 1"),
        (0.6, 1.2, "positive_rate must be strictly between 0 and 1"),
        (1.5, 0.5, "kappa must be between -1 and 1"),
        # p = 0.8: p_nn = 0.04 + κ·0.16 ≥ 0 needs κ ≥ −0.25
        (-0.3, 0.8, "kappa must be between -0.25 and 1"),
    ],
)
def test_impossible_settings_are_refused(kappa: float, rate: float, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        joint_distribution(kappa, rate)


# --------------------------------------------------------------------------- the simulated labels


def test_simulated_labels_have_the_table_and_the_within_case_correlation() -> None:
    reviewer, judge, groups = simulate_ratings(
        4000,
        kappa=0.6,
        positive_rate=0.8,
        items_per_case=5,
        within_case_correlation=0.3,
        rng=np.random.default_rng(7),
    )
    assert len(reviewer) == len(judge) == len(groups) == 20000
    assert groups[:6] == ["case00000"] * 5 + ["case00001"]
    r = np.asarray(reviewer).reshape(4000, 5)
    j = np.asarray(judge).reshape(4000, 5)
    assert r.mean() == pytest.approx(0.8, abs=0.015)
    assert j.mean() == pytest.approx(0.8, abs=0.015)
    counts = np.array([[(r & j).sum(), (r & ~j).sum()], [(~r & j).sum(), (~r & ~j).sum()]], dtype=float)
    assert _kappa_of(counts / counts.sum()) == pytest.approx(0.6, abs=0.03)
    # every item-level label is correlated 0.3 between two items of one case
    for labels in (r, j, r == j):
        first, second = labels[:, 0].astype(float), labels[:, 1].astype(float)
        assert np.corrcoef(first, second)[0, 1] == pytest.approx(0.3, abs=0.05)


def test_correlation_one_gives_every_item_of_a_case_the_same_pair_and_cases_are_nested() -> None:
    reviewer, judge, _ = simulate_ratings(
        50, kappa=0.5, positive_rate=0.5, items_per_case=3, within_case_correlation=1.0,
        rng=np.random.default_rng(1),
    )  # fmt: skip
    pairs = np.asarray(list(zip(reviewer, judge, strict=True))).reshape(50, 3, 2)
    assert (pairs == pairs[:, :1, :]).all()
    # the first 20 cases of a set of 30 are the set of 20 (the same random numbers)
    small = simulate_ratings(20, kappa=0.5, positive_rate=0.5, items_per_case=3, rng=np.random.default_rng(4))
    large = simulate_ratings(30, kappa=0.5, positive_rate=0.5, items_per_case=3, rng=np.random.default_rng(4))
    assert large[0][:60] == small[0] and large[1][:60] == small[1]


def test_a_case_level_interval_is_the_one_the_case_rows_report() -> None:
    """With one item per case, the cluster interval of a simulation is the case bootstrap
    :func:`clineval.agreement.stats.bootstrap_ci` gives (the case rows' κ) on the same seed."""
    reviewer, judge, groups = simulate_ratings(30, kappa=0.6, positive_rate=0.5, rng=np.random.default_rng(3))
    mine = cluster.cluster_interval(cluster.kappa(judge, reviewer, labels=[False, True]), groups, seed=0)
    theirs = stats.bootstrap_ci(
        functools.partial(stats.cohen_kappa, labels=[False, True]), judge, reviewer, seed=0
    )
    assert mine.low == pytest.approx(theirs.low) and mine.high == pytest.approx(theirs.high)


# --------------------------------------------------------------------------- widths


def test_widths_shrink_as_cases_grow() -> None:
    medians = [
        simulate_widths(n, kappa=0.6, positive_rate=0.5, n_sims=30, n_resamples=200).median
        for n in (10, 20, 40, 80)
    ]
    assert all(math.isfinite(m) for m in medians)
    assert medians == sorted(medians, reverse=True) and len(set(medians)) == 4
    # about 1/√n: 80 cases give roughly half the width of 20 (0.5 ± 0.1)
    assert medians[3] / medians[1] == pytest.approx(0.5, abs=0.1)


def test_more_within_case_correlation_widens_the_fact_level_interval() -> None:
    medians = [
        simulate_widths(
            40,
            kappa=0.6,
            positive_rate=0.5,
            items_per_case=5,
            within_case_correlation=c,
            n_sims=30,
            n_resamples=200,
        ).median
        for c in (0.0, 0.3, 0.8)
    ]
    assert medians[0] < medians[1] < medians[2] < math.inf
    # five independent facts per case: about 1/√5 of the case-level width of 40 cases
    case_level = simulate_widths(40, kappa=0.6, positive_rate=0.5, n_sims=30, n_resamples=200).median
    assert medians[0] / case_level == pytest.approx(5**-0.5, abs=0.08)


def test_simulations_without_a_usable_interval_are_counted_and_count_as_wider_than_any() -> None:
    # κ 0.8 at a yes rate of 0.8 from 3 cases: both raters say yes to all three in
    # p_yy³ = (0.64 + 0.128)³ = 0.768³ ≈ 45 % of the simulations (κ undefined)
    result = simulate_widths(3, kappa=0.8, positive_rate=0.8, n_sims=200, n_resamples=50)
    assert 0.35 * 200 < result.undefined < 0.55 * 200
    # from 10 cases: they agree on all ten in (0.768 + 0.104)^10 ≈ 25 %, and one of them says
    # yes to all ten in about 2·0.8^10 ≈ 21 %: every resample then gives the same κ, an
    # interval of no width; with the undefined ones that is over half, so the median is ∞
    result = simulate_widths(10, kappa=0.8, positive_rate=0.8, n_sims=200, n_resamples=200)
    assert 0.3 * 200 < result.degenerate < 0.6 * 200
    assert result.usable == 200 - result.undefined - result.no_interval - result.degenerate
    assert result.usable < 100 and result.median == math.inf and result.p90 == math.inf
    assert 0 < result.p10 < math.inf


# --------------------------------------------------------------------------- cases needed


def test_required_cases_on_a_small_setting() -> None:
    # κ 0.8, yes 50 %: p_o = 0.9, p_e = 0.5, so the standard error is about
    # √(0.9·0.1/n)/0.5 = 0.6/√n and the interval 3.92·0.6/√n ≈ 2.35/√n wide: about 22 cases for 0.5
    found = required_cases(0.5, kappa=0.8, positive_rate=0.5)
    assert found is not None and 15 <= found <= 32

    def median(n: int) -> float:
        return simulate_widths(n, kappa=0.8, positive_rate=0.5, n_sims=search_sims(n)).median

    # the smallest such number with the search's own simulations (a step of one case here)
    assert median(found) <= 0.5 < median(found - 1)


def test_the_search_spends_its_simulations_where_widths_vary_most() -> None:
    # 6,000,000 / (items × 1,000 resamples), from 10 to 200
    assert search_sims(20) == 200
    assert search_sims(100) == 60
    assert search_sims(400) == 15
    assert search_sims(80 * 5) == 15  # 80 cases of five facts: 400 items
    assert search_sims(2000) == 10


def test_required_cases_says_none_beyond_the_cap() -> None:
    # 0.1 wide needs hundreds of cases; with at most 50 there is no answer
    assert required_cases(0.1, kappa=0.6, positive_rate=0.5, max_cases=50) is None
    with pytest.raises(ValueError, match="target_width must be a positive number"):
        required_cases(0.0, kappa=0.6, positive_rate=0.5)


# --------------------------------------------------------------------------- the CLI's line


def test_width_note_wording_and_its_estimate() -> None:
    # 0.4 wide from 20 cases, target 0.2: 20·(0.4/0.2)² = 80 cases, 60 more
    assert width_note(0.4, 20, 112, items="facts") == (
        "κ interval 0.40 wide from 20 cases (112 facts); about 80 cases (60 more) for 0.20, "
        "if the width shrinks as 1/√cases (table: docs/reviewing.md#how-many-cases)"
    )
    # 0.31 from 20, target 0.2: 20·1.55² = 48.05, so 49; one item per case is not repeated
    assert width_note(0.31, 20, 20).startswith(
        "κ interval 0.31 wide from 20 cases; about 49 cases (29 more) for 0.20"
    )
    # target 0.3 from 0.6 at 10 cases: 10·4 = 40
    assert "about 40 cases (30 more) for 0.30" in width_note(0.6, 10, 10, target=0.3)
    assert width_note(0.15, 40, 200, items="facts") == (
        "κ interval 0.15 wide from 40 cases (200 facts): narrower than 0.20 already "
        "(table: docs/reviewing.md#how-many-cases)"
    )
    assert width_note(None, 1, 4, items="facts").startswith("no κ interval yet from 1 case (4 facts)")


# --------------------------------------------------------------------------- the docs


def _doc_cell(row: str, column: str) -> str:
    text = (ROOT / "docs" / "reviewing.md").read_text(encoding="utf-8")
    assert "<!-- sample-size:start -->" in text, "docs/reviewing.md has no sample-size block"
    block = text.split("<!-- sample-size:start -->", 1)[1].split("<!-- sample-size:end -->", 1)[0]
    table = block.split("**Case level**", 1)[1].split("\n\n", 2)[1]
    lines = [[c.strip() for c in line.strip().strip("|").split("|")] for line in table.splitlines()]
    header = lines[0]
    found = next(line for line in lines[2:] if line[0] == row)
    return found[header.index(column)]


def test_the_docs_table_is_what_the_script_computes() -> None:
    module = script()
    setting = module.Setting(0.6, 0.5)
    expected = module.format_cell(module.cell(setting, 20))
    assert _doc_cell("20", setting.label) == expected
    # and that is the simulation with the documented settings: 200 × 1,000, seed 0
    result = simulate_widths(20, kappa=0.6, positive_rate=0.5, n_sims=200, n_resamples=1000, seed=0)
    assert expected.startswith(f"{result.median:.2f} ({result.p10:.2f}–{result.p90:.2f})")


def test_write_docs_replaces_only_its_block(tmp_path: Path) -> None:
    module = script()
    doc = tmp_path / "reviewing.md"
    module.write_docs("TABLE 1", "cmd", doc=doc)
    created = doc.read_text(encoding="utf-8")
    assert created.startswith("## How many cases\n\n") and "TABLE 1" in created
    doc.write_text(created.replace("## How many cases", "# Reviewing\n\nText.\n\n## How many cases"))
    module.write_docs("TABLE 2", "cmd", doc=doc)
    text = doc.read_text(encoding="utf-8")
    assert "TABLE 1" not in text and "TABLE 2" in text and text.startswith("# Reviewing\n\nText.\n\n")
    # no markers: a section is added at the end, the rest is kept
    doc.write_text("# Reviewing\n\nOther text.\n", encoding="utf-8")
    module.write_docs("TABLE 3", "cmd", doc=doc)
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Reviewing\n\nOther text.\n\n## How many cases\n")
    assert text.count("<!-- sample-size:start -->") == 1 and "TABLE 3" in text
