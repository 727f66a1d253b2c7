"""tf.nn.safe_embedding_lookup_sparse against real TensorFlow: values, static shapes and table gradients."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ops.sparse.support import same, same_gradients

pytestmark = pytest.mark.tf_oracle

TABLE = np.arange(12.0).reshape(6, 2) / 4.0
IDS_2D = ([[0, 0], [0, 1], [2, 0], [2, 1], [3, 0]], [1, -1, 4, 2, 5], [5, 2])
WEIGHTS = [2.0, 1.0, 0.5, -1.0, 3.0]


def ids(m, spec=IDS_2D):
    indices, values, shape = spec
    return m.SparseTensor(indices, m.constant(values, m.int64), shape)


def weights(m, spec=IDS_2D, values=WEIGHTS):
    return m.SparseTensor(spec[0], values, spec[2])


@pytest.mark.parametrize("combiner", ["mean", "sum", "sqrtn"])
@pytest.mark.parametrize("default_id", [None, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_values_like_tensorflow(combiner, default_id, weighted):
    def build(m):
        w = weights(m) if weighted else None
        return m.nn.safe_embedding_lookup_sparse(
            m.constant(TABLE, m.float32), ids(m), w, combiner=combiner, default_id=default_id
        )

    same(build, rtol=1e-6)


def test_higher_rank_ids_and_shards():
    spec = ([[0, 0, 0], [0, 1, 0], [0, 1, 1], [1, 0, 1]], [1, 2, 0, 5], [2, 2, 2])

    def build(m):
        shards = [m.constant(TABLE[:3], m.float32), m.constant(TABLE[3:], m.float32)]
        return [
            m.nn.safe_embedding_lookup_sparse(shards, ids(m, spec), None),
            m.nn.safe_embedding_lookup_sparse(shards, ids(m, spec), None, partition_strategy="mod", default_id=0),
        ]

    same(build)


def test_table_gradients_like_tensorflow():
    for combiner in ("mean", "sum"):
        same_gradients(
            lambda m, t, c=combiner: (
                m.nn.safe_embedding_lookup_sparse(t, ids(m), weights(m, values=np.array(WEIGHTS)), combiner=c) * 1.5
            ),
            [TABLE],
        )
    same_gradients(lambda m, t: m.nn.safe_embedding_lookup_sparse([t[:3], t[3:]], ids(m), default_id=2), [TABLE])
