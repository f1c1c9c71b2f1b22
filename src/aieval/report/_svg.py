"""Inline SVG plots for the HTML report, drawn in Python (no JavaScript, nothing fetched).

Every plot is an ``<svg role="img">`` with a ``<title>`` and a ``<desc>`` so screen readers get
the gist; all text passes through :func:`html.escape` because names and ids are untrusted.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["forest_plot", "gate_plot", "grade_plot", "histogram_grid"]

INK = "#1f2328"
MUTED = "#59636e"
GRID = "#d1d9e0"
BLUE = "#0969da"
RED = "#cf222e"
GREEN = "#1a7f37"
GRADE_COLOURS = {"A": "#1a7f37", "B": "#4d8c1f", "C": "#9a6700", "D": "#bc4c00", "F": "#cf222e"}

_FONT = "font-family:system-ui,-apple-system,'Segoe UI',sans-serif"


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _svg(width: int, height: int, title: str, desc: str, body: Sequence[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" style="max-width:100%;height:auto;{_FONT}">'
        f"<title>{_e(title)}</title><desc>{_e(desc)}</desc>" + "".join(body) + "</svg>"
    )


def _text(
    x: float,
    y: float,
    text: Any,
    *,
    anchor: str = "start",
    size: int = 12,
    fill: str = INK,
    weight: str = "normal",
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{size}" '
        f'fill="{fill}" font-weight="{weight}">{_e(text)}</text>'
    )


def _rect(x: float, y: float, w: float, h: float, fill: str, label: str = "") -> str:
    tip = f"<title>{_e(label)}</title>" if label else ""
    return (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(w, 0):.1f}" height="{max(h, 0):.1f}" '
        f'fill="{fill}">{tip}</rect>'
    )


def _line(
    x1: float, y1: float, x2: float, y2: float, stroke: str, width: float = 1, dash: str = ""
) -> str:
    extra = f' stroke-dasharray="{dash}"' if dash else ""
    return (
        f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}" '
        f'stroke-width="{width}"{extra}/>'
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def grade_plot(grades: Mapping[str, int]) -> str:
    """Vertical bars: how many samples got each grade A..F."""
    order = ("A", "B", "C", "D", "F")
    counts = [int(grades.get(g, 0)) for g in order]
    total, top = sum(counts), max(max(counts), 1)
    width, height, base, plot_h = 360, 220, 185, 150
    body: list[str] = [_line(30, base, width - 10, base, GRID)]
    step = (width - 40) / len(order)
    for i, (grade, count) in enumerate(zip(order, counts, strict=True)):
        x, h = 30 + i * step + step * 0.15, plot_h * count / top
        share = f"{100 * count / total:.0f}%" if total else "0%"
        body.append(
            _rect(
                x,
                base - h,
                step * 0.7,
                h,
                GRADE_COLOURS[grade],
                f"grade {grade}: {count} ({share})",
            )
        )
        body.append(_text(x + step * 0.35, base - h - 5, count, anchor="middle"))
        body.append(_text(x + step * 0.35, base + 18, grade, anchor="middle", weight="bold"))
    desc = ", ".join(f"{g}: {c}" for g, c in zip(order, counts, strict=True))
    return _svg(width, height, "Grade distribution", desc, body)


def gate_plot(gates: Sequence[Mapping[str, Any]]) -> str:
    """Horizontal bars of each gate's failure rate with Wilson 95% CI whiskers."""
    width, left, right, row_h = 640, 220, 70, 28
    height = 40 + row_h * len(gates)
    top_rate = max([g.get("high") or g.get("rate") or 0.0 for g in gates] + [0.05])
    scale = (width - left - right) / top_rate
    body: list[str] = []
    for tick in _ticks(top_rate):
        x = left + tick * scale
        body.append(_line(x, 10, x, height - 25, GRID))
        body.append(
            _text(x, height - 10, f"{100 * tick:.0f}%", anchor="middle", size=11, fill=MUTED)
        )
    for i, gate in enumerate(gates):
        y = 12 + i * row_h
        rate = gate.get("rate") or 0.0
        label = f"{gate['name']}: {gate['failures']}/{gate['n']} failed"
        body.append(_text(left - 8, y + 15, _clip(str(gate["name"]), 30), anchor="end"))
        body.append(_rect(left, y + 4, rate * scale, row_h - 10, RED if rate else GRID, label))
        if gate.get("low") is not None and gate.get("high") is not None:
            lo, hi, mid = left + gate["low"] * scale, left + gate["high"] * scale, y + row_h / 2
            body += [
                _line(lo, mid, hi, mid, INK, 1.5),
                _line(lo, mid - 5, lo, mid + 5, INK, 1.5),
                _line(hi, mid - 5, hi, mid + 5, INK, 1.5),
            ]
        body.append(_text(width - right + 8, y + 15, f"{100 * rate:.1f}%", size=11))
    desc = "; ".join(f"{g['name']} {100 * (g.get('rate') or 0):.1f}%" for g in gates)
    return _svg(width, height, "Gate failure rates with 95% intervals", desc, body)


def _ticks(top: float) -> list[float]:
    step = next(s for s in (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5) if top / s <= 6)
    return [i * step for i in range(int(top / step) + 1)]


def histogram_grid(criteria: Sequence[Mapping[str, Any]]) -> str:
    """Small multiples: each criterion's histogram of normalized values, floor dashed in red."""
    cols, cell_w, cell_h = 3, 210, 130
    rows = (len(criteria) + cols - 1) // cols
    body: list[str] = []
    for i, crit in enumerate(criteria):
        ox, oy = (i % cols) * cell_w, (i // cols) * cell_h
        body += _histogram(crit, ox + 10, oy, cell_w - 20, cell_h)
    desc = "; ".join(
        f"{c['name']} mean {c['mean']:.2f}"
        if c.get("mean") is not None
        else f"{c['name']} no values"
        for c in criteria
    )
    return _svg(
        cols * cell_w, rows * cell_h, "Criterion distributions (normalized 0..1)", desc, body
    )


def _histogram(crit: Mapping[str, Any], x0: float, y0: float, w: float, h: float) -> list[str]:
    counts = list((crit.get("histogram") or {}).get("counts") or [0] * 10)
    top, base, plot_h = max(max(counts), 1), y0 + h - 22, h - 48
    bar_w = w / len(counts)
    out = [
        _text(x0, y0 + 16, _clip(str(crit["name"]), 28), weight="bold", size=12),
        _line(x0, base, x0 + w, base, GRID),
    ]
    for j, count in enumerate(counts):
        bar_h = plot_h * count / top
        out.append(
            _rect(
                x0 + j * bar_w + 1,
                base - bar_h,
                bar_w - 2,
                bar_h,
                BLUE,
                f"{j / 10:.1f}–{(j + 1) / 10:.1f}: {count}",
            )
        )
    out += [
        _text(x0, base + 14, "0", size=10, fill=MUTED),
        _text(x0 + w, base + 14, "1", anchor="end", size=10, fill=MUTED),
    ]
    if crit.get("mean") is not None:  # under the axis: a long name may fill the title line
        out.append(
            _text(
                x0 + w / 2,
                base + 14,
                f"mean {crit['mean']:.2f}",
                anchor="middle",
                size=11,
                fill=MUTED,
            )
        )
    if crit.get("floor") is not None:
        fx = x0 + w * float(crit["floor"])
        out.append(_line(fx, base - plot_h - 4, fx, base, RED, 1.5, "4 3"))
    return out


def forest_plot(
    metrics: Sequence[Mapping[str, Any]],
    *,
    margin: float | None,
    title: str,
    unit: str,
    scale: float = 1.0,
    higher_is_worse: bool = False,
) -> str:
    """Deltas (candidate − baseline) with their intervals around a zero line.

    Args:
        metrics: rows with ``name``, ``delta``, ``low``, ``high`` (rows without a delta are
            listed as "not computed").
        margin: the non-inferiority margin, drawn as a dashed line at ``-margin``.
        title: the plot's title.
        unit: the x axis unit.
        scale: multiplies values for display (100 shows rates as percentage points).
        higher_is_worse: a positive delta is a regression (gate failure rates).
    """
    width, left, right, row_h = 640, 200, 90, 26
    height = 56 + row_h * len(metrics)
    ends = (v for m in metrics for v in (m.get("low"), m.get("high"), m.get("delta")))
    values: list[float] = [abs(v) * scale for v in ends if v is not None]
    values += [margin * 1.2] if margin else []
    values.append(0.01)  # all deltas zero: still a readable axis
    span = max(values) * 1.1

    def to_x(value: float) -> float:
        return left + (value + span) / (2 * span) * (width - left - right)

    axis_bottom = height - 30
    body = [
        _line(to_x(0), 8, to_x(0), axis_bottom, INK, 1.2),
        _text(to_x(0), height - 14, f"0 {unit}", anchor="middle", size=11, fill=MUTED),
        _text(to_x(-span), height - 14, f"{-span:+.1f}", size=11, fill=MUTED),
        _text(to_x(span), height - 14, f"{span:+.1f}", anchor="end", size=11, fill=MUTED),
    ]
    if margin:
        mx = to_x(-margin)
        body += [
            _line(mx, 8, mx, axis_bottom, RED, 1.2, "5 4"),
            _text(mx - 4, height - 2, f"margin −{margin:g}", anchor="end", size=10, fill=RED),
        ]
    for i, m in enumerate(metrics):
        body += _forest_row(
            m, 12 + i * row_h, row_h, left, width - right, to_x, scale, higher_is_worse
        )
    desc = "; ".join(
        f"{m['name']} {m['delta'] * scale:+.2f}"
        if m.get("delta") is not None
        else f"{m['name']} not computed"
        for m in metrics
    )
    return _svg(width, height, title, desc, body)


def _forest_row(
    m: Mapping[str, Any],
    y: float,
    row_h: float,
    left: float,
    label_x: float,
    to_x: Callable[[float], float],
    scale: float,
    higher_is_worse: bool,
) -> list[str]:
    mid = y + row_h / 2
    out = [_text(left - 8, mid + 4, _clip(str(m["name"]), 28), anchor="end")]
    delta, low, high = m.get("delta"), m.get("low"), m.get("high")
    if delta is None:
        return [*out, _text(label_x + 8, mid + 4, "not computed", size=11, fill=MUTED)]
    colour = MUTED
    if low is not None and high is not None:
        worse, better = (low > 0, high < 0) if higher_is_worse else (high < 0, low > 0)
        colour = RED if worse else GREEN if better else MUTED
        out.append(_line(to_x(low * scale), mid, to_x(high * scale), mid, colour, 2))
    out.append(
        f'<circle cx="{to_x(delta * scale):.1f}" cy="{mid:.1f}" r="5" fill="{colour}">'
        f"<title>{_e(m['name'])}: {delta * scale:+.2f}</title></circle>"
    )
    out.append(_text(label_x + 8, mid + 4, f"{delta * scale:+.2f}", size=11))
    return out
