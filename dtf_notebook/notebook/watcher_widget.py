"""The ipywidgets front of :class:`~dtf_notebook.notebook.variable_watcher.VariableWatcher`.

Imported only when a widget is wanted (it imports ipywidgets). A ``VBox``: a status line with a
stop/start button (and, in red, a task that does not answer or a cluster that stopped), the variables
table grouped by task (with norm sparklines) and, for the variable picked in the dropdown, a histogram
computed on its task. The watcher's refreshing thread updates it. Shown in a notebook, its output also
carries the status line and table as static HTML, so a saved notebook or an HTML export keeps the last
values; once the watched cluster stops, the output is that final table alone.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> from dtf_notebook.notebook.variable_watcher import VariableWatcher
    >>> with tf.train.Server.create_local_server() as server, tf.Graph().as_default():
    ...     v = tf.Variable([1.0, 2.0, 2.0], name="v")
    ...     with tf.Session(server.target) as sess:
    ...         sess.run(v.initializer)
    ...         with VariableWatcher(server.target, start=False) as watcher:
    ...             view = VariableWatcherWidget(watcher)
    ...             _ = watcher.poll()
    ...             view.picker.value = view.picker.options[1][1]
    >>> "<rect" in view.histogram.value, "v" in view.table.value
    (True, True)
"""

from __future__ import annotations

import html
from typing import Any

import ipywidgets as widgets

from dtf_notebook import errors
from dtf_notebook.notebook.variable_watcher import VariableWatcher

__all__ = ["VariableWatcherWidget"]

_NONE = ("(pick a variable for its histogram)", ())


class VariableWatcherWidget(widgets.VBox):
    """A live table of a cluster's variables and a histogram of one of them.

    Args:
        watcher: The watcher to show (the widget listens to its refreshes).

    Example:
        >>> watcher = VariableWatcher({"worker": ["127.0.0.1:2222"]}, start=False)
        >>> view = VariableWatcherWidget(watcher)
        >>> view.toggle.description, "0 refreshes" in view.status.value
        ('Start', True)
    """

    def __init__(self, watcher: VariableWatcher, **kwargs: Any) -> None:
        self.watcher = watcher
        self.status = widgets.HTML()
        self.toggle = widgets.Button(description="Stop", tooltip="Stop or restart refreshing")
        self.table = widgets.HTML(layout=widgets.Layout(overflow="auto", max_height="480px", width="100%"))
        self.picker = widgets.Dropdown(options=[_NONE], value=_NONE[1], layout=widgets.Layout(width="420px"))
        self.histogram = widgets.HTML()
        self._live: Any = None
        line = widgets.HBox([self.toggle, self.status], layout=widgets.Layout(align_items="center"))
        super().__init__([line, self.table, self.picker, self.histogram], **kwargs)
        self.layout.width = "100%"
        self.toggle.on_click(self._on_toggle)
        self.picker.observe(lambda _: self._draw_histogram(), names="value")
        watcher.add_listener(self._on_refresh)
        self._on_refresh(watcher)

    def _on_toggle(self, _: Any) -> None:
        if self.watcher.running:
            self.watcher.pause()
        else:
            self.watcher.start()
        self._show_status()

    def _show_status(self) -> None:
        w = self.watcher
        self.toggle.description = "Stop" if w.running else "Start"
        self.toggle.disabled = w.cluster_stopped  # nothing left to watch
        self.status.value = w.summary_html()

    def _ipython_display_(self) -> None:
        from dtf_notebook.notebook.live_display import LiveDisplay

        if self._live is None or self._live.finished:
            self._live = LiveDisplay(self, self.watcher._repr_html_, lambda: repr(self.watcher))
        self._live.show()

    def finish(self) -> None:
        """Leaves the watcher's last status and table in its outputs as static HTML (the watcher stopped)."""
        self._show_status()
        self.table.value = self.watcher.table_html()
        if self._live is not None:
            self._live.finish()

    def _on_refresh(self, watcher: VariableWatcher) -> None:
        self._show_status()
        self.table.value = watcher.table_html()
        if self._live is not None:
            if watcher.cluster_stopped:
                self._live.finish()
            else:
                self._live.refresh()
        choices = [_NONE] + [
            (f"{r['name']} ({r['task']})", (r["task"], r["container"], r["name"]))
            for r in watcher.rows
            if r.get("norm") is not None
        ]
        if choices != list(self.picker.options):
            current = self.picker.value
            self.picker.options = choices
            self.picker.value = current if any(value == current for _, value in choices) else _NONE[1]
        self._draw_histogram()

    def _draw_histogram(self) -> None:
        choice = self.picker.value
        if not choice:
            self.histogram.value = ""
            return
        task, container, name = choice
        try:
            self.histogram.value = self.watcher.histogram_html(name, container, task)
        except (errors.OpError, ValueError) as e:
            # The task went away (or the variable was cleared) since the last refresh: say so, keep going.
            self.histogram.value = (
                f'<i style="color:#b22">No histogram of {html.escape(name)}: {html.escape(str(e))}</i>'
            )
