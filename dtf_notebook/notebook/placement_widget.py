"""The ipywidgets front of :func:`~dtf_notebook.notebook.placement_graph.show_placement`.

Imported only when a widget is wanted (it imports ipywidgets). The widget is a ``VBox``: a row of
controls (group ops by name scope, pick a scope to open, close the opened scopes, zoom), the device legend,
and the picture as inline SVG, fitted to the notebook's width (or zoomed, in a box that scrolls to pan).
Its state lives in the current :class:`PlacementView`, which tests and code read through ``nodes``,
``edges`` and ``scopes``. Shown in a notebook, its output also carries the picture as static HTML, so a
saved notebook or an HTML export keeps it (see :mod:`~dtf_notebook.notebook.live_display`).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> from dtf_notebook.notebook.placement_graph import placement_view
    >>> with tf.Graph().as_default():
    ...     with tf.name_scope("model"):
    ...         y = tf.add(tf.constant(1.0), 2.0)
    ...     w = PlacementWidget(placement_view(y))
    >>> w.scopes
    ['model']
    >>> w.expand("model"); [n["name"] for n in w.nodes]
    ['model/Const', 'model/Add']
"""

from __future__ import annotations

import html
import re
from typing import Any

import ipywidgets as widgets

from dtf_notebook.notebook.placement_graph import PlacementView

__all__ = ["PlacementWidget"]

_PICK = "(open a scope)"
#: Zoom choices: "fit" scales a wide picture down to the notebook's width (never up); a percentage draws it
#: at that share of its natural size, in a box that scrolls.
ZOOMS = ("fit", "50%", "100%", "200%")
_SIZE = re.compile(r'<svg width="([\d.]+)pt" height="([\d.]+)pt"')


def fitted(picture: str, zoom: str = "fit") -> str:
    """The placement picture (HTML holding Graphviz's SVG) sized for a notebook at ``zoom`` (see :data:`ZOOMS`).

    Example:
        >>> fitted('<svg width="800pt" height="200pt" viewBox="0 0 800 200"></svg>')
        '<svg style="width:800pt;max-width:100%;height:auto" viewBox="0 0 800 200"></svg>'
        >>> fitted('<svg width="800pt" height="200pt" viewBox="0 0 800 200"></svg>', "50%")
        '<svg style="width:400pt;max-width:none;height:auto" viewBox="0 0 800 200"></svg>'
    """
    found = _SIZE.search(picture)
    if found is None:
        return picture  # no drawing (Graphviz missing): a table, which wraps by itself
    width = float(found.group(1))
    if zoom == "fit":
        style = f"width:{width:g}pt;max-width:100%;height:auto"
    else:
        style = f"width:{width * float(zoom.rstrip('%')) / 100:g}pt;max-width:none;height:auto"
    return picture[: found.start()] + f'<svg style="{style}"' + picture[found.end() :]


class PlacementWidget(widgets.VBox):
    """A placement picture with controls to collapse and expand name scopes.

    Args:
        view: The placement to show.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> from dtf_notebook.notebook.placement_graph import placement_view
        >>> with tf.Graph().as_default():
        ...     with tf.name_scope("model"):
        ...         y = tf.add(tf.constant(1.0), 2.0)
        ...     w = PlacementWidget(placement_view(y, collapse=False))
        >>> w.collapse_toggle.value = True; [n["name"] for n in w.nodes]  # what the toggle button does
        ['model']
    """

    def __init__(self, view: PlacementView, **kwargs: Any) -> None:
        self.view = view
        self._syncing = False
        self.collapse_toggle = widgets.ToggleButton(
            value=view.collapse,
            description="Group by scope",
            tooltip="On: one node per name scope and device. Off: every op its own node.",
            layout=widgets.Layout(width="auto"),
        )
        self.scope_picker = widgets.Dropdown(description="", layout=widgets.Layout(width="220px"))
        self.collapse_all = widgets.Button(
            description="Close opened scopes",
            tooltip="Group every scope opened from the dropdown again",
            layout=widgets.Layout(width="auto"),
        )
        self.zoom = widgets.Dropdown(
            options=ZOOMS, value="fit", description="zoom", layout=widgets.Layout(width="140px")
        )
        self.zoom.style.description_width = "36px"
        self.status = widgets.HTML()
        self.legend = widgets.HTML()
        # Fits the output's width; zoomed in, the box scrolls (that is the pan).
        self.picture = widgets.HTML(layout=widgets.Layout(overflow="auto", max_height="80vh", width="100%"))
        controls = widgets.HBox(
            [self.collapse_toggle, self.scope_picker, self.collapse_all, self.zoom],
            layout=widgets.Layout(flex_flow="row wrap"),
        )
        super().__init__([controls, self.status, self.legend, self.picture], **kwargs)
        self.layout.width = "100%"
        self.collapse_toggle.observe(self._on_toggle, names="value")
        self.scope_picker.observe(self._on_pick, names="value")
        self.zoom.observe(lambda _: self._draw(), names="value")
        self.collapse_all.on_click(lambda _: self._show(self.view.collapsed(True)))
        self._live: Any = None
        self._show(view)

    @property
    def nodes(self) -> list[dict[str, Any]]:
        """Drawn nodes (see :attr:`PlacementView.nodes`)."""
        return self.view.nodes

    @property
    def edges(self) -> list[dict[str, Any]]:
        """Drawn edges (see :attr:`PlacementView.edges`)."""
        return self.view.edges

    @property
    def scopes(self) -> list[str]:
        """Collapsed scopes that can be expanded."""
        return self.view.scopes

    def expand(self, scope: str) -> None:
        """Draws ``scope`` open (what picking it in the dropdown does).

        Raises:
            ValueError: there is no such collapsed scope.
        """
        self._show(self.view.expand(scope))

    def _on_toggle(self, change: dict[str, Any]) -> None:
        if not self._syncing:
            self._show(self.view.collapsed(bool(change["new"])))

    def _on_pick(self, change: dict[str, Any]) -> None:
        if not self._syncing and change["new"] and change["new"] != _PICK:
            self.expand(change["new"])

    def _show(self, view: PlacementView) -> None:
        self.view = view
        # Setting the controls to match the view must not act as if a person had used them.
        self._syncing = True
        try:
            self.scope_picker.options = [_PICK, *view.scopes]
            self.scope_picker.value = _PICK
            self.scope_picker.disabled = not view.scopes
            self.collapse_toggle.value = view.collapse
        finally:
            self._syncing = False
        self.status.value = f'<span style="font:11px sans-serif;color:#555">{view.summary()}</span>'
        self.legend.value = view.legend_html()
        self._draw()

    def _draw(self) -> None:
        self.picture.value = fitted(self.view.picture_html(), self.zoom.value)
        if self._live is not None:
            self._live.refresh()

    def static_html(self) -> str:
        """The picture as it is shown now, fitted to the width, with its legend: what a saved notebook keeps."""
        summary = f'<div style="font:11px sans-serif;color:#555">{html.escape(self.view.summary())}</div>'
        return f'<div class="dtf-placement">{summary}{self.view.legend_html()}{fitted(self.view.picture_html())}</div>'

    def _ipython_display_(self) -> None:
        from dtf_notebook.notebook.live_display import LiveDisplay

        if self._live is None:
            self._live = LiveDisplay(self, self.static_html, lambda: repr(self.view), min_interval=2.0)
        self._live.show()
