"""``VariableWatcher``: the variables every task of a cluster holds, refreshed live while training runs.

It asks each task's worker service for its variables (``ListVariables``: name, container, shape,
dtype, device and min/max/mean/norm, all computed on the task) every ``refresh`` seconds from a
background thread, and keeps each variable's norm over time for a sparkline. Variables of any
session and any client show up, since they live in the tasks' resource containers. A histogram of
one variable is computed on its task too (``VariableHistogram``): no tensor is ever copied out.

A task that stops answering is marked unavailable (its last rows stay, greyed, under a red line that
says why); the watcher goes on with the others. Watching a :class:`LocalCluster` (started here or
connected from another kernel), the watcher ends by itself when that cluster stops, and says so.
``stop()`` (or leaving a ``with`` block) ends the thread.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.train.Server.create_local_server() as server, tf.Graph().as_default():
    ...     v = tf.Variable([3.0, 4.0], name="v")
    ...     with tf.Session(server.target) as sess:
    ...         sess.run(v.initializer)
    ...         with VariableWatcher(server.target, start=False) as watcher:
    ...             rows = watcher.poll()
    >>> [(r["name"], r["shape"], r["norm"]) for r in rows]
    [('v', [2], 5.0)]
"""

from __future__ import annotations

import collections
import html
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from dtf_notebook import errors
from dtf_notebook.distributed.cluster_key import ClusterKey
from dtf_notebook.distributed.cluster_spec import ClusterSpec
from dtf_notebook.distributed.transport import client_for
from dtf_notebook.notebook.sparkline import histogram_svg, sparkline
from dtf_notebook.notebook.widget_fallback import cell_text, text_table, widgets_available

__all__ = ["VariableWatcher", "cluster_tasks"]

_COLUMNS = ["task", "name", "container", "shape", "dtype", "device", "min", "max", "mean", "norm"]
Key = tuple[str, str, str]  # (task, container, name)
_PAD = ' style="padding:1px 6px"'  # compact rows, whatever the notebook's table style


def _short(task: str) -> str:
    """A task name without its replica: ``/job:ps/task:0``."""
    return task.replace("/replica:0", "")


def _short_device(device: str | None) -> str | None:
    """The device within its task (the task heads its rows): ``CPU:0``.

    Example:
        >>> _short_device("/job:ps/replica:0/task:0/device:CPU:0")
        'CPU:0'
    """
    return device.rsplit("/device:", 1)[-1] if device else device


def cluster_tasks(
    target_or_cluster: Any, cluster_key: ClusterKey | None = None, timeout: float = 5.0
) -> dict[str, str]:
    """Task name → address of every task of a cluster.

    Args:
        target_or_cluster: A session target (``zmq://host:port`` / ``grpc://host:port``, whose server is
            asked for its cluster), a ClusterSpec, a dict ``{job: [addresses]}``, or an object with a
            ``spec`` attribute holding one of those (a LocalCluster).
        cluster_key: The cluster's key (default: the one this process knows for the target's address).
        timeout: Seconds to wait for a target's server to answer.

    Raises:
        TypeError: ``target_or_cluster`` is none of those.
        UnavailableError: the target's server did not answer.

    Example:
        >>> cluster_tasks({"ps": ["127.0.0.1:2222"], "worker": ["127.0.0.1:2223"]})
        {'/job:ps/replica:0/task:0': '127.0.0.1:2222', '/job:worker/replica:0/task:0': '127.0.0.1:2223'}
    """
    spec = getattr(target_or_cluster, "spec", target_or_cluster)
    if isinstance(spec, str):
        address = spec.split("://", 1)[-1].rstrip("/")
        reply, _ = client_for(address, cluster_key).call(address, "GetClusterSpec", {}, timeout=timeout)
        spec = reply["cluster"]
    if not isinstance(spec, ClusterSpec | Mapping):
        raise TypeError(
            "VariableWatcher needs a session target ('zmq://host:port'), a ClusterSpec, a dict of job -> addresses "
            f"or an object with a .spec (a LocalCluster), not {type(target_or_cluster).__name__}"
        )
    cluster = ClusterSpec(spec)
    return {
        f"/job:{job}/replica:0/task:{i}": cluster.task_address(job, i)
        for job in cluster.jobs
        for i in cluster.task_indices(job)
    }


def _containers(containers: str | Iterable[str] | None) -> list[str] | None:
    """The container names to ask for: one name is one container (not its characters).

    Example:
        >>> _containers("expA"), _containers(["expA", ""]), _containers(None)
        (['expA'], ['expA', ''], None)
    """
    if containers is None:
        return None
    names = [containers] if isinstance(containers, str) else list(containers)
    bad = [name for name in names if not isinstance(name, str)]
    if bad:
        raise TypeError(f"containers must be container names (str), not {bad[0]!r}")
    return names


class VariableWatcher:
    """Lists every variable of a cluster's tasks, refreshed from a background thread.

    Args:
        target_or_cluster: Which cluster (see :func:`cluster_tasks`).
        containers: The resource container to list (a name; ``""`` is the default container), several
            (a list of names), or None for all of them.
        refresh: Seconds between refreshes.
        history: How many norms to keep per variable (for the sparklines).
        timeout: Seconds to wait for a task's answer before marking it unavailable for this refresh.
        cluster_key: The cluster's key (default: the one this process knows for its tasks' addresses).
        start: Start refreshing now (False: call :meth:`poll` or :meth:`start` yourself).

    Raises:
        ValueError: ``refresh`` is not positive.
        TypeError: a container name is not a str, or ``target_or_cluster`` names no cluster.

    Attributes:
        tasks: Task name → address.
        rows: The latest row per variable: ``task``, ``name``, ``container``, ``shape``, ``dtype``,
            ``device``, ``initialized``, ``min``, ``max``, ``mean``, ``norm`` and ``available`` (False when
            its task did not answer the last refresh; the values are then the last ones seen).
        history: ``(task, container, name)`` → ``[(time, norm), ...]``, oldest first.
        status: Task name → ``"ok"``, ``"unavailable: <why>"``, or ``"pending"`` before its first answer.
        polls: How many refreshes have completed.
        error: What stopped the background thread, if something did.

    Example:
        >>> watcher = VariableWatcher({"worker": ["127.0.0.1:2222"]}, start=False)  # asks nothing yet
        >>> watcher.status, watcher.rows, watcher.running
        ({'/job:worker/replica:0/task:0': 'pending'}, [], False)
    """

    def __init__(
        self,
        target_or_cluster: Any,
        containers: str | Iterable[str] | None = None,
        refresh: float = 0.5,
        history: int = 120,
        timeout: float = 2.0,
        cluster_key: ClusterKey | None = None,
        start: bool = True,
    ) -> None:
        if refresh <= 0:
            raise ValueError(f"refresh must be a positive number of seconds, got {refresh!r}")
        self.tasks = cluster_tasks(target_or_cluster, cluster_key, timeout)
        # A local cluster (ours or another kernel's) says when it stopped; a bare spec or target cannot.
        self._cluster = target_or_cluster if hasattr(target_or_cluster, "file") else None
        self.cluster_stopped = False
        self.containers = _containers(containers)
        self.refresh, self.timeout, self._history_len = refresh, timeout, history
        self._client = client_for(next(iter(self.tasks.values()), ""), cluster_key)
        self.rows: list[dict[str, Any]] = []
        self.history: dict[Key, list[tuple[float, float]]] = {}
        self._norms: dict[Key, collections.deque[tuple[float, float]]] = {}
        self.status = {task: "pending" for task in self.tasks}
        self.polls = 0
        self.error: BaseException | None = None
        self._listeners: list[Callable[[VariableWatcher], None]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._widget: Any = None
        if start:
            self.start()

    # ---- refreshing ------------------------------------------------------------------------------
    def poll(self) -> list[dict[str, Any]]:
        """Refreshes once now: asks every task at once and waits up to ``timeout``; returns the new rows."""
        header = {"containers": self.containers}
        calls, answers = {}, {}
        for task, address in self.tasks.items():
            try:
                calls[task] = self._client.call_async(address, "ListVariables", header)
            except errors.OpError as e:
                answers[task] = f"unavailable: {e.message}"
        deadline = time.monotonic() + self.timeout
        for task, future in calls.items():
            try:
                reply, _ = future.result(max(0.0, deadline - time.monotonic()))
                answers[task] = reply["variables"]
            except errors.OpError as e:
                answers[task] = f"unavailable: {e.message}"
            except TimeoutError:
                answers[task] = f"unavailable: no answer within {self.timeout:g} s"
        self._merge(answers, time.time())
        for listener in list(self._listeners):
            listener(self)
        return self.rows

    def _merge(self, answers: Mapping[str, list[dict[str, Any]] | str], now: float) -> None:
        with self._lock:
            by_task: dict[str, list[dict[str, Any]]] = {}
            for row in self.rows:
                by_task.setdefault(row["task"], []).append(row)
            for task, answer in answers.items():
                if isinstance(answer, str):
                    self.status[task] = answer
                    by_task[task] = [{**row, "available": False} for row in by_task.get(task, [])]
                    continue
                self.status[task] = "ok"
                by_task[task] = [{**row, "task": task, "available": True} for row in answer]
                for row in by_task[task]:
                    if row.get("norm") is not None:
                        key = (task, row["container"], row["name"])
                        norms = self._norms.setdefault(key, collections.deque(maxlen=self._history_len))
                        norms.append((now, row["norm"]))
            self.rows = sorted(
                (row for task in self.tasks for row in by_task.get(task, [])),
                key=lambda r: (r["task"], r["container"], r["name"]),
            )
            self.history = {key: list(norms) for key, norms in self._norms.items()}
            self.polls += 1

    def start(self) -> None:
        """Starts refreshing every ``refresh`` seconds (a no-op when already running)."""
        if self.running:
            return
        self._stopping.clear()
        self._thread = threading.Thread(target=self._run, name="dtf-variable-watcher", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while not self._stopping.is_set():
                self.poll()
                if self._check_cluster():
                    break
                self._stopping.wait(self.refresh)
        except BaseException as e:
            self.error = e  # shown by the watcher; the thread's traceback is printed too
            raise

    def _check_cluster(self) -> bool:
        """Whether the watched local cluster stopped; then every task says so and listeners hear it once."""
        from dtf_notebook.notebook.cluster_widget import cluster_alive

        if self._cluster is None or cluster_alive(self._cluster):
            return False
        with self._lock:
            self.cluster_stopped = True
            self.status = {task: "cluster stopped" for task in self.tasks}
            self.rows = [{**row, "available": False} for row in self.rows]
        for listener in list(self._listeners):
            listener(self)
        return True

    @property
    def running(self) -> bool:
        """Whether the background thread is refreshing."""
        return self._thread is not None and self._thread.is_alive()

    def stop(self) -> None:
        """Stops refreshing and waits for the background thread to end.

        A watcher shown in a notebook then leaves its last table in its output as static HTML, which a saved
        notebook keeps (showing the watcher again after :meth:`start` makes a live view again).
        """
        self.pause()
        if self._widget is not None:
            self._widget.finish()

    def pause(self) -> None:
        """Stops refreshing, keeping a shown watcher live (what its Stop button does; Start resumes)."""
        self._stopping.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(self.timeout + self.refresh + 5.0)

    def __enter__(self) -> VariableWatcher:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def add_listener(self, listener: Callable[[VariableWatcher], None]) -> None:
        """Calls ``listener(watcher)`` after every refresh (from the refreshing thread)."""
        self._listeners.append(listener)

    # ---- one variable ----------------------------------------------------------------------------
    def find(self, name: str, container: str = "", task: str | None = None) -> dict[str, Any]:
        """The latest row of variable ``name``.

        Raises:
            ValueError: no task holds it, or several do and ``task`` does not say which (names them).
        """
        rows = [r for r in self.rows if r["name"] == name and r["container"] == container]
        if task is not None:
            rows = [r for r in rows if r["task"] == task]
        if not rows:
            where = f" on {task}" if task else ""
            raise ValueError(f"No variable {name!r} in container {container!r}{where} (as of the last refresh)")
        if len(rows) > 1:
            raise ValueError(
                f"Variable {name!r} is on several tasks ({', '.join(r['task'] for r in rows)}): pass task="
            )
        return rows[0]

    def histogram(self, name: str, container: str = "", task: str | None = None, bins: int = 30) -> dict[str, Any]:
        """A histogram of variable ``name``'s values, computed on its task: ``edges`` and ``counts``.

        Raises:
            ValueError: see :meth:`find`.
            OpError: the task failed to answer (UnavailableError when it is gone).
        """
        row = self.find(name, container, task)
        header = {"name": name, "container": container, "bins": bins}
        reply, _ = self._client.call(self.tasks[row["task"]], "VariableHistogram", header, timeout=self.timeout)
        return {"name": name, "task": row["task"], "edges": reply["edges"], "counts": reply["counts"]}

    # ---- showing ---------------------------------------------------------------------------------
    def _table_rows(self) -> list[list[Any]]:
        with self._lock:
            rows = list(self.rows)
        return [[r.get(c) for c in _COLUMNS] for r in rows]

    def summary_html(self) -> str:
        """One line above the table: tasks, variables, refreshing or not, and in red what is wrong.

        Example:
            >>> VariableWatcher({"ps": ["127.0.0.1:2222"]}, start=False).summary_html()  # doctest: +ELLIPSIS
            '<div ...>0 variables on 1 task; stopped; 0 refreshes</div>'
        """
        with self._lock:
            status, count = dict(self.status), len(self.rows)
        tasks = len(self.tasks)
        if self.cluster_stopped:
            state = "stopped: the cluster stopped"
        elif self.error is not None:
            state = f"stopped by an error: {self.error}"
        else:
            state = f"refreshing every {self.refresh:g} s" if self.running else "stopped"
        line = f"{count} variables on {tasks} task{'s' * (tasks != 1)}; {state}; {self.polls} refreshes"
        alarm = ""
        down = {t: s for t, s in status.items() if s.startswith("unavailable")}
        if self.cluster_stopped:
            alarm = "Cluster stopped: the values shown are the last ones read."
        elif down:
            alarm = "; ".join(f"task {_short(t)} {why}" for t, why in down.items())
        alarm_html = f' <b style="color:#b22">{html.escape(alarm)}</b>' if alarm else ""
        return f'<div style="font:12px sans-serif;color:#444">{html.escape(line)}{alarm_html}</div>'

    def table_html(self) -> str:
        """The rows as a compact HTML table, grouped by task, with a sparkline of each variable's norm.

        A task's rows sit under a line naming it and its state; the rows of a task that did not answer (or
        of a stopped cluster) are greyed: they are the last values seen.
        """
        with self._lock:
            rows, history, status = list(self.rows), dict(self.history), dict(self.status)
        containers = any(r["container"] for r in rows)
        columns = [c for c in _COLUMNS if c != "task" and (containers or c != "container")] + ["norm over time"]
        head = "".join(f"<th{_PAD}>{html.escape(c)}</th>" for c in columns)
        body = []
        for task in self.tasks:
            state = status.get(task, "pending")
            colour = "#2a7a2a" if state == "ok" else "#b22" if state != "pending" else "#777"
            mine = [r for r in rows if r["task"] == task]
            empty = " &middot; no variables" if state == "ok" and not mine else ""
            body.append(
                f'<tr class="dtf-task"><th colspan="{len(columns)}" style="text-align:left;padding:2px 6px;'
                f'background:#f3f3f3">{html.escape(task)} <span style="color:{colour};font-weight:normal">'
                f"{html.escape(state)}{empty}</span></th></tr>"
            )
            for r in mine:
                # A variable with no values (not initialized, or reset since) has no trend to show.
                norms = [n for _, n in history.get((task, r["container"], r["name"]), [])]
                trend = sparkline(norms) if r.get("norm") is not None else ""
                cells = [_short_device(r.get(c)) if c == "device" else r.get(c) for c in columns[:-1]]
                style = "" if r["available"] else ' style="color:#999"'
                body.append(
                    f"<tr{style}>"
                    + "".join(f"<td{_PAD}>{html.escape(cell_text(v))}</td>" for v in cells)
                    + f"<td{_PAD}>{trend if r['available'] else 'unavailable'}</td></tr>"
                )
        return (
            '<table class="dtf-table dtf-variables" style="font-size:12px">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        )

    def histogram_html(self, name: str, container: str = "", task: str | None = None, bins: int = 30) -> str:
        """An SVG histogram of one variable (computed on its task), with its name above."""
        hist = self.histogram(name, container, task, bins)
        title = html.escape(f"{name} on {hist['task']}")
        return f'<div style="font:11px sans-serif">{title}</div>' + histogram_svg(hist["edges"], hist["counts"])

    def widget(self) -> Any:
        """The ipywidgets view of this watcher (table, histogram picker, stop button), live while it refreshes;
        made once, so displaying the watcher again shows the same view."""
        if self._widget is None:
            from dtf_notebook.notebook.watcher_widget import VariableWatcherWidget

            self._widget = VariableWatcherWidget(self)
        return self._widget

    def _ipython_display_(self) -> None:
        from IPython.display import HTML, display

        display(self.widget() if widgets_available() else HTML(self._repr_html_()))

    def _repr_html_(self) -> str:
        return f'<div class="dtf-watcher">{self.summary_html()}{self.table_html()}</div>'

    def __repr__(self) -> str:
        state = "refreshing" if self.running else "stopped"
        down = sum(s.startswith("unavailable") for s in self.status.values())
        head = f"<VariableWatcher {len(self.tasks)} tasks ({down} unavailable), {len(self.rows)} variables, {state}>"
        return head + "\n" + text_table(_COLUMNS, self._table_rows())
