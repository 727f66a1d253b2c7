"""Small inline SVG charts for widget tables: a sparkline of a series and a histogram of counts.

Both return an ``<svg>`` element as text, with no script and no external style, so they display
the same in a live notebook, a saved one, or any HTML page.

Example:
    >>> svg = sparkline([1.0, 2.0, 1.5])
    >>> svg.startswith("<svg") and "<polyline" in svg
    True
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

__all__ = ["histogram_svg", "sparkline"]


def _finite(values: Sequence[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(float(v))]


def sparkline(values: Sequence[float | None], width: int = 100, height: int = 20, colour: str = "#1f77b4") -> str:
    """A line through ``values`` (oldest left), scaled to their range; missing or non-finite values skipped.

    Example:
        >>> sparkline([])
        '<svg xmlns="http://www.w3.org/2000/svg" width="100" height="20"></svg>'
        >>> 'points="1.0,19.0 99.0,1.0"' in sparkline([0.0, 1.0])
        True
    """
    points = _finite(values)
    head = f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">'
    if not points:
        return head + "</svg>"
    lo, hi = min(points), max(points)
    span = hi - lo or 1.0
    step = (width - 2) / max(1, len(points) - 1)
    coords = " ".join(
        f"{1 + i * step:.1f},{height - 1 - (v - lo) / span * (height - 2):.1f}" for i, v in enumerate(points)
    )
    last = points[-1]
    return (
        f"{head}<title>{html.escape(f'{lo:.4g} .. {hi:.4g}, last {last:.4g}')}</title>"
        f'<polyline fill="none" stroke="{colour}" stroke-width="1.2" points="{coords}"/></svg>'
    )


def histogram_svg(
    edges: Sequence[float], counts: Sequence[int], width: int = 320, height: int = 120, colour: str = "#1f77b4"
) -> str:
    """Bars for ``counts`` over the bins ``edges`` (one more edge than counts), with the range written below.

    Example:
        >>> svg = histogram_svg([0.0, 1.0, 2.0], [3, 1])
        >>> svg.count("<rect"), "0 .. 2" in svg
        (2, True)
    """
    head = f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">'
    if not counts:
        return head + "</svg>"
    plot = height - 16  # room for the axis text
    top = max(counts) or 1
    bar = (width - 2) / len(counts)
    bars = []
    for i, count in enumerate(counts):
        h = count / top * (plot - 2)
        label = html.escape(f"{edges[i]:.4g} .. {edges[i + 1]:.4g}: {count}")
        bars.append(
            f'<rect x="{1 + i * bar:.1f}" y="{plot - h:.1f}" width="{max(bar - 1, 0.5):.1f}" height="{h:.1f}" '
            f'fill="{colour}"><title>{label}</title></rect>'
        )
    axis = html.escape(f"{edges[0]:.4g} .. {edges[-1]:.4g}  (max {top} per bin)")
    text = f'<text x="1" y="{height - 3}" font-size="10" font-family="sans-serif" fill="#555">{axis}</text>'
    return head + "".join(bars) + text + "</svg>"
