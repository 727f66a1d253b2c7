"""The global step: creation, lookup, naming inside scopes, errors, reads and increments."""

from __future__ import annotations

import re

import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.train import training_util


def test_create_global_step():
    with tf.Graph().as_default() as g:
        assert tf.train.get_global_step() is None
        step = tf.train.create_global_step()
        assert (step.name, step.dtype, step.shape.as_list(), step.trainable) == ("global_step:0", tf.int64, [], False)
        assert tf.get_collection(tf.GraphKeys.GLOBAL_STEP) == [step]
        assert tf.global_variables() == [step] and tf.trainable_variables() == []
        assert tf.train.get_global_step() is step and tf.train.get_global_step(g) is step
        assert step.initial_value.op.name == "global_step/Initializer/zeros"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert tf.train.global_step(sess, step) == 0
            sess.run(tf.assign_add(step, 5))
            value = tf.train.global_step(sess, step)
            assert value == 5 and type(value) is int


def test_create_twice_is_an_error():
    with tf.Graph().as_default():
        tf.train.create_global_step()
        with pytest.raises(ValueError, match=re.escape("'global_step' already exists.")):
            tf.train.create_global_step()


def test_get_or_create_global_step_returns_one_variable():
    with tf.Graph().as_default():
        a = tf.train.get_or_create_global_step()
        b = tf.train.get_or_create_global_step()
        assert a is b and len(tf.global_variables()) == 1


def test_global_step_outside_name_scopes_inside_the_variable_scope():
    # As TF (checked against TF 2.21's compat.v1): "model/global_step", and under reuse=True it must exist.
    with tf.Graph().as_default():
        with tf.variable_scope("model"), tf.name_scope("inner"):
            step = tf.train.get_or_create_global_step()
            # The caller's scopes are intact afterwards.
            assert tf.get_variable_scope().name == "model" and tf.get_variable_scope().reuse is False
            assert tf.constant(0, name="c").op.name == "model/inner/c"
        assert step.name == "model/global_step:0"
    with tf.Graph().as_default(), tf.variable_scope("model", reuse=True):
        with pytest.raises(ValueError, match="model/global_step does not exist"):
            tf.train.get_or_create_global_step()


def test_explicit_graph_argument():
    g = tf.Graph()
    with tf.Graph().as_default():
        step = tf.train.create_global_step(g)
        assert step.graph is g and tf.train.get_global_step() is None
        assert tf.train.get_or_create_global_step(g) is step


def test_found_by_name_when_not_in_collection():
    with tf.Graph().as_default():
        step = tf.Variable(0, dtype=tf.int64, name="global_step", trainable=False)
        assert tf.train.get_global_step() is step._ref()
        assert tf.train.get_or_create_global_step() is step._ref()


def test_multiple_global_steps_are_ignored(caplog):
    with tf.Graph().as_default():
        for i in range(2):
            tf.add_to_collection(tf.GraphKeys.GLOBAL_STEP, tf.Variable(0, name=f"s{i}"))
        assert tf.train.get_global_step() is None
    assert "Multiple tensors in global_step collection." in caplog.text


@pytest.mark.parametrize(
    "value, message",
    [
        ("step", 'Existing "global_step" must be a Variable or Tensor: step.'),
        (lambda: tf.constant(1.0), "Existing \"global_step\" does not have integer type: <dtype: 'float32'>"),
        (lambda: tf.Variable([1, 2]), 'Existing "global_step" is not scalar: (2,)'),
    ],
)
def test_assert_global_step(value, message):
    with tf.Graph().as_default():
        candidate = value() if callable(value) else value
        with pytest.raises(TypeError, match=re.escape(message)):
            tf.train.assert_global_step(candidate)
        tf.train.assert_global_step(tf.placeholder(tf.int32, [None]))  # unknown shapes are accepted


def test_wrong_global_step_in_collection_is_rejected():
    with tf.Graph().as_default():
        tf.add_to_collection(tf.GraphKeys.GLOBAL_STEP, tf.Variable(0.0, name="global_step"))
        with pytest.raises(TypeError, match="does not have integer type"):
            tf.train.get_global_step()


def test_step_read_and_increment():
    with tf.Graph().as_default():
        assert training_util._get_or_create_global_step_read() is None
        with pytest.raises(ValueError, match="Global step tensor should be created"):
            training_util._increment_global_step(1)
        step = tf.train.create_global_step()
        read = training_util._get_or_create_global_step_read()
        assert training_util._get_or_create_global_step_read() is read and read.op.name == "global_step/add"
        inc = training_util._increment_global_step(3)
        with tf.Session() as sess:
            assert sess.run(read) == 0  # before initialisation: the initial value
            sess.run(step.initializer)
            before, after = sess.run([read, inc])
            assert (before, after) == (0, 3)
            assert sess.run(read) == 3
        tf.add_to_collection(training_util.GLOBAL_STEP_READ_KEY, read)
        with pytest.raises(RuntimeError, match="There should be only one."):
            training_util._get_global_step_read()


def test_public_names():
    for name in training_util.__all__:
        assert getattr(tf.train, name) is getattr(training_util, name)
