"""Subtracting many rows at once (``ScatterSub``, ``ScatterNdSub``, ``TensorScatterSub`` and sparse optimizer
updates, which add negated rows from 128 rows on): the same bits as torch's ``alpha=-1`` path and TF's values."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import dtf_notebook.compat.v1 as tf
from dtf_notebook.ops.state_ops import subtract_rows
from tests.ops.oracle import real_tf

ROWS = 50
IDS = np.random.default_rng(3).integers(0, ROWS, 300)  # many rows, most of them repeated
UPDATES = np.random.default_rng(4).standard_normal((300, 4)).astype(np.float32)
INIT = np.random.default_rng(5).standard_normal((ROWS, 4)).astype(np.float32)


@pytest.mark.parametrize("count", [5, 127, 128, 4096])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32])
def test_same_bits_as_alpha_minus_one(count, dtype):
    g = torch.Generator().manual_seed(count)
    index = torch.randint(0, 40, (count,), generator=g)
    rows = (torch.randn(count, 3, generator=g) * 100).to(dtype)
    target = (torch.randn(40, 3, generator=g) * 100).to(dtype)
    expected = target.clone().index_add_(0, index, rows, alpha=-1)
    assert torch.equal(subtract_rows(target, index, rows), expected)
    assert torch.equal(target, expected)  # in place


def _scatter_results(m):
    with m.Graph().as_default():
        ref = m.Variable(INIT, name="ref")
        nd = m.Variable(INIT, name="nd")
        ops = [
            m.scatter_sub(ref, IDS, UPDATES),
            m.scatter_nd_sub(nd, IDS.reshape(-1, 1), UPDATES),
            m.tensor_scatter_nd_sub(m.constant(INIT), IDS.reshape(-1, 1), UPDATES),
        ]
        with m.Session() as sess:
            sess.run(m.global_variables_initializer())
            return sess.run(ops)


@pytest.mark.tf_oracle
def test_scatter_subs_match_tf():
    tf1 = real_tf()
    tf1.disable_resource_variables()
    try:
        expected = _scatter_results(tf1)
    finally:
        tf1.enable_resource_variables()
    for got, want in zip(_scatter_results(tf), expected):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)


OPTIMIZERS = [
    ("momentum", lambda m: m.train.MomentumOptimizer(0.1, 0.9)),
    ("nesterov", lambda m: m.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True)),
    ("rmsprop", lambda m: m.train.RMSPropOptimizer(0.01, momentum=0.5)),
    ("centered_rmsprop", lambda m: m.train.RMSPropOptimizer(0.01, centered=True)),
    ("adagrad", lambda m: m.train.AdagradOptimizer(0.1)),
    ("adadelta", lambda m: m.train.AdadeltaOptimizer(1.0)),
    ("sgd", lambda m: m.train.GradientDescentOptimizer(0.1)),
]


def _sparse_training(m, make):
    with m.Graph().as_default():
        table = m.Variable(INIT, name="table")
        loss = m.reduce_sum(m.square(m.gather(table, IDS)) * UPDATES)
        train = make(m).minimize(loss)
        with m.Session() as sess:
            sess.run(m.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            return sess.run(table)


@pytest.mark.tf_oracle
@pytest.mark.parametrize("make", [o[1] for o in OPTIMIZERS], ids=[o[0] for o in OPTIMIZERS])
def test_sparse_updates_of_many_rows_match_tf(make):
    tf1 = real_tf()
    tf1.disable_resource_variables()
    try:
        expected = _sparse_training(tf1, make)
    finally:
        tf1.enable_resource_variables()
    np.testing.assert_allclose(_sparse_training(tf, make), expected, rtol=2e-5, atol=2e-5)
