"""A ``Client``'s calling thread: ``call_all`` (one request to each of several tasks, gathered) and the thread's own
sockets, of which a long-lived thread keeps a bounded number over all its clients, and the I/O thread's, closed when
idle (ZeroMQ allows a process 1,023 sockets)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from dtf_notebook import errors
from dtf_notebook.distributed import client as client_module
from dtf_notebook.distributed.client import Client
from dtf_notebook.distributed.service_socket import ServiceSocket
from tests.distributed.cluster_util import eventually

pytestmark = pytest.mark.cluster


def _servers(n, handler):
    return [ServiceSocket("127.0.0.1:0", handler) for _ in range(n)]


def test_call_all_returns_every_reply_in_order_and_raises_the_first_failure():
    def handler(method, header, tensors):
        if method == "Fail":
            raise errors.InvalidArgumentError(None, None, f"bad {header['n']}")
        if method == "Slow":
            time.sleep(0.5)
        return {"n": header["n"] + 1}, tensors

    servers = _servers(3, handler)
    client = Client()
    try:
        requests = [(s.address, "Add", {"n": i}, [np.float32(i)]) for i, s in enumerate(servers)]
        replies = client.call_all(requests, timeout=5)
        assert [(h["n"], float(t[0])) for h, t in replies] == [(1, 0.0), (2, 1.0), (3, 2.0)]
        started = time.monotonic()
        with pytest.raises(errors.InvalidArgumentError, match="bad 1"):
            client.call_all(
                [(servers[0].address, "Slow", {"n": 0}, []), (servers[1].address, "Fail", {"n": 1}, [])], timeout=5
            )
        assert time.monotonic() - started < 0.4  # not after the slow one
        with pytest.raises(errors.DeadlineExceededError, match=servers[2].address):
            slow = [(servers[0].address, "Add", {"n": 0}, []), (servers[2].address, "Slow", {"n": 0}, [])]
            client.call_all(slow, timeout=0.2)
        time.sleep(0.5)  # the late replies come while nobody waits for them ...
        assert client.call(servers[2].address, "Add", {"n": 7}, timeout=5)[0]["n"] == 8  # ... and are dropped
    finally:
        client.close()
        for s in servers:
            s.close()


def test_call_all_fails_within_seconds_when_a_task_goes_silent():
    servers = _servers(2, lambda m, h, t: ({}, []))
    client = Client(heartbeat_interval=0.1, dead_after=0.5)
    try:
        client.call_all([(s.address, "Hello", {}, []) for s in servers], timeout=5)
        servers[1].close()
        started = time.monotonic()
        with pytest.raises(errors.UnavailableError, match=servers[1].address):
            client.call_all([(s.address, "Hello", {}, []) for s in servers], timeout=30)
        assert time.monotonic() - started < 5.0
    finally:
        client.close()
        servers[0].close()


def test_a_thread_keeps_a_bounded_number_of_sockets_over_all_its_clients_closing_the_least_recently_used(
    monkeypatch,
):
    monkeypatch.setattr(client_module, "_THREAD_SOCKETS", 3)
    monkeypatch.setattr(client_module, "_IDLE_BEFORE_CLOSE", 0.2)
    monkeypatch.setattr(client_module, "_thread_use", threading.local())  # this thread's sockets, counted afresh
    servers = _servers(5, lambda m, h, t: ({"at": h["at"]}, []))
    client, other_client = Client(), Client()  # (a client per cluster key: the bound is the thread's, over both)
    try:
        addresses = [s.address for s in servers]
        # One step reaching more tasks than the bound keeps them all: none was idle long enough.
        replies = client.call_all([(a, "Hello", {"at": a}, []) for a in addresses[:4]], timeout=5)
        assert [h["at"] for h, _ in replies] == addresses[:4]
        assert list(client._pushers.dealers) == addresses[:4]
        time.sleep(0.3)
        client.call(addresses[0], "Hello", {"at": addresses[0]}, timeout=5)  # used again: now the most recent
        other_client.call(addresses[4], "Hello", {"at": addresses[4]}, timeout=5)
        # The least recently used idle sockets (addresses 1 and 2) were closed to make room, whichever client's.
        assert list(client._pushers.dealers) == [addresses[0], addresses[3]]
        assert list(other_client._pushers.dealers) == [addresses[4]]
        assert client.call(addresses[1], "Hello", {"at": addresses[1]}, timeout=5)[0]["at"] == addresses[1]
    finally:
        client.close()
        other_client.close()
        for s in servers:
            s.close()


def test_the_io_thread_closes_idle_sockets_but_never_one_owing_a_reply(monkeypatch):
    monkeypatch.setattr(client_module, "_IDLE_BEFORE_CLOSE", 0.2)

    def handler(method, header, tensors):
        if method == "Slow":
            time.sleep(1.5)
        return {}, []

    servers = _servers(4, handler)
    client = Client(heartbeat_interval=0.1)
    try:
        slow = client.call_async(servers[0].address, "Slow")  # owes a reply all along
        for s in servers[1:]:
            client.call_async(s.address, "Hello").result(5)
        assert eventually(lambda: set(client._sockets) == {servers[0].address}, timeout=5)
        slow.result(5)  # its socket stayed open: the reply came
        assert client.call_async(servers[1].address, "Hello").result(5)[0]["incarnation"] == servers[1].incarnation
    finally:
        client.close()
        for s in servers:
            s.close()
