"""ProgressBarHook with a fake bar and a terminal tqdm bar; when MonitoredTrainingSession adds one by itself (a
terminal on stderr: yes, in a real pty; piped or captured output: no; the switch and the environment variable).
The notebook bar is checked in a real kernel in test_kernel.py."""

from __future__ import annotations

import fcntl
import io
import os
import select
import struct
import subprocess
import sys
import termios
import time
from typing import Any

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.train import default_hooks
from dtf_notebook.train import progress_hook as progress
from dtf_notebook.train.progress_hook import (
    ProgressBarHook,
    disable_progress_bars,
    enable_progress_bars,
    progress_bars_wanted,
)
from tests.distributed.cluster_util import task_env


class FakeBar:
    """Records what a tqdm bar is told."""

    made: list[FakeBar] = []

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs, self.n, self.postfix, self.closed = kwargs, kwargs.get("initial", 0), None, False
        FakeBar.made.append(self)

    def update(self, n: int) -> None:
        self.n += n

    def set_postfix(self, refresh: bool = True, **values: Any) -> None:
        self.postfix = values

    def close(self) -> None:
        self.closed = True


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Any:
    FakeBar.made = []
    monkeypatch.delenv("DTF_PROGRESS_BARS", raising=False)
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # no terminal, even under `pytest -s` in one
    yield
    enable_progress_bars(None)  # back to the rules


def _train(steps: int, hooks: list[Any]) -> None:
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        loss = tf.cast(100 - step, tf.float32, name="loss")
        tf.add_to_collection(tf.GraphKeys.LOSSES, loss)
        train_op = tf.assign_add(step, 1)
        all_hooks = [tf.train.StopAtStepHook(last_step=steps), *hooks]
        with tf.train.MonitoredTrainingSession(hooks=all_hooks) as sess:
            while not sess.should_stop():
                sess.run(train_op)


def test_the_bar_follows_the_global_step_and_shows_the_loss() -> None:
    hook = ProgressBarHook(total_steps=6, bar_factory=FakeBar, desc="fit")
    _train(6, [hook])
    (bar,) = FakeBar.made
    assert bar.kwargs == {"total": 6, "initial": 0, "desc": "fit", "unit": "step"}
    assert bar.n == 6 and bar.closed
    assert bar.postfix == {"loss": "95"}  # the loss is read before the last increment (step 5)


def _minimize(
    steps: int, hooks: list[Any], fail_at: int | None = None, error: type[BaseException] = ValueError
) -> None:
    """Trains w toward 0 with an optimizer (nothing in LOSSES); raises ``error`` after run ``fail_at``."""
    with tf.Graph().as_default():
        step = tf.train.get_or_create_global_step()
        w = tf.Variable(4.0, name="w")
        loss = tf.square(w, name="loss")
        train_op = tf.train.GradientDescentOptimizer(0.25).minimize(loss, global_step=step)
        assert tf.get_collection(tf.GraphKeys.LOSSES) == []  # as in TF1: minimize() fills no collection
        with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(last_step=steps), *hooks]) as sess:
            while not sess.should_stop():
                sess.run(train_op)
                if fail_at is not None and sess.run(step) >= fail_at:
                    raise error("stopped by the test")


def test_the_bar_shows_the_loss_the_optimizer_minimizes() -> None:
    hook = ProgressBarHook(total_steps=2, bar_factory=FakeBar)
    _minimize(2, [hook])
    assert FakeBar.made[0].postfix == {"loss": "4"}  # w: 4 -> 2, the loss fetched with the last step is 2**2


def test_the_default_bar_shows_it_too() -> None:
    enable_progress_bars(bar_factory=FakeBar)
    _minimize(1, [])
    assert FakeBar.made[0].postfix == {"loss": "16"}


@pytest.mark.parametrize("error", [ValueError, KeyboardInterrupt])
def test_an_error_or_an_interrupt_closes_the_bar_where_it_stopped(error: type[BaseException]) -> None:
    hook = ProgressBarHook(total_steps=10, bar_factory=FakeBar)
    with pytest.raises(error, match="stopped by the test"):
        _minimize(10, [hook], fail_at=3, error=error)
    (bar,) = FakeBar.made
    assert bar.closed and bar.n == 3


def test_a_registered_kernel_bar_draws_in_a_kernel_only(monkeypatch: pytest.MonkeyPatch) -> None:
    enable_progress_bars()
    previous = progress.register_kernel_progress_bar(lambda **kwargs: FakeBar(kernel=True, **kwargs))
    try:
        _train(2, [])  # no kernel: tqdm's text bar, on the (captured) stderr
        assert FakeBar.made == []
        monkeypatch.setattr(progress, "jupyter_kernel", lambda: True)
        _train(2, [])
        (bar,) = FakeBar.made
        assert bar.kwargs["kernel"] and bar.n == 2 and bar.closed
        _train(2, [ProgressBarHook(bar_factory=FakeBar, desc="mine")])  # a hook's own factory wins
        assert FakeBar.made[-1].kwargs == {"total": None, "initial": 0, "desc": "mine", "unit": "step"}
    finally:
        progress.register_kernel_progress_bar(previous)


def test_importing_dtf_notebook_registers_the_notebook_bar() -> None:
    import dtf_notebook

    assert progress.kernel_progress_bar() is dtf_notebook._kernel_progress_bar


def test_every_n_steps_updates_less_often() -> None:
    updates: list[int] = []

    class Counting(FakeBar):
        def update(self, n: int) -> None:
            updates.append(n)
            super().update(n)

    _train(9, [ProgressBarHook(total_steps=9, every_n_steps=3, bar_factory=Counting)])
    assert updates == [3, 3, 3]


def test_a_terminal_bar() -> None:
    out = io.StringIO()
    _train(5, [ProgressBarHook(total_steps=5, file=out, mininterval=0)])
    text = out.getvalue()
    assert "5/5" in text and "step/s" in text and "loss=96" in text


def test_every_n_steps_must_be_positive() -> None:
    with pytest.raises(ValueError, match="every_n_steps"):
        ProgressBarHook(every_n_steps=0)


def test_enabling_adds_a_bar_sized_by_the_stop_hook() -> None:
    enable_progress_bars(bar_factory=FakeBar)
    _train(4, [])
    (bar,) = FakeBar.made
    assert bar.kwargs["total"] == 4 and bar.n == 4 and bar.closed


def test_an_explicit_bar_is_not_doubled_and_disabling_stops_adding() -> None:
    enable_progress_bars(bar_factory=FakeBar)
    _train(2, [ProgressBarHook(total_steps=2, bar_factory=FakeBar, desc="mine")])
    assert [b.kwargs["desc"] for b in FakeBar.made] == ["mine"]
    disable_progress_bars()
    assert default_hooks.default_hooks([]) == []
    _train(2, [])
    assert len(FakeBar.made) == 1


def test_a_bar_from_a_registered_factory_is_not_doubled() -> None:
    enable_progress_bars(bar_factory=FakeBar)
    factory = lambda hooks: ProgressBarHook(bar_factory=FakeBar, desc="registered")  # noqa: E731
    default_hooks.add_default_hook_factory(factory)
    try:
        _train(2, [])
    finally:
        default_hooks.remove_default_hook_factory(factory)
    assert [b.kwargs["desc"] for b in FakeBar.made] == ["registered"]


def test_captured_output_gets_no_bar_unless_enabled(capsys: pytest.CaptureFixture[str]) -> None:
    assert default_hooks.default_hooks([]) == []  # stderr is captured here: not a terminal
    _train(3, [])
    assert capsys.readouterr().err == ""  # tqdm would draw on stderr
    enable_progress_bars(mininterval=0)
    _train(3, [])
    assert "3/3" in capsys.readouterr().err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_rules_are_read_when_a_session_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not progress_bars_wanted()
    monkeypatch.setattr(sys, "stderr", _Terminal())
    assert progress_bars_wanted()  # a terminal
    monkeypatch.setenv("DTF_PROGRESS_BARS", "off")
    assert not progress_bars_wanted()  # the environment, read now (not at import)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    monkeypatch.setenv("DTF_PROGRESS_BARS", "1")
    assert progress_bars_wanted()
    enable_progress_bars(False)
    assert not progress_bars_wanted() and default_hooks.default_hooks([]) == []  # the call beats the environment
    enable_progress_bars(None)
    monkeypatch.setenv("DTF_PROGRESS_BARS", "sometimes")
    with pytest.raises(ValueError, match="DTF_PROGRESS_BARS must be 1/on .* not 'sometimes'"):
        progress_bars_wanted()
    monkeypatch.delenv("DTF_PROGRESS_BARS")
    monkeypatch.setattr(progress, "jupyter_kernel", lambda: True)
    assert progress_bars_wanted()  # a notebook kernel
    with pytest.raises(ValueError, match="every_n_steps"):
        enable_progress_bars(every_n_steps=0)


def test_loading_the_extension_leaves_the_choice_to_the_rules() -> None:
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    from dtf_notebook.notebook.extension import load_ipython_extension, unload_ipython_extension

    shell = InteractiveShell.instance()
    load_ipython_extension(shell)
    try:
        assert progress._choice is None and not progress_bars_wanted()
    finally:
        unload_ipython_extension(shell)


SCRIPT = """
import dtf_notebook.compat.v1 as tf
step = tf.train.get_or_create_global_step()
loss = tf.cast(10 - step, tf.float32, name="loss")
tf.add_to_collection(tf.GraphKeys.LOSSES, loss)
train_op = tf.assign_add(step, 1)
with tf.train.MonitoredTrainingSession(hooks=[tf.train.StopAtStepHook(last_step=3)]) as sess:
    while not sess.should_stop():
        sess.run(train_op)
print("done")
"""


def _run_on_a_terminal(env: dict[str, str]) -> tuple[str, str]:
    """Runs SCRIPT with its stderr on a pseudo-terminal; returns (stdout, what the terminal showed)."""
    controller, terminal = os.openpty()
    # A new pseudo-terminal is 0 columns wide, which tqdm would take literally: give it a real terminal's size.
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", SCRIPT], env=env, stdout=subprocess.PIPE, stderr=terminal, text=True
        )
    finally:
        os.close(terminal)
    shown, deadline = b"", time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if select.select([controller], [], [], 1.0)[0]:
                try:
                    chunk = os.read(controller, 65536)
                except OSError:  # the script closed the terminal (Linux reports EIO)
                    break
                if not chunk:
                    break
                shown += chunk
            elif proc.poll() is not None:
                break
        out, _ = proc.communicate(timeout=60)
    finally:
        os.close(controller)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, shown.decode(errors="replace")
    return out, shown.decode(errors="replace")


def test_a_script_shows_a_text_bar_on_a_terminal_and_none_when_piped() -> None:
    out, shown = _run_on_a_terminal(task_env())
    assert out == "done\n"
    assert "3/3" in shown and "step/s" in shown and "loss=8" in shown
    piped = subprocess.run([sys.executable, "-c", SCRIPT], env=task_env(), capture_output=True, text=True, timeout=120)
    assert (piped.returncode, piped.stdout, piped.stderr) == (0, "done\n", "")  # as under TF1
