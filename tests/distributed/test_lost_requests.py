"""A request whose task dies holding it and comes back on the same port fails within seconds, never waits forever.

The request goes out before its sender ever heard from the task, so no incarnation tells the new task from the old
one, and the new task answers every ping: only the broken connection (a task answers on the connection a request
came in on) says the request was lost. Checked for each sender: an event loop's ``LoopPeers``, and a ``Client``'s
blocking ``call`` and ``call_async``.
"""

from __future__ import annotations

import threading
import time

import pytest
import zmq

from dtf_notebook import errors
from dtf_notebook.distributed.client import Client
from dtf_notebook.distributed.loop_peers import LoopPeers
from dtf_notebook.distributed.service_socket import ServiceSocket


def _loop_peers(address: str, restarted: threading.Event) -> tuple[list, list]:
    """Sends ``Hold`` then, once the task restarted, ``Echo`` from a LoopPeers; returns what each got."""
    peers, poller = LoopPeers(heartbeat_interval=0.05, dead_after=60.0), zmq.Poller()
    held: list = []
    echoed: list = []

    def pump(until, timeout):
        deadline = time.monotonic() + timeout
        while not until() and time.monotonic() < deadline:
            peers.pump()
            peers.receive(dict(poller.poll(20)))
            peers.heartbeat(time.monotonic())

    try:
        peers.request(address, "Hold", {}, [], lambda h, t, e: held.append(e or h), poller)
        pump(lambda: bool(held) or restarted.is_set(), 30)
        pump(lambda: bool(held), 5)
        peers.request(address, "Echo", {}, [], lambda h, t, e: echoed.append(e or h), poller)
        pump(lambda: bool(echoed), 10)
        assert peers.outstanding == 0
    finally:
        peers.close()
    return held, echoed


def _client(blocking: bool):
    def run(address: str, restarted: threading.Event) -> tuple[list, list]:
        client = Client(heartbeat_interval=0.05, dead_after=60.0)

        def call(method, timeout):
            try:
                if blocking:
                    return client.call(address, method, timeout=timeout)[0]
                return client.call_async(address, method).result(timeout)[0]
            except (errors.OpError, TimeoutError) as e:
                return e

        try:
            held = [call("Hold", 30)]
            return held, [call("Echo", 10)]
        finally:
            client.close()

    return run


@pytest.mark.parametrize(
    "sender", [_loop_peers, _client(blocking=True), _client(blocking=False)], ids=["loop_peers", "call", "call_async"]
)
def test_a_request_lost_with_a_task_restarted_on_its_port_fails_at_once(sender):
    taken, release, restarted = threading.Event(), threading.Event(), threading.Event()

    def hold(method, header, tensors):
        if method == "Hold":
            taken.set()
            release.wait(30)
        return {}, []

    old = ServiceSocket("127.0.0.1:0", hold, incarnation=1)
    new = None
    outcome: list = []
    runner = threading.Thread(target=lambda: outcome.append(sender(old.address, restarted)), daemon=True)
    try:
        runner.start()
        assert taken.wait(10)
        old.close()  # with the request unanswered
        release.set()
        new = ServiceSocket(old.address, hold, incarnation=2)
        restarted.set()
        runner.join(30)
        assert not runner.is_alive()
        ((held, echoed),) = outcome
        # Failed by the break, not by the 60 s of silence nor the 30 s deadline.
        assert isinstance(held[0], errors.UnavailableError) and "broke" in held[0].message, held
        assert old.address in held[0].message
        # The next request goes out on the new connection and is answered by the new task.
        assert echoed[0]["incarnation"] == 2, echoed
    finally:
        release.set()
        old.close()
        if new is not None:
            new.close()
