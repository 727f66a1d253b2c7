"""A client's shortcut for a step: run its partitions on their tasks directly instead of through the master.

A session's steps go to the master of the task the session connected to, which runs each partition on its task.
For a step whose whole graph is one partition on one task (``assign_add`` on a ps variable, reading a variable, a
queue op), that is two round trips where one would do. The master tells the client how to run such a step (the
task's address, the registered partition and where feeds and fetches go: a *route*), and the client's next steps of
that signature are a ``RunGraph`` request to the task itself: the same kernels, errors and deadline, one hop.

A step with a partition on each of several tasks (a worker's training step reading and updating ps variables) gets a
:class:`SplitRoute`: the client sends every task its ``RunGraph`` at once under one step id, and the partitions
exchange tensors among themselves as when the master runs them. That takes two hops off the step's critical path
(client → master → ps becomes client → ps, and the ps answers the client instead of the master) and the master's
bookkeeping off the task that serves it. As the master does, the client aborts the step on every task at its first
failure, at its deadline, and when it gives up waiting (an interrupt included), so that no partition waits for a
tensor that will not come. A partition the task no longer holds (a restart) fails the step with the master's
``AbortedError``: the other partitions may have run, so the step is not run again; later steps ask the master.

The master stays in charge: a route is used only while the client heard from the master within the last second
(one step a second still goes through it) and its connection to the master has not broken since, so a master that
went down or restarted is seen as before (a partition waiting for a tensor pings the master every 2 s, as in a step
the master runs); closing or resetting the session deregisters the partitions and cancels the client's steps still
running there; a one-partition step whose partition the task no longer holds (a newer plan, a restart) goes back to
the master, which never ran it. Each task must answer from the address the master named, with the incarnation the
session knows, before the first direct step. A client process killed while its step runs (between sending the
step's requests, or while a partition waits on an empty queue) stops pinging the tasks, which give the partitions up
once it has been silent for 5 s (see :mod:`.client_watch`; steps through the master are watched the same way); a
client that gives up a step of one partition (Ctrl-C) aborts it on its task, as one of several.

Example:
    >>> route = DirectRoute({"task": "/job:ps/replica:0/task:0", "address": "127.0.0.1:2222",
    ...     "graph_handle": "/job:ps/replica:0/task:0/graph/1-ab", "incarnation": 7, "master": "127.0.0.1:2223",
    ...     "master_incarnation": 9, "feeds": [[0, "x:0"]], "fetches": [[1, "y:0"], [0, "z:0"]], "targets": []},
    ...     master_address="127.0.0.1:2223", version=3)
    >>> header, tensors = route.request([5.0], timeout=None, step_id=11)
    >>> header["feeds"], header["fetches"], tensors
    (['x:0'], ['y:0', 'z:0'], [5.0])
    >>> route.results({"incarnation": 7}, [6.0, 7.0], fetch_count=2)
    [7.0, 6.0]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook import errors

#: A route is used only within this many seconds of the calling thread's last step through the master.
REFRESH_SECS = 1.0


class DirectRoute:
    """One signature's route, as the master sent it (see the module docstring).

    Args:
        route: The master's ``route`` (plain data from the wire: checked here).
        master_address: The master's address as the client reaches it (a route with no ``address`` is to the
            master's own task).
        version: The client's graph version when the step that brought it was sent.

    Raises:
        DataLossError: ``route`` is not what a master sends.
    """

    __slots__ = (
        "task",
        "address",
        "handle",
        "incarnation",
        "master",
        "master_incarnation",
        "feeds",
        "fetches",
        "targets",
        "version",
    )

    def __init__(self, route: dict[str, Any], master_address: str, version: int) -> None:
        try:
            self.task = _text(route["task"])
            self.address = master_address if route["address"] is None else _text(route["address"])
            self.handle = _text(route["graph_handle"])
            self.incarnation = route["incarnation"]
            self.master = _text(route["master"])
            self.master_incarnation = route["master_incarnation"]
            self.feeds = [(int(i), _text(n)) for i, n in route["feeds"]]
            self.fetches = [(int(i), _text(n)) for i, n in route["fetches"]]
            self.targets = [_text(n) for n in route["targets"]]
        except (KeyError, TypeError, ValueError) as e:
            raise errors.DataLossError(None, None, f"The master sent a malformed step route ({e!r})") from None
        for incarnation in (self.incarnation, self.master_incarnation):
            if incarnation is not None and type(incarnation) is not int:
                raise errors.DataLossError(None, None, "The master sent a step route with a malformed incarnation")
        self.version = version

    @property
    def parts(self) -> list[DirectRoute]:
        """This route as the one part of a step (as :attr:`SplitRoute.parts` lists several)."""
        return [self]

    def request(
        self, values: list[Any], timeout: float | None, step_id: int, pings_every: float | None = None
    ) -> tuple[dict[str, Any], list[Any]]:
        """The ``RunGraph`` request of one step fed ``values`` (in the session's feed order); ``pings_every``: the
        client's ping interval while it waits, by which the task tells when it is gone (:mod:`.client_watch`)."""
        header = {
            "graph_handle": self.handle,
            "step_id": step_id,
            "feeds": [name for _, name in self.feeds],
            "fetches": [name for _, name in self.fetches],
            "targets": self.targets,
            "timeout": timeout,
            "master": self.master,
            # The task gives the step up if the master it pings while waiting restarted (it would wait for nobody).
            "master_incarnation": self.master_incarnation,
        }
        if pings_every is not None:
            header["pings_every"] = pings_every
        return header, [values[i] for i, _ in self.feeds]

    def results(self, reply: dict[str, Any], tensors: list[Any], fetch_count: int) -> list[Any]:
        """The step's fetched values from the task's reply, in the session's fetch order.

        Raises:
            AbortedError: the task restarted since the session was created (its state is gone), as the master says.
        """
        return self.place(reply, tensors, [None] * fetch_count)

    def place(self, reply: dict[str, Any], tensors: list[Any], results: list[Any]) -> list[Any]:
        """Puts this partition's fetched values from the task's reply at their places in ``results`` (the session's
        fetch order) and returns it; raises as :meth:`results`."""
        seen = reply.get("incarnation")
        if seen is not None and self.incarnation not in (None, seen):
            raise errors.AbortedError(
                None, None, f"Task {self.task} restarted since this session was created; its state was lost"
            )
        if len(tensors) != len(self.fetches):
            raise errors.DataLossError(
                None, None, f"Task {self.task} answered {len(tensors)} values for {len(self.fetches)} fetches"
            )
        for (index, _), value in zip(self.fetches, tensors):
            results[index] = value
        return results

    def gone(self, error: errors.OpError) -> bool:
        """Whether ``error`` says the task no longer holds this route's partition: the step did not run, and the
        master should be asked again."""
        return isinstance(error, errors.AbortedError) and error.message == unregistered_message(self.handle, self.task)


class SplitRoute:
    """The route of a signature whose graph has a partition on each of several tasks: the client sends every task
    its ``RunGraph`` at once, under one step id, and the partitions exchange their tensors among themselves as when
    the master runs them (see the module docstring).

    Args:
        route: The master's ``route``: ``{"parts": [...]}``, one :class:`DirectRoute`'s route per task.
        master_address, version: As for :class:`DirectRoute`.

    Raises:
        DataLossError: ``route`` is not what a master sends.

    Example:
        >>> part = {"address": None, "incarnation": 7, "master": "127.0.0.1:2223", "master_incarnation": 9,
        ...         "feeds": [], "targets": []}
        >>> route = SplitRoute({"parts": [
        ...     {**part, "task": "/job:worker/replica:0/task:0", "graph_handle": "w/1", "fetches": [[1, "y:0"]]},
        ...     {**part, "task": "/job:ps/replica:0/task:0", "address": "127.0.0.1:2222", "graph_handle": "p/1",
        ...      "fetches": [[0, "v:0"]]}]}, master_address="127.0.0.1:2223", version=3)
        >>> [(address, header["graph_handle"]) for address, _, header, _ in route.requests([], None, step_id=11)]
        [('127.0.0.1:2223', 'w/1'), ('127.0.0.1:2222', 'p/1')]
        >>> route.results([({"incarnation": 7}, [2.0]), ({"incarnation": 7}, [1.0])], fetch_count=2)
        [1.0, 2.0]
    """

    __slots__ = ("parts", "version")

    def __init__(self, route: dict[str, Any], master_address: str, version: int) -> None:
        parts = route.get("parts") if isinstance(route, dict) else None
        if not isinstance(parts, list) or len(parts) < 2:
            raise errors.DataLossError(None, None, "The master sent a step route of several tasks without its parts")
        self.parts = [DirectRoute(part, master_address, version) for part in parts]
        if len({part.address for part in self.parts}) != len(self.parts):
            raise errors.DataLossError(None, None, "The master sent a step route with two partitions at one address")
        self.version = version

    def requests(
        self, values: list[Any], timeout: float | None, step_id: int, pings_every: float | None = None
    ) -> list[tuple[str, str, dict[str, Any], list[Any]]]:
        """Each task's ``(address, "RunGraph", header, tensors)`` for one step fed ``values`` (``pings_every`` as
        for :meth:`DirectRoute.request`)."""
        return [(part.address, "RunGraph", *part.request(values, timeout, step_id, pings_every)) for part in self.parts]

    def results(self, replies: list[tuple[dict[str, Any], list[Any]]], fetch_count: int) -> list[Any]:
        """The step's fetched values from every task's reply (in :meth:`requests`' order), in the session's order.

        Raises:
            AbortedError: a task restarted since the session was created.
        """
        results: list[Any] = [None] * fetch_count
        for part, (reply, tensors) in zip(self.parts, replies):
            part.place(reply, tensors, results)
        return results

    def gone(self, error: errors.OpError) -> bool:
        """Whether ``error`` says a task no longer holds its partition (see :meth:`DirectRoute.gone`)."""
        return any(part.gone(error) for part in self.parts)


def learn_route(route: Any, master_address: str, version: int) -> DirectRoute | SplitRoute:
    """The client's form of the route a master sent: a :class:`SplitRoute` for several partitions, else a
    :class:`DirectRoute`.

    Raises:
        DataLossError: ``route`` is not what a master sends.

    Example:
        >>> learn_route({"parts": []}, "127.0.0.1:2223", 1)
        Traceback (most recent call last):
            ...
        dtf_notebook.errors.DataLossError: The master sent a step route of several tasks without its parts
    """
    if isinstance(route, dict) and "parts" in route:
        return SplitRoute(route, master_address, version)
    return DirectRoute(route, master_address, version)


def unregistered_message(handle: str, task: str) -> str:
    """The message of the ``AbortedError`` a ``RunGraph`` of a graph ``handle`` that ``task`` does not hold gets.

    A client running a one-partition step directly (see this module) reads it as "ask the master again":
    the step did not run.

    Example:
        >>> unregistered_message("/job:ps/replica:0/task:0/graph/3-ab", "/job:ps/replica:0/task:0")[:52]
        'Graph /job:ps/replica:0/task:0/graph/3-ab is not reg'
    """
    return f"Graph {handle} is not registered on {task} (the task may have restarted)"


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value
