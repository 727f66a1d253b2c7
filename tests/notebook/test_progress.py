"""ProgressBarHook with a fake bar and a terminal tqdm bar; opting MonitoredTrainingSession in and out."""

from __future__ import annotations

import io
from typing import Any

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.notebook.progress import ProgressBarHook, disable_progress_bars, enable_progress_bars
from dtf_notebook.train import default_hooks


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
def _fresh() -> Any:
    FakeBar.made = []
    yield
    disable_progress_bars()


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


def test_scripts_get_no_bar_unless_enabled(capsys: pytest.CaptureFixture[str]) -> None:
    assert default_hooks.default_hooks([]) == []
    _train(3, [])
    assert capsys.readouterr().err == ""  # tqdm would draw on stderr
    enable_progress_bars(mininterval=0)
    _train(3, [])
    assert "3/3" in capsys.readouterr().err
