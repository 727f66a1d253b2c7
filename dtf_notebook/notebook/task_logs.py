"""Task output for people: what a cluster's tasks wrote since the last look, followed or streamed.

Every task of a :class:`~dtf_notebook.notebook.local_cluster.LocalCluster` writes its output to a log
file; a restarted task writes a new one. :class:`LogFollower` returns what is new, :func:`follow` prints
one task's output until interrupted (``%dtf_cluster logs --follow``), and :class:`LogStream` shows every
task's output as it comes, in a widget or on stdout (``%dtf_cluster start --stream-logs``).

Example:
    >>> from dtf_notebook.notebook.local_cluster import LocalCluster
    >>> with LocalCluster(ps=1, workers=1, name="doc-logs") as cluster:
    ...     follower = LogFollower(cluster, [("worker", 0)])
    ...     print(follower.poll().split()[:3])
    ...     cluster.kill("worker", 0)
    ...     print(follower.poll().strip())
    ['ready', 'worker', '0']
    [worker:0 killed]
"""

from __future__ import annotations

import contextvars
import html
import sys
import threading
import time
from collections.abc import Callable

from dtf_notebook.notebook.local_cluster import LocalCluster

__all__ = ["LogFollower", "LogStream", "follow"]

POLL_SECONDS = 0.25  # between looks at the logs


class LogFollower:
    """The new output of some of a cluster's tasks since the last :meth:`poll`.

    A restarted task writes a new log; the follower notices the new pid and starts that log from its
    beginning. With ``prefix``, only whole lines are returned, each marked with its task.

    Args:
        cluster: The cluster.
        tasks: The ``(job, task)`` pairs to follow (default: all).
        prefix: Mark each line with ``[job:task]`` (for several tasks in one stream).
        from_start: Return what the logs already hold on the first poll (else only what comes after).

    Example:
        >>> from dtf_notebook.notebook.local_cluster import LocalCluster
        >>> with LocalCluster(ps=1, workers=0, name="doc-follow") as cluster:
        ...     follower = LogFollower(cluster, prefix=True)
        ...     print(follower.poll().splitlines()[0])  # doctest: +ELLIPSIS
        [ps:0] ready ps 0 127.0.0.1:...
    """

    def __init__(
        self,
        cluster: LocalCluster,
        tasks: list[tuple[str, int]] | None = None,
        prefix: bool = False,
        from_start: bool = True,
    ) -> None:
        self.cluster, self.tasks, self.prefix, self.from_start = cluster, tasks, prefix, from_start
        self._seen: dict[tuple[str, int], tuple[int, int, str]] = {}  # (job, task) -> (pid, offset, status)

    def poll(self) -> str:
        """The text written since the last call, with a note for each task that ended or restarted."""
        out = []
        for info in self.cluster.tasks:
            key = (info.job, info.task)
            if self.tasks is not None and key not in self.tasks:
                continue
            text = self.cluster.logs(info.job, info.task)
            pid, offset, status = self._seen.get(key, (info.pid, 0 if self.from_start else len(text), "running"))
            if pid != info.pid or offset > len(text):
                out.append(f"[{info.job}:{info.task} restarted, pid {info.pid}]\n")
                offset, status = 0, "running"
            new = text[offset:]
            if self.prefix:
                new = new[: new.rfind("\n") + 1]  # a partial line waits for its end
                out += [f"[{info.job}:{info.task}] {line}\n" for line in new.splitlines()]
            else:
                out.append(new)
            offset += len(new)
            if info.status != status and info.status != "running":
                out.append(f"[{info.job}:{info.task} {info.status}]\n")
            self._seen[key] = (info.pid, offset, info.status)
        return "".join(out)


class LogStream:
    """A thread that shows the output of every task as it comes, until the cluster stops or :meth:`close`.

    Args:
        cluster: The cluster.
        use_widget: Show the latest lines in an ipywidgets ``HTML`` (``.widget``, to display), else write
            them to stdout.

    Example:
        >>> from dtf_notebook.notebook.local_cluster import LocalCluster
        >>> with LocalCluster(ps=1, workers=0, name="doc-stream") as cluster:
        ...     stream = LogStream(cluster, use_widget=True)
        ...     time.sleep(4 * POLL_SECONDS)
        ...     stream.close()
        >>> "[ps:0] ready ps 0" in stream.widget.value
        True
    """

    _LINES = 400  # the widget shows the latest lines only

    def __init__(self, cluster: LocalCluster, use_widget: bool) -> None:
        self.follower = LogFollower(cluster, prefix=True)
        self.cluster, self.widget, self._lines = cluster, None, []
        self._closed = threading.Event()
        if use_widget:
            import ipywidgets as widgets

            # Printing from a thread would land in whichever cell runs at that moment; a widget stays put.
            self.widget = widgets.HTML(layout=widgets.Layout(max_height="320px", overflow="auto"))
        # Run in a copy of the starting cell's context: a kernel then sends the thread's prints to that cell.
        context = contextvars.copy_context()
        self._thread = threading.Thread(
            target=context.run, args=(self._run,), name=f"dtf-logs-{cluster.name}", daemon=True
        )
        self._thread.start()

    def _run(self) -> None:
        while not self._closed.wait(POLL_SECONDS):
            text = self.follower.poll()
            if text:
                self._show(text)
            if not self.cluster.running:
                break

    def _show(self, text: str) -> None:
        if self.widget is None:
            sys.stdout.write(text)
            sys.stdout.flush()
            return
        self._lines = (self._lines + text.splitlines())[-self._LINES :]
        self.widget.value = "<pre style='margin:0'>" + html.escape("\n".join(self._lines)) + "</pre>"

    def close(self) -> None:
        """Stops the thread (after its last look at the logs)."""
        self._closed.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)


def follow(follower: LogFollower, alive: Callable[[], bool], first: str, name: str) -> None:
    """Prints ``first``, then new output until interrupted (a kernel's interrupt is a KeyboardInterrupt) or
    ``alive()`` is false.

    Example:
        >>> from dtf_notebook.notebook.local_cluster import LocalCluster
        >>> with LocalCluster(ps=1, workers=0, name="doc-follow-ps") as cluster:
        ...     follow(LogFollower(cluster), lambda: False, "earlier output\\n", "ps:0")
        earlier output
        (stopped following ps:0: the cluster stopped)
    """
    last = first
    try:
        # Inside the try: a kernel's flush waits for its output thread, so an interrupt sent as soon as
        # ``first`` is seen can land in this print.
        print(first, end="", flush=True)
        while alive():
            time.sleep(POLL_SECONDS)
            text = follower.poll()
            if text:
                print(text, end="", flush=True)
                last = text
    except KeyboardInterrupt:
        separator = "" if not last or last.endswith("\n") else "\n"
        print(f"{separator}(stopped following {name})", flush=True)
        return
    print(f"(stopped following {name}: the cluster stopped)", flush=True)
