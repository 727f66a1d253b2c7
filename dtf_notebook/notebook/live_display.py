"""One display of a live widget that carries a static copy of itself, so a saved notebook keeps the picture.

A notebook saves a widget as a reference to a model that only a running kernel has: GitHub, nbviewer and
``jupyter nbconvert --to html`` then show nothing. :class:`LiveDisplay` shows the widget in one output whose
bundle also holds ``text/html`` and ``text/plain`` copies of what it shows. Live front ends draw the widget;
everything else draws the copy. :meth:`LiveDisplay.refresh` sends a new copy when it changed (at most every
``min_interval`` seconds, and a last one after that: a front end redraws the widget on every update), and
:meth:`LiveDisplay.finish` replaces the widget with its final copy once it will change no more (a stopped
cluster, a finished training run), so even a notebook reopened later shows the last state.

Example:
    >>> import ipywidgets as widgets
    >>> label = widgets.HTML("<b>step 3</b>")
    >>> shown = LiveDisplay(label, lambda: label.value, lambda: "step 3")
    >>> sorted(shown.bundle())
    ['application/vnd.jupyter.widget-view+json', 'text/html', 'text/plain']
    >>> shown.finish()
    >>> sorted(shown.bundle())
    ['text/html', 'text/plain']
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

__all__ = ["LiveDisplay"]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class LiveDisplay:
    """A widget's outputs, each with a static HTML and text copy that follows what the widget shows.

    Args:
        widget: The ipywidgets widget to show.
        static_html: Makes the HTML copy (a table, an inline SVG): what viewers without a kernel show.
        static_text: Makes the plain-text copy.
        min_interval: Least seconds between two copies sent to the front end.

    Example:
        >>> import ipywidgets as widgets
        >>> shown = LiveDisplay(widgets.HTML("x"), lambda: "<b>x</b>", lambda: "x")
        >>> shown.bundle()["text/html"]
        '<b>x</b>'
    """

    def __init__(
        self,
        widget: Any,
        static_html: Callable[[], str],
        static_text: Callable[[], str],
        min_interval: float = 5.0,
    ) -> None:
        self.widget, self.min_interval = widget, min_interval
        self._html, self._text = static_html, static_text
        self.display_id = f"dtf-{uuid.uuid4().hex}"
        self.finished = False
        self._lock = threading.Lock()
        self._shown = False
        self._sent_html: str | None = None
        self._sent_at = 0.0
        self._timer: threading.Timer | None = None

    def bundle(self) -> dict[str, Any]:
        """What one output holds: the widget view (until finished) and the static copies."""
        data: dict[str, Any] = {"text/html": self._html(), "text/plain": self._text()}
        if not self.finished:
            data[WIDGET_VIEW] = self.widget._repr_mimebundle_()[WIDGET_VIEW]
        return data

    def show(self) -> None:
        """Shows the widget in a new output (every output of this display follows later copies)."""
        from IPython.display import display

        with self._lock:
            data = self.bundle()
            self._shown, self._sent_html, self._sent_at = True, data["text/html"], time.monotonic()
        display(data, raw=True, display_id=self.display_id)

    def refresh(self) -> None:
        """Sends a new copy if what the widget shows changed; a copy due sooner than ``min_interval`` waits."""
        with self._lock:
            if not self._shown or self.finished or self._timer is not None:
                return
            wait = self._sent_at + self.min_interval - time.monotonic()
            if wait > 0:
                self._timer = threading.Timer(wait, self._send_due)
                self._timer.daemon = True
                self._timer.start()
                return
        self._send()

    def finish(self) -> None:
        """Replaces the widget in every output with its final static copy; later refreshes do nothing."""
        with self._lock:
            if self.finished:
                return
            self.finished = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            shown = self._shown
        if shown:
            self._update(self.bundle())

    def _send_due(self) -> None:
        with self._lock:
            self._timer = None
            if self.finished:
                return
        self._send()

    def _send(self) -> None:
        data = self.bundle()
        with self._lock:
            if data["text/html"] == self._sent_html or self.finished:
                return
            self._sent_html, self._sent_at = data["text/html"], time.monotonic()
        self._update(data)

    def _update(self, data: dict[str, Any]) -> None:
        from IPython.display import update_display

        update_display(data, raw=True, display_id=self.display_id)
