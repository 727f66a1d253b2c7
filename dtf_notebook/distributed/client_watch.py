"""How a task notices that the client of a step it serves is gone, so that the step does not wait for it forever.

A client waiting for replies pings every task that owes it one, every ``heartbeat_interval`` seconds
(``Client.call``, ``Client.call_all``), and says so in the request's header: ``"pings_every": seconds``. A task
serving such a step (a ``RunStep`` to its master, a ``RunGraph`` the client sent it directly) keeps checking, while
the step waits, when its event loop last heard anything from that client's connection. After
``max(MIN_SILENT_SECS, SILENT_PINGS * pings_every)`` seconds of silence the client is taken for dead (killed, or its
machine gone) and the step is given up with ``CancelledError``, as if the client had closed its session: what the
step holds is let go, and a step blocked on an empty queue takes no element enqueued after it was given up. TF1
cancels a step when the client's connection closes (a killed process) and never on silence, so a client whose
machine vanished leaves its step waiting there; here a closed connection is noticed by the same silence, 5 s later.

Only silence counts: a client that is alive keeps pinging however long its step waits (a dequeue may wait for
hours). A request without ``pings_every`` (another master, an older client) is not watched. A partition the master
runs in the very thread serving the client's ``RunStep`` (one on the master's own task) takes that step's watch
from :data:`inherited`.

Example:
    >>> heard = {b"client": 0.5}
    >>> watch = client_watch({"pings_every": 0.5}, b"client", heard.get)
    >>> watch()                              # heard from 0.5 s ago: alive
    >>> heard[b"client"] = 6.0
    >>> try:
    ...     watch()
    ... except errors.CancelledError as e:
    ...     print(e.message[:55])
    The client that sent this step was silent for 6.0 s (it
    >>> print(client_watch({}, b"client", heard.get))  # not announced: not watched
    None
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Callable
from typing import Any

from dtf_notebook import errors

#: The shortest silence after which a client is taken for dead, whatever its ping interval.
MIN_SILENT_SECS = 5.0
#: A client is taken for dead after missing this many of its pings in a row (when that is longer).
SILENT_PINGS = 10

#: ``silence(peer)``: seconds since the task last heard from a connection's identity (None: forgotten, after ten
#: minutes of silence, or never heard).
Silence = Callable[[bytes], "float | None"]

#: The watch of the client step the calling thread serves, for a partition the master runs in that thread.
inherited: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar("dtf_client_watch", default=None)


def client_watch(header: dict[str, Any], peer: Any, silence: Silence | None) -> Callable[[], None] | None:
    """A check that raises ``CancelledError`` once the client that sent a request with ``header`` from connection
    ``peer`` has been silent too long; None when the request is not watched (no ``pings_every``, no connection).

    Raises:
        InvalidArgumentError: ``pings_every`` is not a positive number of seconds.
    """
    every = header.get("pings_every")
    if every is None or silence is None or not isinstance(peer, bytes):
        return None
    if type(every) not in (int, float) or not math.isfinite(every) or not 0 < every <= 3600:
        raise errors.InvalidArgumentError(
            None, None, f"pings_every must be a positive number of seconds, at most 3600; got {every!r:.40}"
        )
    limit = max(MIN_SILENT_SECS, SILENT_PINGS * every)

    def check() -> None:
        silent = silence(peer)
        if silent is None or silent > limit:
            # None: the connection was heard when this request came in, and forgotten after minutes of silence since.
            said = "minutes" if silent is None else f"{silent:.1f} s"
            raise errors.CancelledError(
                None,
                None,
                f"The client that sent this step was silent for {said} (it pings every {every:g} s while it "
                "waits): it is gone, so the step is given up",
            )

    return check
