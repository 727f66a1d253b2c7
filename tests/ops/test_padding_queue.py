"""``tf.PaddingFIFOQueue``: elements of varying size, padded per batch; checked against real TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.nn.helpers import tf1

ELEMENTS = [
    ([1, 2, 3], [[1.0, 2.0]], b"a"),
    ([4], [[3.0, 4.0], [5.0, 6.0], [7.0, 8.0]], b"bb"),
    ([], [[9.0, 10.0]], b""),
]


def run_queue(t, dequeue: str, n: int, close: bool) -> list:
    with t.Graph().as_default(), t.Session() as sess:
        q = t.PaddingFIFOQueue(10, [t.int32, t.float32, t.string], shapes=[[None], [None, 2], []])
        for ids, rows, word in ELEMENTS:
            sess.run(q.enqueue((np.array(ids, np.int32), np.array(rows, np.float32).reshape(-1, 2), word)))
        if close:
            sess.run(q.close())
        batch = getattr(q, dequeue)(n)
        return [[x.tolist() for x in sess.run(batch)] for _ in range(1 if n >= len(ELEMENTS) else 2)]


@pytest.mark.tf_oracle
@pytest.mark.parametrize(("dequeue", "n", "close"), [("dequeue_many", 3, False), ("dequeue_up_to", 2, True)])
def test_batches_are_padded_like_tensorflow(dequeue, n, close):
    ours = run_queue(tf, dequeue, n, close)
    assert ours == run_queue(tf1(), dequeue, n, close)
    if dequeue == "dequeue_many":
        ids, rows, words = ours[0]
        assert ids == [[1, 2, 3], [4, 0, 0], [0, 0, 0]]
        assert rows[0] == [[1.0, 2.0], [0.0, 0.0], [0.0, 0.0]]
        assert words == [b"a", b"bb", b""]


def test_static_shapes_single_dequeue_and_errors():
    with tf.Graph().as_default():
        q = tf.PaddingFIFOQueue(4, [tf.int64], shapes=[[None, 3]], name="pad")
        assert q.dequeue_many(2).shape.as_list() == [2, None, 3]
        one = q.dequeue()
        assert one.shape.as_list() == [None, 3]
        with pytest.raises(ValueError, match="Shapes must be provided for all components"):
            tf.PaddingFIFOQueue(4, [tf.int64, tf.int64], shapes=[[None]])
        with pytest.raises(ValueError, match="compatible|incompatible"):
            q.enqueue(tf.zeros([2, 4], tf.int64))
        fed = tf.placeholder(tf.int64, [None, None])
        push = q.enqueue(fed)
        with tf.Session() as sess:
            sess.run(push, {fed: np.ones([2, 3], np.int64)})
            assert sess.run(one).tolist() == [[1, 1, 1], [1, 1, 1]]
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"Expected \[\?,3\], got \[2,4\]"):
                sess.run(push, {fed: np.ones([2, 4], np.int64)})
            sess.run(q.close())
            with pytest.raises(tf.errors.OutOfRangeError, match="PaddingFIFOQueue 'pad' is closed"):
                sess.run(one)
