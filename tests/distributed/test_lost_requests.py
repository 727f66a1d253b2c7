"""A request whose task dies holding it and comes back on the same port fails within seconds, never waits forever,
and the requests that reach the new task are answered.

The new task answers every ping, and when the request went out before its sender heard from the task no
incarnation tells the new task from the old one: the broken connection (a task answers on the connection a request
came in on) says the request was lost. Checked for each sender: an event loop's ``LoopPeers``, and a ``Client``'s
blocking ``call`` and ``call_async``.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
import zmq

from dtf_notebook import errors
from dtf_notebook.distributed.client import Client
from dtf_notebook.distributed.loop_peers import LoopPeers
from dtf_notebook.distributed.service_socket import ServiceSocket
from tests.distributed.cluster_util import pump_loop_peers


class _LoopSender:
    """Requests from a LoopPeers, pumped by the calling thread as a task's event loop would."""

    def __init__(self) -> None:
        self.peers, self.poller = LoopPeers(heartbeat_interval=0.05, dead_after=60.0), zmq.Poller()

    def call(self, address: str, method: str, timeout: float) -> Any:
        got: list = []
        self.peers.request(address, method, {}, [], lambda h, t, e: got.append(e or h), self.poller)
        pump_loop_peers(self.peers, self.poller, lambda: got, timeout)
        return got[0] if got else TimeoutError(method)

    def close(self) -> None:
        assert self.peers.outstanding == 0
        self.peers.close()


class _ClientSender:
    def __init__(self, blocking: bool) -> None:
        self.client, self.blocking = Client(heartbeat_interval=0.05, dead_after=60.0), blocking

    def call(self, address: str, method: str, timeout: float) -> Any:
        try:
            if self.blocking:
                return self.client.call(address, method, timeout=timeout)[0]
            return self.client.call_async(address, method).result(timeout)[0]
        except (errors.OpError, TimeoutError) as e:
            return e

    def close(self) -> None:
        self.client.close()


SENDERS = {
    "loop_peers": _LoopSender,
    "call": lambda: _ClientSender(blocking=True),
    "call_async": lambda: _ClientSender(blocking=False),
}


@pytest.mark.parametrize("heard_before", [False, True], ids=["first_request", "after_a_reply"])
@pytest.mark.parametrize("sender", list(SENDERS))
def test_a_request_lost_with_a_task_restarted_on_its_port_fails_at_once(sender, heard_before):
    taken, release = threading.Event(), threading.Event()

    def hold(method, header, tensors):
        if method == "Hold":
            taken.set()
            release.wait(30)
        return {}, []

    old = ServiceSocket("127.0.0.1:0", hold, incarnation=1)
    new = None
    replies: list = []

    def requests():
        client = SENDERS[sender]()
        try:
            if heard_before:
                replies.append(client.call(old.address, "Echo", 10))
            replies.append(client.call(old.address, "Hold", 30))
            replies.append(client.call(old.address, "Echo", 10))  # after the restart
        finally:
            client.close()

    runner = threading.Thread(target=requests, daemon=True)
    try:
        runner.start()
        assert taken.wait(10)
        old.close()  # with the request unanswered
        release.set()
        new = ServiceSocket(old.address, hold, incarnation=2)
        runner.join(30)
        assert not runner.is_alive()
        *before, held, echoed = replies
        assert [reply["incarnation"] for reply in before] == [1] * heard_before
        # Failed by the break: not by the 60 s of silence nor the 30 s deadline.
        assert isinstance(held, errors.UnavailableError) and "broke" in held.message, held
        assert old.address in held.message
        # The next request goes out on the new connection, and the new task's reply to it is its answer.
        assert isinstance(echoed, dict) and echoed["incarnation"] == 2, echoed
    finally:
        release.set()
        old.close()
        if new is not None:
            new.close()
