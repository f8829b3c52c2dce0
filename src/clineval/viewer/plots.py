"""Plots for the viewer and the HTML report: inline SVG, and PNG for papers.

Each plot is laid out once, as a :class:`PlotSpec` (rectangles, lines, polygons and texts
in pixel coordinates), and drawn two ways from that one layout:

* :meth:`PlotSpec.to_svg` writes a small hand-written ``<svg>`` string: no external
  reference, no script, an accessible ``<title>`` and ``<desc>``, presentation attributes
  inline (so a saved SVG looks the same outside the page), and nothing that changes from
  one call to the next (the ids are derived from the content), so the same values always
  give byte-identical SVG;
* :func:`to_png` draws the same primitives with matplotlib (imported there, not at module
  level: neither ``clineval --help`` nor the HTML report needs it) into a PNG at
  ``scale`` times the size (3 by default: 288 dpi, enough for a printed figure).

:func:`distribution_svg` is a histogram of one metric's scored values with the mean and,
when given, its 95 % confidence interval; :func:`compare_svg` is a forest plot of the
change of each metric between two runs (Δ with its interval, a zero line, regressions in
red and improvements in green). :func:`distribution_plot` and :func:`compare_plot` return
the layouts for :func:`to_png`.
"""

from __future__ import annotations

import hashlib
import html
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Anchor = Literal["start", "middle", "end"]

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"

#: The palette: the viewer's CSS colours (static/viewer.css: --ink, --muted, --line, --accent,
#: --fail, --pass), so that the plots look like the pages around them.
INK = "#1d2430"
MUTED = "#5f6b7a"
GRID = "#dde2e8"
AXIS = "#9aa4b2"
BAR = "#4d7fbf"
CI_FILL = "#f2b134"
MEAN = "#16243a"
REGRESSED = "#b3261e"
IMPROVED = "#1d7a3e"
NEUTRAL = "#6b7280"

#: The colour of each verdict of a comparison (see :mod:`clineval.compare.comparison`).
VERDICT_COLOURS = {
    "regressed": REGRESSED,
    "improved": IMPROVED,
    "no significant change": NEUTRAL,
    "not comparable": AXIS,
}


# --- the layout ------------------------------------------------------------------------


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    width: float
    height: float
    fill: str
    opacity: float = 1.0
    stroke: str | None = None
    css_class: str = ""
    tooltip: str | None = None


@dataclass(frozen=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str
    width: float = 1.0
    dash: tuple[float, float] | None = None
    css_class: str = ""


@dataclass(frozen=True)
class Polygon:
    points: tuple[tuple[float, float], ...]
    fill: str
    css_class: str = ""
    tooltip: str | None = None


@dataclass(frozen=True)
class Text:
    x: float
    y: float
    text: str
    size: float = 11.0
    fill: str = INK
    anchor: Anchor = "start"
    bold: bool = False
    rotate: float = 0.0
    css_class: str = ""


Item = Rect | Line | Polygon | Text


@dataclass
class PlotSpec:
    """One plot's layout in pixels; drawn as SVG by :meth:`to_svg`, as PNG by :func:`to_png`."""

    width: int
    height: int
    title: str
    desc: str
    kind: str
    items: list[Item] = field(default_factory=list)

    def to_svg(self) -> str:
        """The plot as an inline-able ``<svg>`` element (deterministic; no external reference)."""
        digest = hashlib.sha256(repr((self.kind, self.title, self.desc, self.items)).encode()).hexdigest()
        ident = f"plot-{digest[:10]}"
        parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" class="plot plot-{self.kind}" '
            f'width="{self.width}" height="{self.height}" viewBox="0 0 {self.width} {self.height}" '
            f'role="img" aria-labelledby="{ident}-t {ident}-d" font-family="{_attr(FONT)}">',
            f'<title id="{ident}-t">{_esc(self.title)}</title>',
            f'<desc id="{ident}-d">{_esc(self.desc)}</desc>',
            f'<rect class="background" x="0" y="0" width="{self.width}" height="{self.height}" '
            'fill="#ffffff"/>',
        ]
        parts += [_svg_item(item) for item in self.items]
        parts.append("</svg>")
        return "\n".join(parts)


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


def _attr(text: str) -> str:
    return html.escape(text, quote=True)


def _n(value: float) -> str:
    """A coordinate, short and stable: ``12``, ``12.5``, ``12.33``."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _cls(css_class: str) -> str:
    return f' class="{_attr(css_class)}"' if css_class else ""


def _svg_item(item: Item) -> str:
    if isinstance(item, Rect):
        extra = f' fill-opacity="{_n(item.opacity)}"' if item.opacity != 1.0 else ""
        if item.stroke:
            extra += f' stroke="{item.stroke}"'
        head = (
            f'<rect{_cls(item.css_class)} x="{_n(item.x)}" y="{_n(item.y)}" width="{_n(item.width)}" '
            f'height="{_n(item.height)}" fill="{item.fill}"{extra}'
        )
        if item.tooltip:
            return f"{head}><title>{_esc(item.tooltip)}</title></rect>"
        return head + "/>"
    if isinstance(item, Line):
        dash = f' stroke-dasharray="{_n(item.dash[0])} {_n(item.dash[1])}"' if item.dash else ""
        return (
            f'<line{_cls(item.css_class)} x1="{_n(item.x1)}" y1="{_n(item.y1)}" x2="{_n(item.x2)}" '
            f'y2="{_n(item.y2)}" stroke="{item.stroke}" stroke-width="{_n(item.width)}"{dash}/>'
        )
    if isinstance(item, Polygon):
        points = " ".join(f"{_n(x)},{_n(y)}" for x, y in item.points)
        head = f'<polygon{_cls(item.css_class)} points="{points}" fill="{item.fill}"'
        if item.tooltip:
            return f"{head}><title>{_esc(item.tooltip)}</title></polygon>"
        return head + "/>"
    weight = ' font-weight="600"' if item.bold else ""
    anchor = f' text-anchor="{item.anchor}"' if item.anchor != "start" else ""
    rotate = f' transform="rotate({_n(item.rotate)} {_n(item.x)} {_n(item.y)})"' if item.rotate else ""
    return (
        f'<text{_cls(item.css_class)} x="{_n(item.x)}" y="{_n(item.y)}" font-size="{_n(item.size)}" '
        f'fill="{item.fill}"{anchor}{weight}{rotate}>{_esc(item.text)}</text>'
    )


# --- numbers ---------------------------------------------------------------------------


def _finite(values: Iterable[float | None]) -> list[float]:
    out: list[float] = []
    for value in values:
        if value is None or isinstance(value, bool):
            continue
        try:
            number = float(value)
        except (TypeError, ValueError):
            continue
        if math.isfinite(number):
            out.append(number)
    return out


def nice_step(span: float, target: int = 5) -> float:
    """A round step (1, 2 or 5 times a power of ten) giving about ``target`` ticks over ``span``."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / target
    power = 10.0 ** math.floor(math.log10(raw))
    for multiple in (1, 2, 5, 10):
        if raw <= multiple * power:
            return multiple * power
    return 10 * power  # pragma: no cover


def _ticks(low: float, high: float, target: int = 5) -> list[float]:
    step = nice_step(high - low, target)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    return ticks


def fmt(value: float, digits: int = 3) -> str:
    """A value for a label: at most ``digits`` significant decimals, no trailing zeros, a real minus."""
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1000:
        text = f"{value:,.0f}"
    elif magnitude >= 1:
        text = f"{value:.2f}".rstrip("0").rstrip(".")
    else:
        text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
        if text in ("0", "-0"):
            text = f"{value:.1e}"
    return text.replace("-", "−")


def _signed(value: float, digits: int | None = None) -> str:
    """``+0.12`` / ``−0.08`` (a real minus); with ``digits``, that many decimals."""
    if digits is not None:
        return f"{value:+.{digits}f}".replace("-", "−")
    text = fmt(value)
    return text if text.startswith("−") or text == "0" else "+" + text


def _text_width(text: str, size: float) -> float:
    """About how wide ``text`` is in a sans-serif font of ``size`` pixels."""
    return len(text) * size * 0.6


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- the distribution of one metric -----------------------------------------------------


def histogram(values: Sequence[float], low: float, high: float, bins: int) -> list[int]:
    """Counts of ``values`` in ``bins`` equal bins over [low, high] (each bin [a, b), the last [a, b])."""
    counts = [0] * bins
    width = (high - low) / bins
    for value in values:
        index = math.floor((value - low) / width + 1e-9)
        counts[min(max(index, 0), bins - 1)] += 1
    return counts


def bins_and_range(
    values: Sequence[float], bins: int | None = None, *, score_range: bool = True
) -> tuple[float, float, int]:
    """The histogram's range and bin count for ``values`` (not empty).

    Scores within [0, 1] (with ``score_range``): [0, 1] in 10 bins. Other values: bins of a
    round width (about ``ceil(sqrt(n))`` of them, 5 to 20) over the values' range rounded
    out to that width. All values equal: 5 bins centred on the value. ``bins`` forces the count.
    """
    low, high = min(values), max(values)
    if score_range and low >= 0 and high <= 1:
        return 0.0, 1.0, bins or 10
    if low == high:
        pad = abs(low) * 0.1 or 0.5
        return low - pad, high + pad, bins or 5
    target = bins or min(20, max(5, math.ceil(math.sqrt(len(values)))))
    step = nice_step(high - low, target)
    start = math.floor(low / step + 1e-9) * step
    end = math.ceil(high / step - 1e-9) * step
    if end <= start:
        end = start + step
    return start, end, bins or max(1, round((end - start) / step))


def distribution_plot(
    values: Sequence[float],
    *,
    title: str,
    lower_is_better: bool = False,
    width: int = 360,
    height: int = 160,
    bins: int | None = None,
    mean: float | None = None,
    ci: tuple[float | None, float | None] | None = None,
    x_label: str = "score",
    unscored: int = 0,
    score_range: bool = True,
) -> PlotSpec:
    """The layout of :func:`distribution_svg` (for :func:`to_png`)."""
    data = _finite(values)
    direction = "lower is better" if lower_is_better else "higher is better"
    spec = PlotSpec(width=width, height=height, title=title, desc="", kind="distribution")
    items = spec.items
    n_text = f"n = {len(data)}" + (f" · {unscored} unscored" if unscored else "")
    room = width - 30 - _text_width(n_text, 10)
    items.append(
        Text(10, 17, _shorten(title, max(8, int(room / 7.4))), size=12, bold=True, css_class="title")
    )
    items.append(Text(width - 10, 17, n_text, 10, MUTED, "end", css_class="n"))
    left, right, top, bottom = 44.0, width - 14.0, 46.0, height - 34.0
    if not data:
        spec.desc = f"{title}: no scored values" + (f" ({unscored} unscored)" if unscored else "")
        items.append(
            Rect(left, top, right - left, bottom - top, "#f9fafb", stroke=GRID, css_class="plot-area")
        )
        message = "no scored values" + (f" ({unscored} unscored)" if unscored else "")
        items.append(
            Text((left + right) / 2, (top + bottom) / 2 + 4, message, 12, MUTED, "middle", css_class="empty")
        )
        return spec
    low, high, bins = bins_and_range(data, bins, score_range=score_range)
    counts = histogram(data, low, high, bins)
    top_count = max(counts)
    average = mean if mean is not None and math.isfinite(mean) else sum(data) / len(data)

    def x_of(value: float) -> float:
        return left + (min(max(value, low), high) - low) / (high - low) * (right - left)

    def y_of(count: float) -> float:
        return bottom - count / top_count * (bottom - top)

    items.append(Rect(left, top, right - left, bottom - top, "#ffffff", css_class="plot-area"))
    # y grid and ticks: 0, the highest count and a round number between
    y_ticks = sorted({0, top_count, *([round(top_count / 2)] if top_count >= 4 else [])})
    for count in y_ticks:
        y = y_of(count)
        if count:
            items.append(Line(left, y, right, y, GRID, css_class="grid"))
        items.append(Text(left - 6, y + 4, str(count), 10, MUTED, "end", css_class="y-tick"))
    items.append(Text(12, (top + bottom) / 2, "cases", 10, MUTED, "middle", rotate=-90, css_class="y-label"))
    # the confidence interval of the mean, under the bars
    ci_text = ci_label = ""
    if ci is not None and ci[0] is not None and ci[1] is not None:
        ci_low, ci_high = float(ci[0]), float(ci[1])
        ci_label = f" (95% CI {fmt(ci_low)}–{fmt(ci_high)})"
        x1, x2 = x_of(ci_low), x_of(ci_high)
        items.append(
            Rect(
                x1,
                top,
                max(x2 - x1, 1.0),
                bottom - top,
                CI_FILL,
                opacity=0.28,
                css_class="ci",
                tooltip=f"95% CI of the mean: {fmt(ci_low)} to {fmt(ci_high)}",
            )
        )
        ci_text = f", 95% CI {fmt(ci_low)} to {fmt(ci_high)}"
    # the bars
    bin_width = (high - low) / bins
    for index, count in enumerate(counts):
        a, b = low + index * bin_width, low + (index + 1) * bin_width
        x1, x2 = x_of(a), x_of(b)
        y = y_of(count)
        tooltip = f"{fmt(a)} to {fmt(b)}: {count} case{'s' if count != 1 else ''}"
        items.append(
            Rect(x1 + 0.75, y, max(x2 - x1 - 1.5, 0.5), bottom - y, BAR, css_class="bar", tooltip=tooltip)
        )
    # the x axis
    items.append(Line(left, bottom, right, bottom, AXIS, css_class="axis"))
    for tick in _ticks(low, high):
        x = x_of(tick)
        items.append(Line(x, bottom, x, bottom + 4, AXIS, css_class="tick"))
        items.append(Text(x, bottom + 15, fmt(tick), 10, MUTED, "middle", css_class="x-tick"))
    arrow = "↓" if lower_is_better else "↑"
    items.append(
        Text(
            (left + right) / 2,
            height - 5,
            f"{x_label} ({direction} {arrow})",
            10,
            MUTED,
            "middle",
            css_class="x-label",
        )
    )
    # the mean: a dashed line with a marker and its value above the plot
    xm = x_of(average)
    items.append(Line(xm, top - 2, xm, bottom, MEAN, 1.5, dash=(4, 3), css_class="mean"))
    items.append(
        Polygon(
            ((xm - 5, top - 9), (xm + 5, top - 9), (xm, top - 2)),
            MEAN,
            css_class="mean-marker",
            tooltip=f"mean {fmt(average)}",
        )
    )
    label = f"mean {fmt(average)}{ci_label}"
    half = _text_width(label, 10) / 2
    lx = min(max(xm, left + half), right - half) if half < (right - left) / 2 else (left + right) / 2
    items.append(Text(lx, top - 12, label, 10, INK, "middle", bold=True, css_class="mean-label"))
    extra = f"; {unscored} unscored" if unscored else ""
    spec.desc = (
        f"Histogram of {len(data)} scored values of {title} in {bins} bins from {fmt(low)} to {fmt(high)} "
        f"({direction}): mean {fmt(average)}{ci_text}, min {fmt(min(data))}, max {fmt(max(data))}{extra}."
    )
    return spec


def distribution_svg(
    values: Sequence[float],
    *,
    title: str,
    lower_is_better: bool = False,
    width: int = 360,
    height: int = 160,
    bins: int | None = None,
    mean: float | None = None,
    ci: tuple[float | None, float | None] | None = None,
    x_label: str = "score",
    unscored: int = 0,
    score_range: bool = True,
) -> str:
    """A histogram of one metric's values as an inline ``<svg>``, with the mean and its CI marked.

    NaN, infinite and ``None`` values are left out; no value left gives a plot that says
    "no scored values" (not an exception). Scores within [0, 1] get 10 bins over [0, 1];
    other values (and any with ``score_range=False``, e.g. seconds) about ``ceil(sqrt(n))``
    bins of a round width (5 to 20) over their range rounded out. ``mean``
    defaults to the values' mean; ``ci`` (the aggregate's 95 % interval) is drawn as a band
    when given.
    """
    return distribution_plot(
        values,
        title=title,
        lower_is_better=lower_is_better,
        width=width,
        height=height,
        bins=bins,
        mean=mean,
        ci=ci,
        x_label=x_label,
        unscored=unscored,
        score_range=score_range,
    ).to_svg()


# --- the change of each metric between two runs -----------------------------------------

CompareRow = tuple[str, float | None, float | None, float | None]


def _interval_text(delta: float | None, low: float | None, high: float | None) -> str:
    """``+0.050 [+0.010, +0.090]``; ``–`` without a delta."""
    if delta is None or not math.isfinite(delta):
        return "–"
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return _signed(delta, 3)
    return f"{_signed(delta, 3)} [{_signed(low, 3)}, {_signed(high, 3)}]"


def _row_verdict(
    metric: str, delta: float | None, low: float | None, high: float | None, lower_is_better: bool
) -> str:
    """Without a comparison's verdict: regressed/improved when the whole CI lies on one side of 0."""
    if delta is None or low is None or high is None:
        return "not comparable"
    if low > 0 or high < 0:
        up = low > 0
        return "improved" if up != lower_is_better else "regressed"
    return "no significant change"


def compare_plot(
    rows: Sequence[CompareRow],
    *,
    title: str,
    width: int = 640,
    verdicts: Mapping[str, str] | None = None,
    lower_is_better: Collection[str] = (),
    x_label: str = "Δ (B − A)",
) -> PlotSpec:
    """The layout of :func:`compare_svg` (for :func:`to_png`)."""
    row_height = 24.0
    top = 48.0
    n = max(len(rows), 1)
    height = int(top + n * row_height + 44)
    spec = PlotSpec(width=width, height=height, title=title, desc="", kind="compare")
    items = spec.items
    items.append(
        Text(10, 18, _shorten(title, max(8, int((width - 300) / 7.4))), size=12, bold=True, css_class="title")
    )
    # legend, top right: a key, its name, the next key
    names = ("regressed", "improved", "no significant change")
    x = width - 10.0 - sum(12 + _text_width(name, 10) + 14 for name in names) + 14
    for name in names:
        items.append(Rect(x, 10, 8, 8, VERDICT_COLOURS[name], css_class="legend-key"))
        items.append(Text(x + 12, 18, name, 10, MUTED, css_class="legend"))
        x += 12 + _text_width(name, 10) + 14
    labels = [_shorten(row[0] + (" ↓" if row[0] in lower_is_better else ""), 30) for row in rows]
    left = 16 + max([_text_width(label, 11) for label in labels] + [40.0])
    value_texts = [_interval_text(row[1], row[2], row[3]) for row in rows]
    right = width - 24 - max([_text_width(text, 11) for text in value_texts] + [60.0])
    bottom = top + n * row_height
    if not rows:
        spec.desc = f"{title}: no metric to compare"
        items.append(
            Text((left + right) / 2, top + 16, "no metric to compare", 12, MUTED, "middle", css_class="empty")
        )
        return spec
    spread = _finite([v for row in rows for v in row[1:]])
    extent = max([abs(v) for v in spread] + [1e-9]) * 1.1
    step = nice_step(2 * extent, 4)
    extent = math.ceil(extent / step) * step

    def x_of(value: float) -> float:
        return left + (value + extent) / (2 * extent) * (right - left)

    items.append(Rect(left, top - 6, right - left, bottom - top + 6, "#ffffff", css_class="plot-area"))
    for index in range(1, len(rows), 2):  # every other row striped, behind the grid
        items.append(Rect(0, top + index * row_height, width, row_height, "#f6f7f9", css_class="stripe"))
    for tick in _ticks(-extent, extent, 4):
        xt = x_of(tick)
        if tick != 0:
            items.append(Line(xt, top - 6, xt, bottom, GRID, css_class="grid"))
        items.append(Line(xt, bottom, xt, bottom + 4, AXIS, css_class="tick"))
        items.append(
            Text(xt, bottom + 15, _signed(tick) if tick else "0", 10, MUTED, "middle", css_class="x-tick")
        )
    items.append(Line(left, bottom, right, bottom, AXIS, css_class="axis"))
    items.append(Line(x_of(0), top - 6, x_of(0), bottom, INK, 1.2, dash=(3, 3), css_class="zero"))
    items.append(Text(width - 10, top - 10, "Δ [95% CI]", 10, MUTED, "end", bold=True, css_class="header"))
    items.append(Text((left + right) / 2, height - 8, x_label, 10, MUTED, "middle", css_class="x-label"))
    described: list[str] = []
    for index, (row, label) in enumerate(zip(rows, labels, strict=True)):
        metric, delta, low, high = row
        y = top + index * row_height + row_height / 2
        verdict = (verdicts or {}).get(metric) or _row_verdict(
            metric, delta, low, high, metric in lower_is_better
        )
        colour = VERDICT_COLOURS.get(verdict, NEUTRAL)
        cls = "row-" + verdict.replace(" ", "-")
        items.append(
            Text(
                left - 8,
                y + 4,
                label,
                11,
                INK,
                "end",
                bold=verdict in ("regressed", "improved"),
                css_class="metric " + cls,
            )
        )
        if delta is None or not math.isfinite(delta):
            items.append(Text(x_of(0) + 6, y + 4, "not comparable", 10, MUTED, css_class="nc " + cls))
            items.append(Text(width - 10, y + 4, "–", 11, MUTED, "end", css_class="value " + cls))
            described.append(f"{metric}: not comparable")
            continue
        if low is not None and high is not None and math.isfinite(low) and math.isfinite(high):
            items.append(Line(x_of(low), y, x_of(high), y, colour, 2, css_class="ci " + cls))
            for end in (low, high):
                items.append(Line(x_of(end), y - 5, x_of(end), y + 5, colour, 2, css_class="ci-cap " + cls))
            interval = f" [{_signed(low, 3)}, {_signed(high, 3)}]"
        else:
            interval = ""
        xd = x_of(delta)
        items.append(
            Polygon(
                ((xd, y - 6), (xd + 6, y), (xd, y + 6), (xd - 6, y)),
                colour,
                css_class="delta " + cls,
                tooltip=f"{metric}: Δ {_signed(delta, 3)}{interval} ({verdict})",
            )
        )
        items.append(
            Text(
                width - 10,
                y + 4,
                f"{_signed(delta, 3)}{interval}",
                11,
                colour if verdict in ("regressed", "improved") else INK,
                "end",
                css_class="value " + cls,
            )
        )
        described.append(f"{metric}: Δ {_signed(delta, 3)}{interval}, {verdict}")
    spec.desc = f"{title}. Forest plot of the change of each metric, B minus A, with 95% CIs: " + "; ".join(
        described
    )
    return spec


def compare_svg(
    rows: Sequence[CompareRow],
    *,
    title: str,
    width: int = 640,
    verdicts: Mapping[str, str] | None = None,
    lower_is_better: Collection[str] = (),
    x_label: str = "Δ (B − A)",
) -> str:
    """A forest plot of each metric's change, as an inline ``<svg>``.

    ``rows``: (metric, delta, ci_low, ci_high), one row per metric, top to bottom. A row is
    coloured by its verdict in ``verdicts`` (``clineval compare``'s, Holm-adjusted) when
    given; otherwise it is a regression (red) when the whole interval lies on the bad side
    of zero (below it, or above it for a metric in ``lower_is_better``, marked ↓), an
    improvement (green) when on the good side, grey otherwise. A ``None`` delta is drawn
    as "not comparable". All rows share one axis, symmetric around zero.
    """
    return compare_plot(
        rows, title=title, width=width, verdicts=verdicts, lower_is_better=lower_is_better, x_label=x_label
    ).to_svg()


#: One period of :func:`trend_svg`: (label, mean, ci_low, ci_high).
TrendRow = tuple[str, float | None, float | None, float | None]


def trend_plot(rows: Sequence[TrendRow], *, title: str, width: int = 640, height: int = 220) -> PlotSpec:
    """The layout of :func:`trend_svg` (for :func:`to_png`)."""
    spec = PlotSpec(width=width, height=height, title=title, desc="", kind="trend")
    items = spec.items
    items.append(
        Text(10, 17, _shorten(title, max(8, int((width - 20) / 7.4))), 12, bold=True, css_class="title")
    )
    left, right, top, bottom = 48.0, width - 16.0, 34.0, height - 40.0
    items.append(Rect(left, top, right - left, bottom - top, "#ffffff", stroke=GRID, css_class="plot-area"))
    spread = _finite([v for row in rows for v in row[1:]])
    if not rows or not spread:
        spec.desc = f"{title}: no scored period"
        items.append(Text((left + right) / 2, (top + bottom) / 2, "no scored period", 12, MUTED, "middle"))
        return spec
    low, high = min([0.0, *spread]), max([1.0, *spread])
    step = (right - left) / len(rows)

    def y_of(value: float) -> float:
        return bottom - (value - low) / (high - low) * (bottom - top)

    for tick in _ticks(low, high, 4):
        items.append(Line(left, y_of(tick), right, y_of(tick), GRID, css_class="grid"))
        items.append(Text(left - 6, y_of(tick) + 4, fmt(tick), 10, MUTED, "end", css_class="y-tick"))
    every = max(1, math.ceil(len(rows) * 90 / (right - left)))  # labels ~90 px apart at least
    described: list[str] = []
    previous: tuple[float, float] | None = None
    for index, (label, mean, ci_low, ci_high) in enumerate(rows):
        x = left + step * (index + 0.5)
        if index % every == 0:
            items.append(Text(x, bottom + 15, label, 10, MUTED, "middle", css_class="x-tick"))
        if mean is None or not math.isfinite(mean):
            previous = None
            described.append(f"{label}: not scored")
            continue
        interval = ""
        if ci_low is not None and ci_high is not None:
            items.append(Line(x, y_of(ci_low), x, y_of(ci_high), CI_FILL, 3, css_class="ci"))
            for end in (ci_low, ci_high):
                items.append(Line(x - 5, y_of(end), x + 5, y_of(end), CI_FILL, 2, css_class="ci-cap"))
            interval = f" [{fmt(ci_low)}, {fmt(ci_high)}]"
        point = (x, y_of(mean))
        if previous is not None:
            items.append(Line(previous[0], previous[1], point[0], point[1], BAR, 1.5, css_class="trend"))
        previous = point
        items.append(
            Polygon(
                ((x, point[1] - 5), (x + 5, point[1]), (x, point[1] + 5), (x - 5, point[1])),
                MEAN,
                css_class="mean",
                tooltip=f"{label}: mean {fmt(mean)}{interval}",
            )
        )
        described.append(f"{label}: mean {fmt(mean)}{interval}")
    items.append(Text((left + right) / 2, height - 8, "mean [95% CI] per period", 10, MUTED, "middle"))
    spec.desc = f"{title}. Mean per period with its 95% CI: " + "; ".join(described)
    return spec


def trend_svg(rows: Sequence[TrendRow], *, title: str, width: int = 640, height: int = 220) -> str:
    """A metric's mean per period (a line through the means, each with its 95 % interval as
    an error bar), as an inline ``<svg>``; the y axis spans at least 0 to 1."""
    return trend_plot(rows, title=title, width=width, height=height).to_svg()


# --- PNG ---------------------------------------------------------------------------------


def to_png(spec: PlotSpec, path: str | Path, *, scale: float = 3.0) -> Path:
    """Draw ``spec`` (from :func:`distribution_plot` or :func:`compare_plot`) into a PNG file.

    The PNG is ``scale`` times the plot's pixel size (96 dpi × scale: 288 dpi by default)
    and is drawn with matplotlib from the same layout as the SVG. Returns the path.
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import Polygon as MplPolygon
    from matplotlib.patches import Rectangle

    point = 72 / 96  # one CSS pixel in points
    figure = Figure(figsize=(spec.width / 96, spec.height / 96), dpi=96 * scale)
    axes = figure.add_axes((0, 0, 1, 1))
    axes.set_xlim(0, spec.width)
    axes.set_ylim(spec.height, 0)
    axes.set_axis_off()
    axes.add_patch(Rectangle((0, 0), spec.width, spec.height, facecolor="#ffffff", edgecolor="none"))
    for item in spec.items:
        if isinstance(item, Rect):
            axes.add_patch(
                Rectangle(
                    (item.x, item.y),
                    item.width,
                    item.height,
                    facecolor=item.fill,
                    alpha=item.opacity,
                    edgecolor=item.stroke or "none",
                    linewidth=point,
                )
            )
        elif isinstance(item, Line):
            axes.plot(
                [item.x1, item.x2],
                [item.y1, item.y2],
                color=item.stroke,
                linewidth=item.width * point,
                linestyle=(0, (item.dash[0] / item.width, item.dash[1] / item.width)) if item.dash else "-",
                solid_capstyle="butt",
            )
        elif isinstance(item, Polygon):
            axes.add_patch(MplPolygon(list(item.points), closed=True, facecolor=item.fill, edgecolor="none"))
        else:
            axes.text(
                item.x,
                item.y,
                item.text,
                fontsize=item.size * point,
                color=item.fill,
                ha={"start": "left", "middle": "center", "end": "right"}[item.anchor],
                va="baseline",
                fontweight="bold" if item.bold else "normal",
                rotation=-item.rotate,
                rotation_mode="anchor",
            )
    target = Path(path)
    figure.savefig(target, format="png", dpi=96 * scale, metadata={"Software": None})
    return target
