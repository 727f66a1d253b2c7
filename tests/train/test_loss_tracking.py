"""What the graph's training minimizes, as the optimizers record it, and the loss the progress bar picks from
it; TF1's collections stay exactly what real TensorFlow gives (checked against tensorflow.compat.v1)."""

from __future__ import annotations

from typing import Any

import pytest

import dtf_notebook.compat.v1 as dtf
from dtf_notebook.train.loss_tracking import minimized_losses, training_loss


def _model(tf: Any, minimize: tuple[str, ...], in_losses: tuple[str, ...] = ()) -> dict[str, Any]:
    """Two variables, a loss for each and their sum; ``minimize`` names the losses given to optimizers,
    ``in_losses`` those added to the LOSSES collection. Returns the graph's collections by key."""
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    losses = {"d_loss": tf.square(a, name="d_loss"), "g_loss": tf.square(b, name="g_loss")}
    losses["total"] = tf.add(losses["d_loss"], losses["g_loss"], name="total")
    for name in in_losses:
        tf.add_to_collection(tf.GraphKeys.LOSSES, losses[name])
    opt = tf.train.GradientDescentOptimizer(0.1)
    for name in minimize:
        if name == "total":
            opt.apply_gradients(opt.compute_gradients(losses[name]))
        else:
            opt.minimize(losses[name])
    graph = tf.get_default_graph()
    return {
        key: sorted(getattr(v, "name", str(v)) for v in graph.get_collection(key))
        for key in graph.get_all_collection_keys()
    }


def test_one_minimized_loss_is_the_training_loss() -> None:
    with dtf.Graph().as_default() as g:
        _model(dtf, ("total",))
        assert [t.name for t in minimized_losses(g)] == ["total:0"]
        assert training_loss(g).name == "total:0"


def test_the_same_loss_minimized_twice_is_still_one() -> None:
    with dtf.Graph().as_default() as g:
        _model(dtf, ("d_loss", "d_loss"))
        assert [t.name for t in minimized_losses(g)] == ["d_loss:0"] and training_loss(g).name == "d_loss:0"


def test_several_minimized_losses_give_none_unless_the_losses_collection_names_one() -> None:
    with dtf.Graph().as_default() as g:
        _model(dtf, ("d_loss", "g_loss"))
        assert training_loss(g) is None
    with dtf.Graph().as_default() as g:
        _model(dtf, ("d_loss", "g_loss"), in_losses=("total",))
        assert training_loss(g).name == "total:0"


def test_without_an_optimizer_the_only_losses_member_counts() -> None:
    with dtf.Graph().as_default() as g:
        _model(dtf, (), in_losses=("g_loss",))
        assert minimized_losses(g) == [] and training_loss(g).name == "g_loss:0"
    with dtf.Graph().as_default() as g:
        _model(dtf, (), in_losses=("g_loss", "d_loss"))
        assert training_loss(g) is None


def test_a_minimized_loss_is_recorded_on_its_own_graph() -> None:
    with dtf.Graph().as_default() as g:
        _model(dtf, ("g_loss",))
    assert minimized_losses() == [] or all(t.graph is not g for t in minimized_losses())
    assert training_loss(g).name == "g_loss:0"


@pytest.mark.tf_oracle
@pytest.mark.parametrize(
    "minimize, in_losses", [(("total",), ()), (("d_loss", "g_loss"), ("total",)), ((), ("g_loss",))]
)
def test_collections_are_what_tensorflow_gives(minimize: tuple[str, ...], in_losses: tuple[str, ...]) -> None:
    tf1 = pytest.importorskip("tensorflow").compat.v1
    with tf1.Graph().as_default():
        expected = _model(tf1, minimize, in_losses)
    with dtf.Graph().as_default():
        got = _model(dtf, minimize, in_losses)
    assert got == expected
    assert got.get("losses", []) == sorted(f"{name}:0" for name in in_losses)
