"""Summaries written here show in a real TensorBoard: it is started on a loopback port with ``--logdir`` on our
event files, and the scalars, histograms and graph are read back through its HTTP API.

Needs the ``tensorboard`` package (TF's dashboard); without it the test is skipped, saying so.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

pytestmark = pytest.mark.slow


def _write_logs(logdir: str) -> list[tuple[int, float]]:
    losses = [(step, 1.0 / (step + 1)) for step in range(5)]
    with tf.Graph().as_default() as graph:
        loss = tf.placeholder(tf.float32, [], name="loss_value")
        weights = tf.placeholder(tf.float32, [None], name="weight_values")
        tf.summary.scalar("loss", loss)
        tf.summary.histogram("weights", weights)
        merged = tf.summary.merge_all()
        rng = np.random.default_rng(0)
        with tf.Session() as sess, tf.summary.FileWriter(logdir, graph) as writer:
            for step, value in losses:
                writer.add_summary(sess.run(merged, {loss: value, weights: rng.normal(size=100)}), step)
    return losses


def _start_tensorboard(logdir: str) -> tuple[subprocess.Popen, str]:
    command = [sys.executable, "-m", "tensorboard.main", "--logdir", logdir, "--host", "127.0.0.1", "--port", "0"]
    command += ["--load_fast", "false", "--reload_interval", "1"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline, seen = time.monotonic() + 90, []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if match:
            return process, f"http://127.0.0.1:{match.group(1)}"
    _stop(process)
    raise AssertionError("TensorBoard did not say where it serves:\n" + "".join(seen[-20:]))


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.kill(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
    process.stdout.close()


def _read(base: str, path: str, **query: str) -> bytes:
    url = f"{base}{path}" + (f"?{urllib.parse.urlencode(query)}" if query else "")
    with urllib.request.urlopen(url, timeout=30) as reply:
        return reply.read()


def _get(base: str, path: str, **query: str) -> object:
    return json.loads(_read(base, path, **query))


def _wait_for_tag(base: str, plugin: str, tag: str) -> str:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for run, tags in _get(base, f"/data/plugin/{plugin}/tags").items():
            if tag in tags:
                return run
        time.sleep(0.5)
    raise AssertionError(f"TensorBoard never listed the {plugin} tag {tag!r}")


def test_tensorboard_shows_our_scalars_histograms_and_graph(tmp_path):
    if importlib.util.find_spec("tensorboard") is None:
        pytest.skip("the tensorboard package is not installed (scripts/setup.sh does not install it)")
    logdir = str(tmp_path / "logs")
    losses = _write_logs(logdir)
    process, base = _start_tensorboard(logdir)
    try:
        run = _wait_for_tag(base, "scalars", "loss")
        points = _get(base, "/data/plugin/scalars/scalars", run=run, tag="loss")
        assert [(step, value) for _, step, value in points] == [
            (step, pytest.approx(value, rel=1e-6)) for step, value in losses
        ]
        run = _wait_for_tag(base, "histograms", "weights")
        histograms = _get(base, "/data/plugin/histograms/histograms", run=run, tag="weights")
        assert [step for _, step, _ in histograms] == [step for step, _ in losses]
        for _, _, buckets in histograms:  # [left edge, right edge, count] per bucket
            assert sum(count for _, _, count in buckets) == pytest.approx(100)
        graph = _read(base, "/data/plugin/graphs/graph", run=run, conceptual="false").decode()
        assert 'name: "loss_value"' in graph and 'op: "HistogramSummary"' in graph
    finally:
        _stop(process)
