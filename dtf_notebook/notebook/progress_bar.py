"""The training progress bar in a Jupyter kernel: tqdm's widget bar whose output keeps a static copy.

A saved notebook cannot draw a widget without its kernel, so tqdm's notebook bar alone leaves nothing (or
the first state it was saved with) in the file. :class:`NotebookProgressBar` shows the widget through a
:class:`~dtf_notebook.notebook.live_display.LiveDisplay`: the same output also carries an HTML copy (the
bar's text around a simple bar, green when done, red when stopped early) and a text copy, refreshed at most
every ``min_interval`` seconds while training runs and left as the final, static picture once the bar
closes (training ended, failed or was interrupted). :func:`progress_bar` is what a
:class:`~dtf_notebook.train.progress_hook.ProgressBarHook` makes in a kernel (``dtf_notebook`` registers
it); without ipywidgets it makes tqdm's text bar instead.

Example:
    >>> bar = NotebookProgressBar(total=4, desc="training", unit="step", show=False)
    >>> bar.update(4); bar.set_postfix(loss="0.12")
    >>> bar.close()
    >>> bar.static_text()[:36]
    'training: 100%|██████████| 4/4 [00:0'
    >>> 'width:100.0%' in bar.static_html() and "#4caf50" in bar.static_html()
    True
"""

from __future__ import annotations

import html
import re
from typing import Any

from tqdm.notebook import tqdm as _tqdm_notebook

from dtf_notebook.notebook.live_display import LiveDisplay
from dtf_notebook.notebook.widget_fallback import widgets_available

__all__ = ["NotebookProgressBar", "progress_bar"]

# ipywidgets' bar styles, as colours of the static bar.
_COLOURS = {"success": "#4caf50", "danger": "#f44336", "info": "#00bcd4", "": "#2196f3"}
# The copies read the same whatever the kernel's stdout is: a 10-character bar of Unicode blocks.
_STATIC = {"ncols": None, "ascii": False}


class NotebookProgressBar(_tqdm_notebook):
    """tqdm's notebook bar, shown in one output that also holds a static HTML/text copy of it.

    Args:
        *args, **kwargs: tqdm's (``total=``, ``desc=``, ``unit=``, ...).
        min_interval: Least seconds between two static copies sent while the bar moves.
        show: Show the bar now (False: only build it, e.g. to read its copies).

    Example:
        >>> bar = NotebookProgressBar(total=10, desc="fit", show=False)
        >>> bar.update(3)
        >>> bar.static_text()[:24]
        'fit:  30%|███       | 3/'
        >>> bar.close()
    """

    def __init__(self, *args: Any, min_interval: float = 2.0, show: bool = True, **kwargs: Any) -> None:
        kwargs["display"] = False  # the LiveDisplay shows it, with its copies
        self.live: LiveDisplay | None = None
        super().__init__(*args, **kwargs)
        if self.disable:  # tqdm(disable=True) builds no widget and draws nothing
            return
        self.live = LiveDisplay(self.container, self.static_html, self.static_text, min_interval=min_interval)
        self.displayed = True  # tqdm's `delay` would display the bare widget a second time
        if show:
            self.live.show()

    def display(self, *args: Any, **kwargs: Any) -> Any:
        """tqdm's widget update, then a new static copy (sent when due)."""
        shown = super().display(*args, **kwargs)
        if self.live is not None:
            self.live.refresh()
        return shown

    def close(self) -> None:
        """Closes the bar as tqdm does, then leaves only its final static copy in the output."""
        super().close()
        if self.live is not None:
            self.live.finish()

    def static_text(self) -> str:
        """The bar as text, as a terminal shows it (empty once a ``leave=False`` bar is closed)."""
        if self._hidden():
            return ""
        return self.format_meter(**{**self.format_dict, **_STATIC, "bar_format": None})

    def static_html(self) -> str:
        """The bar as HTML: its text around a simple bar coloured by its state (empty once hidden)."""
        if self._hidden():
            return ""
        style = self.container.children[1].bar_style or ""
        if not self.total:
            return f'<pre style="margin:0">{html.escape(self.static_text())}</pre>'
        meter = self.format_meter(**{**self.format_dict, **_STATIC, "bar_format": "{l_bar}<bar/>{r_bar}"})
        left, right = (html.escape(part) for part in re.split(r"\|?<bar/>\|?", meter, maxsplit=1))
        filled = min(max(self.n / self.total, 0.0), 1.0) * 100
        return (
            '<div style="display:flex;align-items:center;gap:0.5em;font-family:monospace;white-space:pre">'
            f"<span>{left}</span>"
            '<span style="display:inline-block;width:16em;height:1em;background:#e0e0e0">'
            f'<span style="display:block;width:{filled:.1f}%;height:100%;background:{_COLOURS.get(style, "#2196f3")}">'
            f"</span></span><span>{right}</span></div>"
        )

    def _hidden(self) -> bool:
        # tqdm hides a closed leave=False bar (unless it stopped early, which it keeps, in red).
        return self.container.layout.visibility == "hidden"


def progress_bar(**tqdm_kwargs: Any) -> Any:
    """A training progress bar for this kernel: a :class:`NotebookProgressBar` where widgets can be shown,
    else tqdm's usual choice (a text bar).

    Example:
        >>> import io
        >>> isinstance(progress_bar(total=3, file=io.StringIO()), NotebookProgressBar)  # no kernel here: text
        False
    """
    if widgets_available():
        return NotebookProgressBar(**tqdm_kwargs)
    from tqdm.auto import tqdm

    return tqdm(**tqdm_kwargs)
