"""A client's shortcut for a step of one partition: run it on its task directly instead of through the master.

A session's steps go to the master of the task the session connected to, which runs each partition on its task.
For a step whose whole graph is one partition on one task (``assign_add`` on a ps variable, reading a variable, a
queue op), that is two round trips where one would do. The master tells the client how to run such a step (the
task's address, the registered partition and where feeds and fetches go: a *route*), and the client's next steps of
that signature are a ``RunGraph`` request to the task itself: the same kernels, errors and deadline, one hop.

The master stays in charge: a route is used only while the client heard from the master within the last second
(one step a second still goes through it) and its connection to the master has not broken since, so a master that
went down or restarted is seen as before; closing or resetting the session deregisters the partition and cancels the
client's steps still running there; a partition the task no longer holds (a newer plan, a restart) sends the step
back to the master, which never ran it. The task must answer from the address the master named, with the incarnation
the session knows, before the first direct step.

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

    def request(self, values: list[Any], timeout: float | None, step_id: int) -> tuple[dict[str, Any], list[Any]]:
        """The ``RunGraph`` request of one step fed ``values`` (in the session's feed order)."""
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
        return header, [values[i] for i, _ in self.feeds]

    def results(self, reply: dict[str, Any], tensors: list[Any], fetch_count: int) -> list[Any]:
        """The step's fetched values from the task's reply, in the session's fetch order.

        Raises:
            AbortedError: the task restarted since the session was created (its state is gone), as the master says.
        """
        seen = reply.get("incarnation")
        if seen is not None and self.incarnation not in (None, seen):
            raise errors.AbortedError(
                None, None, f"Task {self.task} restarted since this session was created; its state was lost"
            )
        if len(tensors) != len(self.fetches):
            raise errors.DataLossError(
                None, None, f"Task {self.task} answered {len(tensors)} values for {len(self.fetches)} fetches"
            )
        results: list[Any] = [None] * fetch_count
        for (index, _), value in zip(self.fetches, tensors):
            results[index] = value
        return results

    def gone(self, error: errors.OpError) -> bool:
        """Whether ``error`` says the task no longer holds this route's partition: the step did not run, and the
        master should be asked again."""
        return isinstance(error, errors.AbortedError) and error.message == unregistered_message(self.handle, self.task)


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
