"""A request whose task dies holding it and comes back on the same port fails within seconds, never waits forever,
and the requests that reach the new task are answered.

The new task answers every ping, and when the request went out before its sender heard from the task no
incarnation tells the new task from the old one: the broken connection (a task answers on the connection a request
came in on) says the request was lost. Checked for each sender: an event loop's ``LoopPeers``, and a ``Client``'s
blocking ``call`` and ``call_async``.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import zmq

from dtf_notebook import errors
from dtf_notebook.distributed.client import PING, Client
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


def _requests_tried(module: Any, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every message but a heartbeat that ``module``'s senders try to send from now on (spied on ``_try_send``)."""
    tried: list[Any] = []
    real = module._try_send

    def spy(sock: Any, frames: Any) -> bool:
        if frames is not PING:
            tried.append(frames)
        return real(sock, frames)

    monkeypatch.setattr(module, "_try_send", spy)
    return tried


def test_a_request_made_between_a_break_and_the_next_connection_waits_for_that_connection(monkeypatch):
    # ZeroMQ reports a break before it detaches the dead connection's pipe: a message written into that pipe in
    # between is dropped without an error, and the request would wait forever while the new task answers pings (a
    # whole-suite run lost one this way; about 1 in 150 restarts under load). So from a reported break until a
    # connection comes up again, requests wait in the backlog and are not even tried.
    from dtf_notebook.distributed import loop_peers

    sender = _LoopSender()
    old = ServiceSocket("127.0.0.1:0", lambda m, h, t: ({}, []), incarnation=1)
    new = None
    try:
        assert sender.call(old.address, "Echo", 10)["incarnation"] == 1
        peer = sender.peers._peers[old.address]
        old.close()
        assert pump_loop_peers(sender.peers, sender.poller, lambda: peer.down, 10)  # the break is reported
        tried = _requests_tried(loop_peers, monkeypatch)
        got: list = []
        sender.peers.request(old.address, "Echo", {}, [], lambda h, t, e: got.append(e or h), sender.poller)
        sender.peers.send_oneway(old.address, "Note", {}, [], sender.poller)
        pump_loop_peers(sender.peers, sender.poller, lambda: False, 0.3)
        assert not tried and len(peer.unsent) == 2  # held back, not written where they could vanish
        new = ServiceSocket(old.address, lambda m, h, t: ({}, []), incarnation=2)
        assert pump_loop_peers(sender.peers, sender.poller, lambda: got, 10), "the held request was never answered"
        assert got[0]["incarnation"] == 2 and not peer.down and not peer.unsent and len(tried) == 2
    finally:
        old.close()
        if new is not None:
            new.close()
        sender.peers.close()


@pytest.mark.parametrize("on", ["thread_socket", "io_thread"])
def test_a_client_holds_its_requests_from_a_break_until_the_next_connection(on, monkeypatch):
    from dtf_notebook.distributed import client as client_module

    client = Client(heartbeat_interval=0.05, dead_after=60.0)
    old = ServiceSocket("127.0.0.1:0", lambda m, h, t: ({}, []), incarnation=1)
    new = None
    broken, replies = threading.Event(), []

    def calls() -> None:
        try:
            if on == "thread_socket":
                replies.append(client.call(old.address, "Echo", timeout=10)[0])
                _, handshakes = client._thread_socket(old.address)
                while not handshakes.down:  # the break reported to this thread's socket
                    handshakes.monitor.poll(50)
                    client_module.read_events(handshakes, None)
                broken.set()
                replies.append(client.call(old.address, "Echo", timeout=10)[0])
            else:
                replies.append(client.call_async(old.address, "Echo").result(10)[0])
                while old.address not in client._down:  # the I/O thread saw the break
                    time.sleep(0.01)
                broken.set()
                replies.append(client.call_async(old.address, "Echo").result(10)[0])
        except Exception as e:  # noqa: BLE001 - reported by the assertions below
            replies.append(e)
        finally:
            client._drop_thread_socket(old.address)

    runner = threading.Thread(target=calls, daemon=True)
    try:
        runner.start()
        while not replies:
            time.sleep(0.01)
        tried = _requests_tried(client_module, monkeypatch)
        old.close()
        assert broken.wait(10)
        time.sleep(0.3)
        assert not tried, "a request was written while the connection was down"
        new = ServiceSocket(old.address, lambda m, h, t: ({}, []), incarnation=2)
        runner.join(15)
        assert not runner.is_alive()
        assert [r["incarnation"] if isinstance(r, dict) else r for r in replies] == [1, 2]
    finally:
        old.close()
        if new is not None:
            new.close()
        client.close()


def test_a_request_failed_for_silence_never_reaches_a_task_that_comes_up_later():
    import socket

    with socket.socket() as s:  # a port nothing listens on, for now
        s.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{s.getsockname()[1]}"
    client = Client(heartbeat_interval=0.05, dead_after=0.5)
    got: list[str] = []
    server = None
    try:
        with pytest.raises(errors.UnavailableError, match="did not answer"):
            client.call_async(address, "Echo").result(10)
        server = ServiceSocket(address, lambda m, h, t: (got.append(m), ({}, []))[1], incarnation=1)
        # The client reconnects within half a second; the failed request must not go out on that connection.
        reply = client.call_async(address, "Echo").result(10)[0]
        assert reply["incarnation"] == 1 and got == ["Echo"], got
    finally:
        if server is not None:
            server.close()
        client.close()
