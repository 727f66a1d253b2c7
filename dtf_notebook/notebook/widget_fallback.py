"""What the notebook widgets share: telling whether a live front end is there, and plain HTML/text tables.

Every widget of this package also renders without a kernel (a notebook saved and viewed later, a
terminal, a doctest): these helpers build that plain HTML and text. Nothing here imports IPython or
ipywidgets at import time.

Example:
    >>> print(text_table(["name", "norm"], [["w", 1.5], ["bias", None]]))
    name  norm
    ----  ----
    w     1.5
    bias  -
"""

from __future__ import annotations

import html
import importlib.util
from collections.abc import Sequence
from typing import Any

from dtf_notebook.frontend import jupyter_kernel

__all__ = ["cell_text", "html_table", "jupyter_kernel", "text_table", "widgets_available"]


def widgets_available() -> bool:
    """True when ipywidgets is installed and this code runs in a Jupyter kernel (which has a front end).

    A plain IPython terminal or a script has no front end that can show a widget, so the widgets'
    HTML/text fallbacks are used there.

    Example:
        >>> widgets_available()  # not inside a kernel while the doctests run
        False
    """
    return jupyter_kernel() and importlib.util.find_spec("ipywidgets") is not None


def cell_text(value: Any) -> str:
    """How one table cell reads: numbers to 4 significant digits, None as ``-``, lists as ``[a, b]``.

    Example:
        >>> cell_text(3.14159), cell_text(None), cell_text([2, 3]), cell_text(12345678.0)
        ('3.142', '-', '[2, 3]', '1.235e+07')
    """
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(cell_text(v) for v in value) + "]"
    return str(value)


def text_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A fixed-width text table (for ``__repr__`` and terminals).

    Example:
        >>> print(text_table(["a", "b"], [[1, "x"]]))
        a  b
        -  -
        1  x
    """
    cells = [[cell_text(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in cells]
    return "\n".join(lines)


def html_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], raw_columns: Sequence[str] = ()) -> str:
    """An HTML table; cells are escaped except in ``raw_columns`` (which hold markup we made, e.g. SVG).

    Example:
        >>> html_table(["name"], [["<w>"]]).split("<tbody>")[1]
        '<tr><td>&lt;w&gt;</td></tr></tbody></table>'
    """
    raw = {columns.index(c) for c in raw_columns}
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>"
        + "".join(f"<td>{(v or '') if i in raw else html.escape(cell_text(v))}</td>" for i, v in enumerate(row))
        + "</tr>"
        for row in rows
    )
    return f'<table class="dtf-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
