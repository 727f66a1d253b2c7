"""``tf.logging``: levels, verbosity, the counted helpers and caller attribution, against real TF.

Both libraries log through the same ``"tensorflow"`` Python logger, so the records are captured by one
handler. Each scenario is compiled under a file name of its own: TF keys ``log_every_n`` counters by
the first frame outside the calling file, which is then a line of this test seen by nothing else.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap

import pytest

import dtf_notebook.compat.v1 as tf

_COMMON = textwrap.dedent(
    """
    def scenario(tf):
        tf.logging.set_verbosity(tf.logging.WARN)
        tf.logging.info("hidden %d", 1)
        tf.logging.warning("shown %s", "w")
        tf.logging.warn("warn alias")
        tf.logging.error("error %r", [1])
        tf.logging.set_verbosity(tf.logging.INFO)
        tf.logging.info("info now shown")
        tf.logging.debug("debug hidden")
        tf.logging.log_if(tf.logging.INFO, "if %s", True, "true")
        tf.logging.log_if(tf.logging.INFO, "if %s", False, "false")
        tf.logging.vlog(tf.logging.ERROR, "vlog %d", 2)
        tf.logging.log(tf.logging.WARN, "log %d", 3)
        tf.logging.fatal("fatal does not exit")
        tf.logging.set_verbosity(tf.logging.DEBUG)
        tf.logging.debug("debug shown")
        return tf.logging.get_verbosity()
    """
)
_EVERY_N = textwrap.dedent(
    """
    def scenario(tf):
        for i in range(8):
            tf.logging.log_every_n(tf.logging.WARN, "every %d", 3, i)
    """
)
_FIRST_N = textwrap.dedent(
    """
    def scenario(tf):
        for i in range(5):
            tf.logging.log_first_n(tf.logging.WARN, "first %d", 2, i)
    """
)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def captured():
    logger = logging.getLogger("tensorflow")
    handler, level = _Records(), logger.level
    logger.addHandler(handler)
    # whatever verbosity an earlier test left (test_rnn sets ERROR); scenarios set theirs
    logger.setLevel(logging.DEBUG)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def _scenario(source: str, filename: str):
    namespace: dict = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["scenario"]


def _summary(records: list[logging.LogRecord]) -> list[tuple[str, str]]:
    return [(r.levelname, r.getMessage()) for r in records]


@pytest.mark.tf_oracle
def test_levels_and_verbosity_match_tensorflow(captured):
    real = pytest.importorskip("tensorflow.compat.v1")
    captured.records.clear()  # what TF logs while it is first imported (at DEBUG) is no part of the scenario
    assert [tf.logging.DEBUG, tf.logging.INFO, tf.logging.WARN, tf.logging.ERROR, tf.logging.FATAL] == [
        real.logging.DEBUG,
        real.logging.INFO,
        real.logging.WARN,
        real.logging.ERROR,
        real.logging.FATAL,
    ]
    theirs_verbosity = _scenario(_COMMON, "<tf-logging-common>")(real)
    theirs = _summary(captured.records)
    captured.records.clear()
    ours_verbosity = _scenario(_COMMON, "<dtf-logging-common>")(tf)
    assert _summary(captured.records) == theirs and ours_verbosity == theirs_verbosity == logging.DEBUG
    assert [r.name for r in captured.records] == ["tensorflow"] * len(theirs)
    assert ("CRITICAL", "fatal does not exit") in theirs and ("DEBUG", "debug hidden") not in theirs
    # Records name the line of user code that logged, not the logging module.
    assert {(r.filename, r.funcName) for r in captured.records} == {("<dtf-logging-common>", "scenario")}


@pytest.mark.tf_oracle
def test_log_every_n_and_log_first_n_match_tensorflow(captured):
    real = pytest.importorskip("tensorflow.compat.v1")
    captured.records.clear()  # what TF logs while it is first imported (at DEBUG) is no part of the scenario
    _scenario(_EVERY_N, "<tf-every-n>")(real)
    _scenario(_FIRST_N, "<tf-first-n>")(real)
    theirs = _summary(captured.records)
    captured.records.clear()
    _scenario(_EVERY_N, "<dtf-every-n>")(tf)
    _scenario(_FIRST_N, "<dtf-first-n>")(tf)
    assert _summary(captured.records) == theirs
    assert [m for _, m in theirs] == ["every 0", "every 3", "every 6", "first 0", "first 1"]
    assert {r.lineno for r in captured.records if r.getMessage().startswith("every")} == {4}


def test_counters_are_per_call_site(captured):
    tf.logging.set_verbosity(tf.logging.INFO)
    for i in range(4):
        tf.logging.log_first_n(tf.logging.INFO, "a %d", 1, i)
        tf.logging.log_first_n(tf.logging.INFO, "b %d", 2, i)
    assert [r.getMessage() for r in captured.records] == ["a 0", "b 0", "b 1"]


def test_get_logger_and_flush():
    assert tf.get_logger() is logging.getLogger("tensorflow")
    tf.logging.flush()  # flushes the handlers (TF1's raises NotImplementedError)


@pytest.mark.slow
def test_a_fresh_program_logs_warnings_to_stderr_in_tfs_format():
    program = textwrap.dedent(
        """
        import dtf_notebook.compat.v1 as tf
        print(tf.logging.get_verbosity())
        tf.logging.info("not shown")
        tf.logging.warning("shown %d", 1)
        tf.logging.set_verbosity(tf.logging.INFO)
        tf.logging.info("now shown")
        """
    )
    run = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, env=dict(os.environ)
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["30"]
    lines = [line for line in run.stderr.splitlines() if "tensorflow" in line]
    assert lines == ["WARNING:tensorflow:shown 1", "INFO:tensorflow:now shown"]
