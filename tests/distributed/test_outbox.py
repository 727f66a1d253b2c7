"""Held-back sends (``distributed.outbox``): grouped per receiving task, sent before any wait and at the end."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch

from dtf_notebook import errors
from dtf_notebook.distributed.outbox import Outbox
from dtf_notebook.runtime.executor import StepContext
from dtf_notebook.runtime.queues import SharedResource


def test_sends_are_grouped_per_task_and_flushed_once():
    sent = []
    box = Outbox(lambda task, keys, values: sent.append((task, keys, [v.tolist() for v in values])))
    box.add("/job:ps/replica:0/task:0", "a:0", torch.ones(2))
    box.add("/job:ps/replica:0/task:1", "b:0", torch.zeros(1))
    box.add("/job:ps/replica:0/task:0", "c:0", np.arange(3))
    box.flush()
    box.flush()  # nothing left: nothing sent again
    assert sent == [
        ("/job:ps/replica:0/task:0", ["a:0", "c:0"], [[1.0, 1.0], [0, 1, 2]]),
        ("/job:ps/replica:0/task:1", ["b:0"], [[0.0]]),
    ]


def test_large_tensors_go_at_once_and_a_failed_step_sends_nothing():
    sent = []
    box = Outbox(lambda task, keys, values: sent.append(keys), flush_bytes=1024)
    box.add("t", "small:0", torch.zeros(4))
    assert sent == []
    box.add("t", "big:0", torch.zeros(512))  # 2 KiB held: everything goes, in one message
    assert sent == [["small:0", "big:0"]]
    box.add("t", "lost:0", torch.zeros(4))
    box.discard()
    box.flush()
    assert sent == [["small:0", "big:0"]]


def test_a_blocking_resource_flushes_the_steps_sends_before_it_waits():
    flushed = []
    resource = SharedResource("q")
    step = StepContext(deadline=time.monotonic() + 0.05, extras={"flush": lambda: flushed.append(True)})
    with resource._cond:
        resource.wait_until(lambda: True, step, "something ready")  # no wait: nothing to flush
        assert flushed == []
        with pytest.raises(errors.DeadlineExceededError):
            resource.wait_until(lambda: False, step, "something never ready")
    assert flushed == [True]
