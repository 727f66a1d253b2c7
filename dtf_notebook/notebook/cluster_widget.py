"""A live table of a local cluster's tasks: :class:`ClusterWidget`.

One row per task: job, task, address, pid, status, devices, the variables the task holds (how many and
their bytes, asked from the task itself with a ``ListVariables`` request) and the memory of its process
(resident set size). In a Jupyter kernel the table is an ipywidgets grid, refreshed about every second
by a background thread while the cluster runs, with Kill and Restart buttons per task and a Stop button
for the cluster. Elsewhere (a terminal, a saved notebook, a doctest) it renders as an HTML or text table
made when it is shown. ipywidgets is imported only when a widget is built.

Example:
    >>> from dtf_notebook.notebook.local_cluster import LocalCluster
    >>> with LocalCluster(ps=1, workers=1, name="doc-widget") as cluster:
    ...     table = ClusterWidget(cluster)
    ...     print([(r["job"], r["task"], r["status"], r["variables"]) for r in table.rows])
    ...     table.close()
    [('ps', 0, 'running', 0), ('worker', 0, 'running', 0)]
"""

from __future__ import annotations

import html
import math
import os
import threading
import time
from typing import Any

from dtf_notebook import errors
from dtf_notebook.distributed.cluster_key import ClusterKey
from dtf_notebook.distributed.transport import client_for
from dtf_notebook.framework import dtypes
from dtf_notebook.notebook.local_cluster import LocalCluster
from dtf_notebook.notebook.widget_fallback import html_table, text_table, widgets_available

__all__ = ["COLUMNS", "ClusterWidget", "cluster_alive", "format_bytes", "process_memory", "task_rows", "variables_held"]

COLUMNS = ("job", "task", "address", "pid", "status", "devices", "variables", "variable_bytes", "memory_bytes")
_HEADERS = ("job", "task", "address", "pid", "status", "devices", "variables", "var. bytes", "memory")


def process_memory(pid: int) -> int | None:
    """The resident memory of process ``pid`` in bytes (``VmRSS``), or None when it is gone or unknown.

    Reads ``/proc/<pid>/status``; uses psutil where there is no ``/proc`` and psutil is installed.

    Example:
        >>> process_memory(os.getpid()) > 0
        True
    """
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024  # the kernel reports kB
        return None  # a zombie has no VmRSS line
    except FileNotFoundError:
        if os.path.isdir("/proc"):
            return None  # the process is gone
    except OSError:
        return None
    try:
        import psutil
    except ImportError:
        return None
    try:
        return psutil.Process(pid).memory_info().rss
    except psutil.Error:
        return None


def variables_held(address: str, cluster_key: ClusterKey | None = None, timeout: float = 1.0) -> tuple[int, int] | None:
    """How many variables the task at ``address`` holds and their bytes (initialized ones only hold memory).

    Returns None when the task does not answer within ``timeout`` seconds. The key is the one this process
    knows for ``address`` unless ``cluster_key`` is given.

    Example:
        >>> from dtf_notebook.notebook.local_cluster import LocalCluster
        >>> with LocalCluster(ps=1, workers=0, name="doc-held") as cluster:
        ...     print(variables_held(cluster.spec["ps"][0]))
        (0, 0)
    """
    try:
        reply, _ = client_for(address, cluster_key).call(address, "ListVariables", {}, timeout=timeout)
    except errors.OpError:
        return None
    total = 0
    for var in reply.get("variables", []):
        if var.get("initialized") and var.get("shape") is not None and var.get("dtype"):
            total += math.prod(var["shape"]) * dtypes.as_dtype(var["dtype"]).size
    return len(reply.get("variables", [])), total


def task_rows(
    cluster: LocalCluster, cluster_key: ClusterKey | None = None, timeout: float = 1.0, variables: bool = True
) -> list[dict[str, Any]]:
    """The table of ``cluster``'s tasks: one dict per task with the keys of :data:`COLUMNS`.

    ``variables``, ``variable_bytes`` and ``memory_bytes`` are None where unknown (a task that is not
    running, or that did not answer; or ``variables=False``, which skips asking the tasks).

    Example:
        >>> cluster = LocalCluster(ps=1, workers=1)   # not started: no tasks yet
        >>> task_rows(cluster)
        []
    """
    rows = []
    stopped = not cluster_alive(cluster)
    for t in cluster.tasks:
        running = t.status == "running" and not stopped
        held = variables_held(t.address, cluster_key, timeout) if running and variables else None
        rows.append(
            {
                "job": t.job,
                "task": t.task,
                "address": t.address,
                "pid": t.pid,
                "status": "stopped" if stopped else t.status,
                "devices": [d.split("/device:")[-1] for d in t.devices],
                "variables": held[0] if held else None,
                "variable_bytes": held[1] if held else None,
                "memory_bytes": process_memory(t.pid) if running else None,
            }
        )
    return rows


def cluster_alive(cluster: LocalCluster) -> bool:
    """Whether ``cluster`` still runs: started and not stopped, here or (for a connected one) by its owner.

    A cluster that its own kernel stopped has lost its cluster file; the object another kernel connected
    with learns it only from that.

    Example:
        >>> cluster_alive(LocalCluster(ps=1, workers=0))  # never started
        False
    """
    return cluster.running and cluster.file is not None and os.path.exists(cluster.file)


def format_bytes(count: int | None) -> str:
    """A byte count for people: ``512 B``, ``1.5 KiB``, ``3.2 GiB``; ``-`` for None.

    Example:
        >>> format_bytes(512), format_bytes(1536), format_bytes(3 * 2**30), format_bytes(None)
        ('512 B', '1.5 KiB', '3 GiB', '-')
    """
    if count is None:
        return "-"
    size, unit = float(count), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            break
        size /= 1024
    return f"{int(size)} B" if unit == "B" else f"{size:.3g} {unit}"


def _cells(row: dict[str, Any]) -> list[str]:
    variables = "-" if row["variables"] is None else str(row["variables"])
    return [
        row["job"],
        str(row["task"]),
        row["address"],
        str(row["pid"]),
        row["status"],
        ", ".join(row["devices"]) or "-",
        variables,
        format_bytes(row["variable_bytes"]),
        format_bytes(row["memory_bytes"]),
    ]


class ClusterWidget:
    """A table of a cluster's tasks: a live ipywidgets grid in a kernel, an HTML/text table elsewhere.

    Args:
        cluster: The cluster to show (started, or connected to).
        interval: Seconds between refreshes of the live grid.
        use_widgets: Build the ipywidgets grid (default: when running in a kernel with ipywidgets).
        cluster_key: The cluster's key (default: the one its tasks' addresses are known by in this process).

    Attributes:
        widget: The ipywidgets ``VBox`` shown, or None for the HTML/text form.
        grid: Its ``GridBox`` of cells (a header row, then one row per task: nine HTML cells and two buttons).
        buttons: ``{(job, task, "kill" | "restart"): Button}`` and ``{("stop",): Button}`` of the grid.
        message: What the last button did, or why it failed.

    Example:
        >>> from dtf_notebook.notebook.local_cluster import LocalCluster
        >>> with LocalCluster(ps=1, workers=1, name="doc-table") as cluster:
        ...     table = ClusterWidget(cluster, use_widgets=False)
        ...     print(repr(table).splitlines()[0])
        LocalCluster 'doc-table': running, 2 tasks
    """

    def __init__(
        self,
        cluster: LocalCluster,
        interval: float = 1.0,
        use_widgets: bool | None = None,
        cluster_key: ClusterKey | None = None,
    ) -> None:
        self.cluster, self.interval, self.cluster_key = cluster, interval, cluster_key
        self.message = ""
        self.widget: Any = None
        self.grid: Any = None
        self.buttons: dict[tuple, Any] = {}
        self._lock = threading.RLock()
        self._closed = threading.Event()
        self._held: dict[tuple[str, int, int], tuple[int | None, int | None]] = {}
        self._next_variables = 0.0
        self._rows: list[dict[str, Any]] = []
        self._thread: threading.Thread | None = None
        self._live: Any = None
        self.refresh()
        if use_widgets if use_widgets is not None else widgets_available():
            self._build()
            self._thread = threading.Thread(target=self._refresh_loop, name=f"dtf-cluster-{cluster.name}", daemon=True)
            self._thread.start()

    # ---- the table ----------------------------------------------------------------------------
    @property
    def rows(self) -> list[dict[str, Any]]:
        """The latest table (see :func:`task_rows`); made afresh when no refresh thread keeps it current."""
        if self._thread is None and not self._closed.is_set():
            self.refresh()
        with self._lock:
            return [dict(row) for row in self._rows]

    def refresh(self) -> None:
        """Makes the table again now, asking every task for its variables (and updates the grid)."""
        self._refresh(throttled=False)

    def _refresh(self, throttled: bool) -> None:
        if self._live is not None and self._live.finished:
            return  # the final table is shown; a stopped cluster changes no more
        now = time.monotonic()
        # ListVariables computes statistics of every variable on the task: the refresh thread asks at
        # most every ten times as long as the last answer took, so a task with huge variables is not kept busy.
        ask = not throttled or now >= self._next_variables
        rows = task_rows(self.cluster, self.cluster_key, timeout=max(self.interval, 0.5), variables=ask)
        if ask:
            self._next_variables = now + max(self.interval, 10 * (time.monotonic() - now))
        for row in rows:
            key = (row["job"], row["task"], row["pid"])
            if ask:
                self._held[key] = (row["variables"], row["variable_bytes"])
            elif row["status"] == "running":
                row["variables"], row["variable_bytes"] = self._held.get(key, (None, None))
        alive = cluster_alive(self.cluster)  # once, after the rows: a stop while they were made marks them too
        if not alive:
            rows = [{**row, "status": "stopped"} for row in rows]
        with self._lock:
            if self._rows and not rows:
                # Forgotten tasks keep their last row, marked stopped: the table says what happened to them.
                rows = [{**row, "status": "stopped", "variables": None, "memory_bytes": None} for row in self._rows]
            self._rows = rows
            if self.widget is not None:
                self._update()
        if self._live is not None:
            if alive:
                self._live.refresh()
            else:
                self._disable_buttons()
                self._live.finish()  # saved notebooks keep the stopped table, with no dead widget in it

    def _refresh_loop(self) -> None:
        while not self._closed.wait(self.interval):
            try:
                self._refresh(throttled=True)
            except (errors.OpError, OSError, ValueError, RuntimeError) as e:
                # A task killed or restarted mid-refresh: say so under the table and keep refreshing.
                self.message = f"Refresh failed: {e}"
            if not cluster_alive(self.cluster):
                break  # a stopped cluster changes no more; its last table stays shown
        self._disable_buttons()

    def close(self) -> None:
        """Stops refreshing; the table stays shown as it was last (buttons disabled).

        A stopped cluster's table is refreshed one last time first, so every view of it says stopped.
        """
        if self.widget is not None and not cluster_alive(self.cluster) and not self._closed.is_set():
            self._refresh(throttled=False)
        self._closed.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)
        self._disable_buttons()

    # ---- plain renderings ---------------------------------------------------------------------
    def _caption(self) -> str:
        state = "running" if cluster_alive(self.cluster) else "stopped"
        count = len(self._rows)
        return f"LocalCluster {self.cluster.name or '(unnamed)'!r}: {state}, {count} task{'s' * (count != 1)}"

    def __repr__(self) -> str:
        return self._text(self.rows)

    def _repr_html_(self) -> str:
        return self._html(self.rows)

    def _shown_rows(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(row) for row in self._rows]

    def _text(self, rows: list[dict[str, Any]]) -> str:
        return self._caption() + "\n" + text_table(_HEADERS, [_cells(r) for r in rows])

    def _html(self, rows: list[dict[str, Any]]) -> str:
        return f"<div><b>{html.escape(self._caption())}</b>{html_table(_HEADERS, [_cells(r) for r in rows])}</div>"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        if self._live is None:
            rows = self.rows
            display({"text/html": self._html(rows), "text/plain": self._text(rows)}, raw=True)
        else:
            self._live.show()  # every output of this table follows it, up to its final state

    # ---- the ipywidgets grid ------------------------------------------------------------------
    def _build(self) -> None:
        import ipywidgets as widgets

        self._widgets = widgets
        self._caption_html = widgets.HTML()
        self._message_html = widgets.HTML()
        stop = widgets.Button(description="Stop cluster", button_style="danger", icon="stop")
        stop.on_click(lambda _: self._act("stop", None, None))
        self.buttons[("stop",)] = stop
        self.grid = widgets.GridBox(
            # Columns as wide as their cells, packed left (not spread over the notebook's width).
            layout=widgets.Layout(
                grid_template_columns=f"repeat({len(_HEADERS) + 2}, max-content)",
                grid_gap="2px 16px",
                justify_content="flex-start",
            )
        )
        self._cell_widgets: list[list[Any]] = []
        self.widget = widgets.VBox([self._caption_html, self.grid, widgets.HBox([stop, self._message_html])])
        self._update()
        from dtf_notebook.notebook.live_display import LiveDisplay

        # The copies show the table as last refreshed (the property would ask the tasks again).
        self._live = LiveDisplay(
            self.widget, lambda: self._html(self._shown_rows()), lambda: self._text(self._shown_rows())
        )

    def _make_cells(self) -> None:
        widgets = self._widgets
        children = [widgets.HTML(f"<b>{h}</b>") for h in _HEADERS] + [widgets.HTML(""), widgets.HTML("")]
        self._cell_widgets, self.buttons = [], {("stop",): self.buttons[("stop",)]}
        for row in self._rows:
            cells = [widgets.HTML() for _ in _HEADERS]
            job, task = row["job"], row["task"]
            for action in ("kill", "restart"):
                button = widgets.Button(
                    description=action.capitalize(),
                    tooltip=f"{action} task {job}:{task}",
                    button_style="warning" if action == "kill" else "",
                    layout=widgets.Layout(width="80px"),
                )
                button.on_click(lambda _, a=action, j=job, t=task: self._act(a, j, t))
                self.buttons[(job, task, action)] = button
                cells.append(button)
            self._cell_widgets.append(cells)
            children += cells
        self.grid.children = children

    def _update(self) -> None:
        """Sets the grid's cells to the current rows; only changed values travel to the front end."""
        if len(self._cell_widgets) != len(self._rows):
            self._make_cells()
        self._caption_html.value = f"<b>{html.escape(self._caption())}</b>"
        self._message_html.value = html.escape(self.message)
        running = cluster_alive(self.cluster)
        for row, cells in zip(self._rows, self._cell_widgets):
            for cell, text in zip(cells, _cells(row)):
                color = "" if row["status"] == "running" or cell is not cells[4] else ' style="color:#c00"'
                value = f"<span{color}>{html.escape(text)}</span>"
                if cell.value != value:
                    cell.value = value
            cells[-2].disabled = not running or row["status"] != "running"
            cells[-1].disabled = not running
        self.buttons[("stop",)].disabled = not running

    def _disable_buttons(self) -> None:
        with self._lock:
            for button in self.buttons.values():
                button.disabled = True

    def _act(self, action: str, job: str | None, task: int | None) -> None:
        """What a button does; the outcome (or the reason it failed) shows under the grid."""
        try:
            if action == "stop":
                self.cluster.stop()
                self.message = f"Stopped cluster {self.cluster.name!r}."
            elif action == "kill":
                self.cluster.kill(job, task)
                self.message = f"Killed task {job}:{task}."
            else:
                info = self.cluster.restart(job, task)
                self.message = f"Restarted task {job}:{task} (pid {info.pid})."
        except (ValueError, RuntimeError) as e:  # a ClusterStartError is a RuntimeError
            self.message = f"Could not {action} {'the cluster' if job is None else f'task {job}:{task}'}: {e}"
        self.refresh()
