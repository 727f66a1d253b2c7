"""A task gives up a step whose client went silent, and only then (see dtf_notebook.distributed.client_watch)."""

from __future__ import annotations

import threading
import time

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors
from dtf_notebook.distributed import client_watch as watch_module
from dtf_notebook.distributed.client_watch import client_watch
from tests.distributed.cluster_util import eventually
from tests.distributed.test_direct_route import _probed, _queue_across_tasks, sockets  # noqa: F401 - a fixture


@pytest.mark.parametrize("every", ["0.5", -1.0, 0, float("nan"), float("inf"), 7200.0, True])
def test_a_malformed_ping_interval_is_refused_with_a_message_naming_it(every):
    with pytest.raises(errors.InvalidArgumentError, match="pings_every must be a positive number"):
        client_watch({"pings_every": every}, b"peer", lambda peer: 0.0)


def test_the_silence_allowed_is_ten_pings_and_never_under_five_seconds():
    silent = {"for": 0.0}
    slow = client_watch({"pings_every": 2.0}, b"peer", lambda peer: silent["for"])
    fast = client_watch({"pings_every": 0.1}, b"peer", lambda peer: silent["for"])
    silent["for"] = 4.9
    fast(), slow()
    silent["for"] = 5.1
    slow()
    with pytest.raises(errors.CancelledError, match="silent for 5.1 s"):
        fast()
    silent["for"] = 20.1
    with pytest.raises(errors.CancelledError):
        slow()


def test_a_request_without_a_connection_or_interval_is_not_watched():
    assert client_watch({"pings_every": 0.5}, None, lambda peer: 99.0) is None
    assert client_watch({}, b"peer", lambda peer: 99.0) is None
    assert client_watch({"pings_every": 0.5}, b"peer", None) is None


def test_a_connection_forgotten_after_minutes_of_silence_is_taken_for_gone():
    forgotten = client_watch({"pings_every": 0.5}, b"peer", lambda peer: None)  # heard when the request came in
    with pytest.raises(errors.CancelledError, match="silent for minutes"):
        forgotten()


@pytest.mark.cluster
@pytest.mark.parametrize("way", ["direct", "master"])
def test_a_live_client_waiting_past_the_silence_allowed_keeps_its_step(sockets, monkeypatch, way):  # noqa: F811
    """A client that waits pings its tasks, so a step blocked longer than the silence allowed (2 s here) still gets
    its element."""
    monkeypatch.setattr(watch_module, "MIN_SILENT_SECS", 2.0)
    monkeypatch.setattr(watch_module, "SILENT_PINGS", 2)
    ps, worker, served = sockets
    queue, doubled = _queue_across_tasks(f"live_client_{way}")
    with tf.Session(worker.target) as sess:
        results = []

        def take() -> None:  # (a route is this thread's: it must have run the step through the master itself)
            if way == "direct":
                sess.run(queue.enqueue_many([[1.0, 2.0]]))
                results.append(float(sess.run(doubled)))
                assert _probed(sess)
                results.append(float(sess.run(doubled)))
            results.append("blocking")
            results.append(float(sess.run(doubled)))

        direct = served.count("direct")
        waiting = threading.Thread(target=take, daemon=True)
        waiting.start()
        assert eventually(lambda: "blocking" in results)
        time.sleep(4.0)  # twice the silence allowed
        assert ps.worker._running and results[-1] == "blocking"
        sess.run(queue.enqueue(7.0))
        waiting.join(10)
        assert results[-1] == 14.0 and results[:-2] == ([2.0, 4.0] if way == "direct" else [])
        # Direct: the second warm-up step and the one that waited (the first learns the route from the master).
        assert served.count("direct") == direct + (2 if way == "direct" else 0)
