"""The SVG plots and their PNG export (clineval.viewer.plots), with hand-computed positions.

The distribution plot's plot area runs from x = 44 to x = width - 14 (302 px wide at the
default width 360), so a value v of a [0, 1] score is drawn at 44 + 302 v.
"""

from __future__ import annotations

import math
import re
import struct
from pathlib import Path

import pytest

from clineval.viewer import plots

LEFT, RIGHT = 44.0, 346.0  # the plot area at the default width


def _x(value: float) -> float:
    return LEFT + value * (RIGHT - LEFT)


def _attr(svg: str, css_class: str, name: str) -> list[float]:
    """The values of attribute ``name`` of every element whose class is ``css_class``."""
    pattern = re.compile(rf'<\w+ class="{re.escape(css_class)}"[^>]*?\b{name}="([-\d.]+)"')
    return [float(v) for v in pattern.findall(svg)]


def _bars(svg: str) -> list[str]:
    return re.findall(r'<rect class="bar"[^>]*>(?:<title>[^<]*</title></rect>)?', svg)


def test_one_bar_per_bin_with_the_counts() -> None:
    svg = plots.distribution_svg([0.05, 0.15, 0.15, 0.95], title="tbfact")
    bars = _bars(svg)
    assert len(bars) == 10  # scores in [0, 1]: ten bins of 0.1
    assert "0 to 0.1: 1 case<" in svg and "0.1 to 0.2: 2 cases<" in svg and "0.9 to 1: 1 case<" in svg
    assert svg.count(": 0 cases<") == 7
    heights = _attr(svg, "bar", "height")
    assert heights[1] == pytest.approx(2 * heights[0], abs=0.02) and heights[2] == 0
    assert len(_bars(plots.distribution_svg([0.1, 0.2], title="x", bins=4))) == 4


def test_histogram_edges() -> None:
    # [a, b) bins, the last one closed; 0.3 is not lost to rounding (0.3 / 0.1 = 2.9999...)
    assert plots.histogram([0.0, 0.1, 0.3, 0.99, 1.0], 0.0, 1.0, 10) == [1, 1, 0, 1, 0, 0, 0, 0, 0, 2]


def test_range_and_bins_of_values_outside_zero_one() -> None:
    # 3 values over 0.2..5.5: a round bin width of 2 (about 5 bins asked), range rounded out to 0..6
    assert plots.bins_and_range([0.2, 0.3, 5.5]) == (0.0, 6.0, 3)
    assert plots.bins_and_range([0.0, 1.0, 0.5]) == (0.0, 1.0, 10)
    # seconds are no score: their own range (0.02-wide bins for values up to 0.078), not [0, 1]
    low, high, bins = plots.bins_and_range([0.001, 0.003, 0.078], score_range=False)
    assert (low, high, bins) == (0.0, pytest.approx(0.08), 4)
    low, high, bins = plots.bins_and_range([3.0, 3.0])
    assert (low, high, bins) == (pytest.approx(2.7), pytest.approx(3.3), 5)


def test_mean_marker_and_ci_at_the_right_x() -> None:
    svg = plots.distribution_svg([0.2, 0.4], title="rouge", ci=(0.25, 0.35))
    assert _attr(svg, "mean", "x1") == [pytest.approx(_x(0.3), abs=0.01)]  # 134.6
    assert _attr(svg, "ci", "x") == [pytest.approx(_x(0.25), abs=0.01)]  # 119.5
    assert _attr(svg, "ci", "width") == [pytest.approx(0.1 * 302, abs=0.02)]
    assert "mean 0.3 (95% CI 0.25–0.35)" in svg
    # a given mean (the aggregate's) wins over the values' own
    assert _attr(plots.distribution_svg([0.2, 0.4], title="r", mean=0.5), "mean", "x1") == [_x(0.5)]


def test_no_scored_values_is_a_plot_not_an_error() -> None:
    for values in ([], [math.nan], [math.inf, -math.inf]):
        svg = plots.distribution_svg(values, title="rubric", unscored=25)
        assert "no scored values (25 unscored)" in svg
        assert _bars(svg) == [] and 'class="mean"' not in svg
        assert svg.startswith("<svg") and svg.endswith("</svg>")


def test_all_equal_values() -> None:
    svg = plots.distribution_svg([0.5] * 5, title="exact_match")
    assert "0.5 to 0.6: 5 cases" in svg and _attr(svg, "mean", "x1") == [_x(0.5)]
    svg = plots.distribution_svg([3.0] * 4, title="latency", lower_is_better=True, x_label="seconds")
    assert len(_bars(svg)) == 5 and "2.94 to 3.06: 4 cases"  # ±10 % around 3 in 5 bins: the middle one in svg
    assert _attr(svg, "mean", "x1") == [pytest.approx((LEFT + RIGHT) / 2)]
    assert "seconds (lower is better ↓)" in svg


def test_nan_and_infinite_values_are_left_out() -> None:
    svg = plots.distribution_svg([0.5, math.nan, math.inf, 0.7], title="t")
    assert "n = 2" in svg and "mean 0.6" in svg
    assert sum(int(n) for n in re.findall(r": (\d+) cases?<", svg)) == 2


def test_accessible_escaped_and_self_contained() -> None:
    svg = plots.distribution_svg([0.1, 0.9], title='<script>alert(1)</script>"><img src=x onerror=alert(1)>')
    assert "<script" not in svg and "<img" not in svg
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg
    title = re.search(r'<title id="(plot-[0-9a-f]+-t)">([^<]*)</title>', svg)
    assert title is not None and f'aria-labelledby="{title.group(1)} ' in svg and 'role="img"' in svg
    assert "<desc " in svg and "Histogram of 2 scored values" in svg
    assert "href" not in svg and "url(" not in svg and "@import" not in svg


def test_same_input_same_bytes() -> None:
    values = [0.13, 0.5, 0.77, 0.5, 1.0]
    first = plots.distribution_svg(values, title="tbfact", ci=(0.4, 0.8))
    assert plots.distribution_svg(list(values), title="tbfact", ci=(0.4, 0.8)) == first
    assert plots.distribution_svg(values, title="tbfact2", ci=(0.4, 0.8)) != first
    rows = [("tbfact", -0.1, -0.2, -0.01)]
    assert plots.compare_svg(rows, title="B vs A") == plots.compare_svg(list(rows), title="B vs A")


def test_forest_plot_rows_zero_line_and_colours() -> None:
    rows = [
        ("tbfact", -0.1, -0.2, -0.02),  # whole CI below 0: regressed
        ("rouge", 0.01, -0.02, 0.04),  # CI spans 0: no significant change
        ("latency", -0.3, -0.4, -0.1),  # lower is better: a drop is an improvement
        ("bleu", None, None, None),
    ]
    svg = plots.compare_svg(rows, title="B vs A", lower_is_better={"latency"})
    assert len(re.findall(r'<polygon class="delta ', svg)) == 3
    assert 'class="delta row-regressed"' in svg and f'fill="{plots.REGRESSED}"' in svg
    assert 'class="delta row-improved"' in svg and 'class="delta row-no-significant-change"' in svg
    assert "not comparable" in svg and "latency ↓" in svg
    assert "−0.100 [−0.200, −0.020]" in svg
    # the zero line halfway across the symmetric axis, with Δ = -0.3 drawn left of it
    plot_area = re.search(r'<rect class="plot-area" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', svg)
    assert plot_area is not None
    left, width = float(plot_area.group(1)), float(plot_area.group(2))
    zero = _attr(svg, "zero", "x1")
    assert zero == [pytest.approx(left + width / 2, abs=0.01)]
    # the axis: ±(0.4 × 1.1 = 0.44, rounded out to the step 0.5) = ±0.5, so Δ = -0.3 is at 20 %
    tip = re.search(r'class="delta row-improved" points="([\d.]+),', svg)
    assert tip is not None and float(tip.group(1)) == pytest.approx(left + 0.2 * width, abs=0.02)
    assert "−0.5<" in svg and "+0.5<" in svg


def test_forest_plot_takes_the_comparisons_verdicts_and_escapes_names() -> None:
    rows = [("<b>x</b>", -0.1, -0.2, -0.02)]
    svg = plots.compare_svg(rows, title="t", verdicts={"<b>x</b>": "no significant change"})
    assert "row-regressed" not in svg and "row-no-significant-change" in svg
    assert "<b>" not in svg and "&lt;b&gt;x&lt;/b&gt;" in svg
    assert "no metric to compare" in plots.compare_svg([], title="t")


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_png_export(tmp_path: Path) -> None:
    spec = plots.distribution_plot([0.2, 0.4, 0.9], title="tbfact", ci=(0.3, 0.7))
    assert _png_size(plots.to_png(spec, tmp_path / "d.png")) == (1080, 480)  # 360 × 160 at 3×
    compare = plots.compare_plot([("tbfact", -0.1, -0.2, -0.02)], title="B vs A")
    width, height = _png_size(plots.to_png(compare, tmp_path / "c.png", scale=1))
    assert (width, height) == (compare.width, compare.height)
    empty = plots.distribution_plot([], title="rubric")
    assert _png_size(plots.to_png(empty, tmp_path / "e.png", scale=2)) == (720, 320)
