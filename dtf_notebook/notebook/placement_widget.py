"""The ipywidgets front of :func:`~dtf_notebook.notebook.placement_graph.show_placement`.

Imported only when a widget is wanted (it imports ipywidgets). The widget is a ``VBox``: a row of
controls (collapse name scopes, pick a scope to expand, collapse all again), the device legend, and
the picture as inline SVG. Its state lives in the current :class:`PlacementView`, which tests and
code read through ``nodes``, ``edges`` and ``scopes``.

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

from typing import Any

import ipywidgets as widgets

from dtf_notebook.notebook.placement_graph import PlacementView

__all__ = ["PlacementWidget"]

_PICK = "(expand a scope)"


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
            value=view.collapse, description="Collapse scopes", tooltip="One node per name scope and device"
        )
        self.scope_picker = widgets.Dropdown(description="", layout=widgets.Layout(width="280px"))
        self.collapse_all = widgets.Button(description="Collapse all", tooltip="Close every expanded scope")
        self.status = widgets.HTML()
        self.legend = widgets.HTML()
        self.picture = widgets.HTML(layout=widgets.Layout(overflow="auto", max_height="720px"))
        controls = widgets.HBox([self.collapse_toggle, self.scope_picker, self.collapse_all, self.status])
        super().__init__([controls, self.legend, self.picture], **kwargs)
        self.collapse_toggle.observe(self._on_toggle, names="value")
        self.scope_picker.observe(self._on_pick, names="value")
        self.collapse_all.on_click(lambda _: self._show(self.view.collapsed(True)))
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
        self.picture.value = view.picture_html()
