"""ZeroMQ request/reply transport between tasks, with deadlines, heartbeats and optional CurveZMQ.

:class:`ServiceSocket` is a task's listening end: a ROUTER socket bound at the
task's address whose I/O thread hands each request to a thread pool and sends
the replies back (ZeroMQ sockets are not thread-safe, so only the I/O thread
touches them). ``Ping`` is answered on the I/O thread itself, so a busy task
still proves it is alive.

:class:`Client` is a process's calling end: one DEALER socket per peer, all
owned by one I/O thread. ``call`` blocks until the reply, the deadline, or the
peer is judged dead: while requests to a peer are outstanding the client pings
it, and a peer silent for ``dead_after`` seconds fails them with
``UnavailableError``. Every reply carries the server's *incarnation* (random
per start); a reply from a new incarnation fails requests sent to the old one
with ``AbortedError`` (the task restarted and lost their state).

Example:
    >>> server = ServiceSocket("127.0.0.1:0", lambda method, header, tensors: ({"echo": header["x"]}, []))
    >>> client = Client()
    >>> reply, _ = client.call(server.address, "Echo", {"x": 7}, timeout=5)
    >>> reply["echo"]
    7
    >>> server.close(); client.close()
"""

from dtf_notebook.distributed.client import Client, client_for, shared_client
from dtf_notebook.distributed.curve import curve_keys
from dtf_notebook.distributed.service_socket import Handler, ServiceSocket

__all__ = ["Client", "Handler", "ServiceSocket", "client_for", "curve_keys", "shared_client"]
