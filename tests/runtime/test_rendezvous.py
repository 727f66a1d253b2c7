"""Rendezvous: values meet their receivers; aborts, deadlines and watchdogs end waits instead of hanging."""

from __future__ import annotations

import threading
import time

import pytest

from dtf_notebook import errors
from dtf_notebook.runtime.rendezvous import Rendezvous, RendezvousTable


def test_value_sent_before_or_after_recv():
    r = Rendezvous()
    r.put("a", 1)
    assert r.recv("a", None) == 1
    threading.Timer(0.05, lambda: r.put("b", 2)).start()
    assert r.recv("b", None) == 2


def test_duplicate_send_is_an_error():
    r = Rendezvous()
    r.put("a", 1)
    with pytest.raises(errors.AlreadyExistsError):
        r.put("a", 1)


def test_deadline_and_abort_end_the_wait():
    r = Rendezvous()
    with pytest.raises(errors.DeadlineExceededError, match="'k'"):
        r.recv("k", time.monotonic() + 0.1)
    threading.Timer(0.05, lambda: r.abort(errors.UnavailableError(None, None, "peer died"))).start()
    with pytest.raises(errors.UnavailableError, match="peer died"):
        r.recv("k", None)


def test_watchdog_gives_up_when_the_master_is_gone():
    r = Rendezvous()

    def master_gone():
        raise errors.UnavailableError(None, None, "master gone")

    r.watchdog = master_gone
    start = time.monotonic()
    with pytest.raises(errors.UnavailableError, match="master gone"):
        r.recv("never", None)
    assert time.monotonic() - start < 2


def test_table_creates_on_first_touch_and_expires_old_steps():
    table = RendezvousTable()
    table.get(1).put("x", 5)
    assert table.get(1).recv("x", None) == 5
    table.get(2)
    table.acquire(3)
    assert table.expire(older_than=-1) == 2  # step 3 is running: kept
    table.release(3)
    table.abort_all(errors.CancelledError(None, None, "stopping"))
