"""The rest of ``tf.nn`` against real TensorFlow: selu/swish/crelu/relu_layer, weighted and sufficient-statistics
moments, LRN, atrous and N-d convolution and pooling, max_pool_with_argmax, candidate samplers, accidental hits,
nce_loss, sampled_softmax_loss and weighted_cross_entropy_with_logits (values, gradients, static shapes).

Sampling draws from torch's random stream, so sampled losses are compared with fixed ``sampled_values``, and the
samplers' expected counts where they do not depend on the draws.
"""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

pytestmark = pytest.mark.tf_oracle


@pytest.fixture(scope="module")
def tf1():
    real = pytest.importorskip("tensorflow")
    real.compat.v1.disable_eager_execution()
    return real.compat.v1


def _rand(*shape, seed=0, low=-1.0, high=1.0):
    return np.random.RandomState(seed).uniform(low, high, shape).astype(np.float32)


def _run_both(tf1, build, inputs, grads=True, rtol=1e-5, atol=1e-5):
    """Values, static shapes and gradients (against a cosine upstream gradient) of ``build(m, *constants)``."""
    results = []
    for m in (tf1, tf):
        with m.Graph().as_default():
            consts = [m.constant(x) for x in inputs]
            outs = build(m, *consts)
            outs = list(outs) if isinstance(outs, list | tuple) else [outs]
            shapes = [o.shape.as_list() if o.shape.ndims is not None else None for o in outs]
            floats = [o for o in outs if o.dtype.is_floating]
            grad_list = []
            if grads and floats:
                ys = [
                    m.reduce_sum(o * m.cos(m.cast(m.reshape(m.range(m.size(o)), m.shape(o)), o.dtype))) for o in floats
                ]
                targets = [c for c in consts if c.dtype.is_floating]
                # Dense gradients (an embedding lookup's gradient is IndexedSlices in both).
                grad_list = [m.convert_to_tensor(g) for g in m.gradients(m.add_n(ys), targets) if g is not None]
            with m.Session() as sess:
                results.append((shapes, sess.run(outs), sess.run(grad_list)))
    (shapes_tf, values_tf, grads_tf), (shapes, values, grads_here) = results
    assert shapes == shapes_tf
    assert len(grads_here) == len(grads_tf)
    for got, expected in zip(values + grads_here, values_tf + grads_tf):
        assert np.asarray(got).dtype == np.asarray(expected).dtype
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    return values


# ---- activations ---------------------------------------------------------------------------------------------------
def test_selu_swish_crelu_relu_layer(tf1):
    x = _rand(3, 4, seed=1, low=-3, high=3)
    _run_both(tf1, lambda m, a: [m.nn.selu(a), m.nn.swish(a), m.nn.crelu(a), m.nn.crelu(a, axis=0)], [x])
    _run_both(tf1, lambda m, a, b: [m.nn.swish(a, beta=b)], [x, np.float32(1.7)])
    w, b = _rand(4, 5, seed=2), _rand(5, seed=3)
    _run_both(tf1, lambda m, a, w, b: m.nn.relu_layer(a, w, b), [x, w, b])


def test_selu_second_derivative(tf1):
    x = _rand(6, seed=4, low=-2, high=2)

    def build(m, a):
        (g,) = m.gradients(m.reduce_sum(m.nn.selu(a) * a), a)
        return g

    _run_both(tf1, build, [x])


def test_silu_is_swish():
    assert tf.nn.silu is not None
    with tf.Graph().as_default(), tf.Session() as sess:
        a, b = sess.run([tf.nn.silu([1.0, -2.0]), tf.nn.swish([1.0, -2.0])])
    np.testing.assert_array_equal(a, b)


# ---- moments and normalization -------------------------------------------------------------------------------------
@pytest.mark.parametrize("keep_dims", [False, True])
def test_weighted_moments_and_sufficient_statistics(tf1, keep_dims):
    x, w = _rand(4, 3, 2, seed=5), _rand(4, 3, 1, seed=6, low=0, high=2)

    def build(m, x, w):
        mean, var = m.nn.weighted_moments(x, [0, 1], w, keep_dims=keep_dims)
        count, m_ss, v_ss, _ = m.nn.sufficient_statistics(x, [0, 2], shift=0.25, keep_dims=keep_dims)
        mean2, var2 = m.nn.normalize_moments(count, m_ss, v_ss, 0.25)
        mean3, var3 = m.nn.moments(x, [1], keep_dims=keep_dims)
        return [mean, var, count, m_ss, v_ss, mean2, var2, mean3, var3]

    _run_both(tf1, build, [x, w])


def test_sufficient_statistics_of_unknown_shape(tf1):
    x = _rand(3, 5, seed=7)
    results = []
    for m in (tf1, tf):
        with m.Graph().as_default():
            ph = m.placeholder(m.float32, [None, None])
            stats = m.nn.sufficient_statistics(ph, [1])[:3]
            with m.Session() as sess:
                results.append(sess.run(list(stats), {ph: x}))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_batch_norm_with_global_normalization(tf1):
    t, mean, var = _rand(2, 3, 4, seed=8), _rand(4, seed=9), _rand(4, seed=10, low=0.5, high=2)
    beta, gamma = _rand(4, seed=11), _rand(4, seed=12)
    for scale in (False, True):
        _run_both(
            tf1,
            lambda m, t, mu, v, b, g, s=scale: m.nn.batch_norm_with_global_normalization(t, mu, v, b, g, 0.001, s),
            [t, mean, var, beta, gamma],
        )


@pytest.mark.parametrize(
    "kwargs", [{}, {"depth_radius": 2, "bias": 2.0, "alpha": 0.3, "beta": 0.75}, {"depth_radius": 0, "beta": 1.0}]
)
def test_local_response_normalization(tf1, kwargs):
    x = _rand(2, 3, 4, 11, seed=13, low=-2, high=2)
    _run_both(tf1, lambda m, a: m.nn.lrn(a, **kwargs), [x], rtol=1e-4, atol=1e-5)
    _run_both(tf1, lambda m, a: m.nn.local_response_normalization(a, **kwargs), [x], rtol=1e-4, atol=1e-5)


# ---- convolution and pooling ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("rate", [1, 2, 3])
def test_atrous_conv2d_and_transpose(tf1, padding, rate):
    x, w = _rand(2, 9, 8, 3, seed=14), _rand(3, 2, 3, 4, seed=15)
    _run_both(tf1, lambda m, a, b: m.nn.atrous_conv2d(a, b, rate, padding), [x, w], rtol=1e-4, atol=1e-4)
    out_h = 9 if padding == "SAME" else 9 + (3 - 1) * rate
    out_w = 8 if padding == "SAME" else 8 + (2 - 1) * rate
    value = _rand(2, 9, 8, 4, seed=16)
    wt = _rand(3, 2, 5, 4, seed=17)
    _run_both(
        tf1,
        lambda m, a, b: m.nn.atrous_conv2d_transpose(a, b, [2, out_h, out_w, 5], rate, padding),
        [value, wt],
        rtol=1e-4,
        atol=1e-4,
    )


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_convolution_nd_with_dilation(tf1, padding):
    x1, w1 = _rand(2, 11, 3, seed=18), _rand(3, 3, 4, seed=19)
    _run_both(tf1, lambda m, a, b: m.nn.convolution(a, b, padding, dilation_rate=[2]), [x1, w1], rtol=1e-4, atol=1e-4)
    _run_both(tf1, lambda m, a, b: m.nn.convolution(a, b, padding, strides=[2]), [x1, w1], rtol=1e-4, atol=1e-4)
    x2, w2 = _rand(1, 7, 8, 2, seed=20), _rand(2, 3, 2, 3, seed=21)
    _run_both(
        tf1, lambda m, a, b: m.nn.convolution(a, b, padding, dilation_rate=[3, 2]), [x2, w2], rtol=1e-4, atol=1e-4
    )
    x3, w3 = _rand(1, 5, 6, 5, 2, seed=22), _rand(2, 2, 2, 2, 3, seed=23)
    _run_both(tf1, lambda m, a, b: m.nn.convolution(a, b, padding, dilations=[2, 1, 2]), [x3, w3], rtol=1e-4, atol=1e-4)


def test_conv1d_transpose_and_conv3d_backprop_filter(tf1):
    value, w = _rand(2, 5, 4, seed=24), _rand(3, 6, 4, seed=25)
    _run_both(tf1, lambda m, a, b: m.nn.conv1d_transpose(a, b, [2, 10, 6], 2), [value, w], rtol=1e-4, atol=1e-4)
    _run_both(tf1, lambda m, a, b: m.nn.conv1d_transpose(a, b, [2, 7, 6], 1, "VALID"), [value, w], rtol=1e-4, atol=1e-4)
    x, dy = _rand(1, 4, 4, 4, 2, seed=26), _rand(1, 3, 3, 3, 3, seed=27)
    _run_both(
        tf1,
        lambda m, a, b: m.nn.conv3d_backprop_filter_v2(a, [2, 2, 2, 2, 3], b, [1, 1, 1, 1, 1], "VALID"),
        [x, dy],
        rtol=1e-4,
        atol=1e-4,
    )


@pytest.mark.parametrize("pooling_type", ["MAX", "AVG"])
def test_pool_nd(tf1, pooling_type):
    x2 = _rand(2, 9, 8, 3, seed=28)
    _run_both(tf1, lambda m, a: m.nn.pool(a, [2, 3], pooling_type, "VALID", dilation_rate=[2, 2]), [x2])
    _run_both(tf1, lambda m, a: m.nn.pool(a, [3, 2], pooling_type, "SAME", strides=[2, 2]), [x2])
    x1 = _rand(2, 10, 3, seed=29)
    _run_both(tf1, lambda m, a: m.nn.pool(a, [3], pooling_type, "VALID", dilation_rate=[3]), [x1])
    _run_both(tf1, lambda m, a: m.nn.pool(a, [2], pooling_type, "SAME", strides=[2]), [x1])
    x3 = _rand(1, 5, 6, 4, 2, seed=30)
    _run_both(tf1, lambda m, a: m.nn.pool(a, [2, 2, 2], pooling_type, "SAME", strides=[2, 1, 2]), [x3])
    fn = "max_pool_v2" if pooling_type == "MAX" else "avg_pool_v2"
    for x in (x1, x2, x3):
        _run_both(tf1, lambda m, a: getattr(m.nn, fn)(a, 2, 2, "SAME"), [x])


def test_pool_errors_match_tf(tf1):
    for m in (tf1, tf):
        with m.Graph().as_default():
            x = m.zeros([1, 6, 6, 1])
            with pytest.raises(ValueError, match="SAME"):
                m.nn.pool(x, [2, 2], "MAX", "SAME", dilation_rate=[2, 2])
            with pytest.raises(ValueError, match="strides"):
                m.nn.pool(x, [2, 2], "MAX", "VALID", dilation_rate=[2, 2], strides=[2, 2])


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("include_batch", [False, True])
def test_max_pool_with_argmax(tf1, padding, include_batch):
    # Integers in a small range make ties, which both must break the same way.
    x = np.random.RandomState(31).randint(0, 4, (2, 7, 6, 3)).astype(np.float32)

    def build(m, a):
        out, argmax = m.nn.max_pool_with_argmax(
            a, [1, 3, 2, 1], [1, 2, 2, 1], padding, include_batch_in_index=include_batch
        )
        return [out, argmax]

    _run_both(tf1, build, [x])

    # TF registers no gradient for MaxPoolGradWithArgmax; ours (MaxPoolGradGradWithArgmax) must agree with
    # TF's kernels: d/da sum(g * sin(a)) with g = dL/da of sum(out ** 2) is cos(a) * g + scatter(2 * gather(sin a)).
    a_value = _rand(2, 5, 5, 2, seed=32)
    ksize = strides = [1, 2, 2, 1]
    with tf1.Graph().as_default():
        a = tf1.constant(a_value)
        out, argmax = tf1.nn.max_pool_with_argmax(a, ksize, strides, padding, include_batch_in_index=include_batch)
        raw = tf1.raw_ops
        kw = {"ksize": ksize, "strides": strides, "padding": padding, "include_batch_in_index": include_batch}
        g = raw.MaxPoolGradWithArgmax(input=a, grad=2 * out, argmax=argmax, **kw)
        with tf1.Session() as sess:
            index = sess.run(argmax)
        # TF has no CPU kernel of MaxPoolGradGradWithArgmax: the gather is numpy's.
        offset = 0 if include_batch else np.arange(2).reshape(2, 1, 1, 1) * a_value[0].size
        picked = tf1.constant(np.sin(a_value).reshape(-1)[index + offset])
        gg = tf1.cos(a) * g + raw.MaxPoolGradWithArgmax(input=a, grad=2 * picked, argmax=argmax, **kw)
        with tf1.Session() as sess:
            expected = sess.run([g, gg])
    with tf.Graph().as_default():
        a = tf.constant(a_value)
        out, _ = tf.nn.max_pool_with_argmax(a, ksize, strides, padding, include_batch_in_index=include_batch)
        (g,) = tf.gradients(tf.reduce_sum(out * out), a)
        (gg,) = tf.gradients(tf.reduce_sum(g * tf.sin(a)), a)
        with tf.Session() as sess:
            got = sess.run([g, gg])
    for x, y in zip(got, expected):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)


def test_max_pool_with_argmax_int32_index(tf1):
    x = _rand(1, 4, 4, 2, seed=33)
    # TF has CPU kernels of the int32 form only forward.
    _run_both(
        tf1,
        lambda m, a: list(m.nn.max_pool_with_argmax(a, [1, 2, 2, 1], [1, 2, 2, 1], "VALID", Targmax=m.int32)),
        [x],
        grads=False,
    )


# ---- candidate sampling --------------------------------------------------------------------------------------------
_TRUE = np.array([[0, 5], [3, 99], [17, 2]], np.int64)


def _sampler_outputs(m, name, unique, **kwargs):
    fn = getattr(m.nn, name)
    with m.Graph().as_default():
        outs = fn(_TRUE, 2, 6, unique, seed=7, **kwargs) if name == "all_candidate_sampler" else None
        if outs is None:
            outs = fn(_TRUE, 2, 6, unique, 100, seed=7, **kwargs)
        with m.Session() as sess:
            return sess.run(list(outs))


@pytest.mark.parametrize(
    "name,kwargs",
    [
        ("uniform_candidate_sampler", {}),
        ("log_uniform_candidate_sampler", {}),
        ("learned_unigram_candidate_sampler", {}),
        ("fixed_unigram_candidate_sampler", {"unigrams": list(np.arange(1, 101) % 7 + 0.5)}),
        ("fixed_unigram_candidate_sampler", {"unigrams": list(np.arange(2, 102) % 5 + 1.0), "distortion": 0.75}),
    ],
)
def test_candidate_samplers_expected_counts(tf1, name, kwargs):
    sampled_tf, true_tf, _ = _sampler_outputs(tf1, name, False, **kwargs)
    sampled, true_count, sampled_count = _sampler_outputs(tf, name, False, **kwargs)
    assert sampled.dtype == sampled_tf.dtype == np.int64 and sampled.shape == (6,)
    assert ((sampled >= 0) & (sampled < 100)).all()
    np.testing.assert_allclose(true_count, true_tf, rtol=1e-6)
    # With replacement every id's expected count is p(id) * num_sampled: the true classes show p.
    u_sampled, u_true, u_sampled_count = _sampler_outputs(tf, name, True, **kwargs)
    assert len(set(u_sampled.tolist())) == 6
    if name != "learned_unigram_candidate_sampler":
        # Unique draws: 1 - (1 - p) ** num_tries (float32, TF's formula) for one num_tries > 6 for every id, or p * 6
        # when the first 6 draws were distinct.
        p = (true_count.reshape(-1) / np.float32(6)).astype(np.float32)
        counts = [p * np.float32(6)] + [-np.expm1(np.float32(n) * np.log1p(-p)) for n in range(7, 2000)]
        best = min(np.abs(c / u_true.reshape(-1) - 1).max() for c in counts)
        assert best < 1e-3, best


def test_fixed_unigram_reserved_ids_shards_and_vocab_file(tf1, tmp_path):
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("".join(f"word{i},{(i * 7) % 11 + 1}\n" for i in range(20)))
    true = np.array([[0], [3], [6]], np.int64)
    cases = [
        {"unigrams": [float(i % 4 + 1) for i in range(18)], "num_reserved_ids": 2, "range_max": 20},
        {"unigrams": [float(i % 4 + 1) for i in range(20)], "num_shards": 2, "shard": 1, "range_max": 10},
        {"vocab_file": str(vocab), "distortion": 0.5, "num_reserved_ids": 1, "num_shards": 3, "range_max": 7},
    ]
    for kwargs in cases:
        results = []
        for m in (tf1, tf):
            with m.Graph().as_default():
                kw = dict(kwargs)
                range_max = kw.pop("range_max")
                outs = m.nn.fixed_unigram_candidate_sampler(true, 1, 3, False, range_max, seed=1, **kw)
                with m.Session() as sess:
                    results.append(sess.run(outs[1]))
        np.testing.assert_allclose(results[1], results[0], rtol=1e-6)


def test_learned_unigram_sampler_learns_from_true_classes_like_tf(tf1):
    results = []
    for m in (tf1, tf):
        with m.Graph().as_default():
            _, true_count, _ = m.nn.learned_unigram_candidate_sampler(_TRUE, 2, 4, False, 100, seed=3)
            with m.Session() as sess:
                results.append([sess.run(true_count) for _ in range(3)])
    np.testing.assert_allclose(results[1], results[0], rtol=1e-6)


def test_log_uniform_sampler_follows_its_distribution():
    with tf.Graph().as_default():
        sampled, _, _ = tf.nn.log_uniform_candidate_sampler([[1, 2]], 2, 20000, False, 50, seed=5)
        with tf.Session() as sess:
            draws = sess.run(sampled)
    freq = np.bincount(draws, minlength=50) / len(draws)
    p = np.log((np.arange(50) + 2.0) / (np.arange(50) + 1.0)) / np.log(51.0)
    np.testing.assert_allclose(freq, p, atol=0.01)


def test_all_candidate_sampler_and_accidental_hits(tf1):
    for unique in (False, True):
        results = []
        for m in (tf1, tf):
            with m.Graph().as_default(), m.Session() as sess:
                results.append(sess.run(list(m.nn.all_candidate_sampler([[0, 5], [3, 2]], 2, 6, unique))))
        for x, y in zip(*results):
            np.testing.assert_array_equal(x, y)
    sampled = np.array([5, 8, 2, 5, 3, 0], np.int64)
    true = np.array([[0, 5], [3, 3], [17, 2]], np.int64)
    _run_both(tf1, lambda m, t, s: list(m.nn.compute_accidental_hits(t, s, 2)), [true, sampled])


def test_sampler_errors_match_tf(tf1):
    for m in (tf1, tf):
        with m.Graph().as_default():
            hits = m.nn.uniform_candidate_sampler([[1, 2]], 2, 8, True, 5)
            with m.Session() as sess:
                with pytest.raises(m.errors.InvalidArgumentError, match="range is too small"):
                    sess.run(hits)
            bad = m.nn.fixed_unigram_candidate_sampler([[1, 2]], 2, 2, False, 7, unigrams=[1.0, 2.0])
            with m.Session() as sess:
                with pytest.raises(m.errors.InvalidArgumentError, match="must be equal to weights size"):
                    sess.run(bad)


# ---- sampled losses ------------------------------------------------------------------------------------------------
_SAMPLED = (
    np.array([7, 1, 4, 9, 0], np.int64),
    _rand(4, 2, seed=40, low=0.1, high=1),
    _rand(5, seed=41, low=0.1, high=1),
)


@pytest.mark.parametrize("remove_hits", [False, True])
@pytest.mark.parametrize("loss", ["nce_loss", "sampled_softmax_loss"])
def test_sampled_losses_with_fixed_samples(tf1, loss, remove_hits):
    weights, biases, inputs = _rand(10, 6, seed=42), _rand(10, seed=43), _rand(4, 6, seed=44)
    labels = np.array([[1, 3], [4, 4], [0, 9], [2, 5]], np.int64)
    sampled, true_count, sampled_count = _SAMPLED

    def build(m, w, b, x, tc, sc):
        fn = getattr(m.nn, loss)
        return fn(
            w,
            b,
            labels,
            x,
            num_sampled=5,
            num_classes=10,
            num_true=2,
            sampled_values=(m.constant(sampled), tc, sc),
            remove_accidental_hits=remove_hits,
        )

    _run_both(tf1, build, [weights, biases, inputs, true_count, sampled_count], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_sampled_softmax_loss_with_sharded_weights(tf1, strategy):
    shards = [_rand(4, 3, seed=45), _rand(3, 3, seed=46), _rand(3, 3, seed=47)]
    biases, inputs = _rand(10, seed=48), _rand(3, 3, seed=49)
    labels = np.array([[2], [7], [9]], np.int64)
    sampled = (np.array([3, 8, 1], np.int64), np.full([3, 1], 0.3, np.float32), np.full([3], 0.2, np.float32))

    def build(m, w0, w1, w2, b, x):
        return m.nn.sampled_softmax_loss(
            [w0, w1, w2],
            b,
            labels,
            x,
            num_sampled=3,
            num_classes=10,
            sampled_values=tuple(m.constant(s) for s in sampled),
            partition_strategy=strategy,
        )

    _run_both(tf1, build, [*shards, biases, inputs], rtol=1e-4, atol=1e-5)


def test_sampled_softmax_loss_trains_with_its_own_sampler():
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        weights = tf.get_variable("w", [50, 8])
        biases = tf.get_variable("b", [50], initializer=tf.zeros_initializer())
        inputs = tf.get_variable("x", [16, 8])
        labels = tf.constant(np.arange(16).reshape(16, 1) % 50, tf.int64)
        loss = tf.reduce_mean(tf.nn.sampled_softmax_loss(weights, biases, labels, inputs, 10, 50))
        nce = tf.reduce_mean(tf.nn.nce_loss(weights, biases, labels, inputs, 10, 50))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss + nce)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = sess.run(loss + nce)
            for _ in range(30):
                sess.run(train)
            assert sess.run(loss + nce) < first


def test_weighted_cross_entropy_with_logits(tf1):
    labels, logits = _rand(3, 4, seed=50, low=0, high=1), _rand(3, 4, seed=51, low=-4, high=4)
    _run_both(
        tf1,
        lambda m, z, x: m.nn.weighted_cross_entropy_with_logits(labels=z, logits=x, pos_weight=2.5),
        [labels, logits],
    )
    _run_both(
        tf1,
        lambda m, z, x, w: m.nn.weighted_cross_entropy_with_logits(targets=z, logits=x, pos_weight=w),
        [labels, logits, _rand(4, seed=52, low=0.5, high=3)],
    )
    for m in (tf1, tf):
        with m.Graph().as_default(), pytest.raises(ValueError, match="same shape"):
            m.nn.weighted_cross_entropy_with_logits(labels=m.zeros([2, 3]), logits=m.zeros([3, 2]), pos_weight=1.0)


def test_tf_nn_names_present(tf1):
    names = [
        "selu",
        "swish",
        "crelu",
        "relu_layer",
        "weighted_moments",
        "sufficient_statistics",
        "normalize_moments",
        "batch_norm_with_global_normalization",
        "lrn",
        "local_response_normalization",
        "atrous_conv2d",
        "atrous_conv2d_transpose",
        "convolution",
        "with_space_to_batch",
        "conv1d_transpose",
        "conv3d_backprop_filter",
        "conv3d_backprop_filter_v2",
        "pool",
        "max_pool_v2",
        "avg_pool_v2",
        "max_pool_with_argmax",
        "uniform_candidate_sampler",
        "log_uniform_candidate_sampler",
        "learned_unigram_candidate_sampler",
        "fixed_unigram_candidate_sampler",
        "all_candidate_sampler",
        "compute_accidental_hits",
        "nce_loss",
        "sampled_softmax_loss",
        "weighted_cross_entropy_with_logits",
        "l2_normalize",
        "zero_fraction",
        "log_softmax",
        "elu",
        "leaky_relu",
        "relu6",
        "softsign",
        "softplus",
        "moments",
        "embedding_lookup_sparse",
        "dynamic_rnn",
        "bidirectional_dynamic_rnn",
        "raw_rnn",
        "static_rnn",
        "static_bidirectional_rnn",
        "static_state_saving_rnn",
    ]
    for name in names:
        assert hasattr(tf1.nn, name), name
        assert hasattr(tf.nn, name), name


# ---- fractional pooling, conv_transpose, depthwise backprops -------------------------------------------------------
@pytest.mark.parametrize("overlapping", [False, True])
@pytest.mark.parametrize("pool", ["fractional_max_pool", "fractional_avg_pool"])
def test_fractional_pools_on_regular_grids_match_tf(tf1, pool, overlapping):
    # A ratio that divides the size gives TF's one regular grid, so values and gradients compare exactly.
    x = np.random.RandomState(60).randint(0, 5, (2, 8, 9, 3)).astype(np.float32)

    _run_both(tf1, lambda m, a: getattr(m.nn, pool)(a, [1.0, 2.0, 3.0, 1.0], overlapping=overlapping)[0], [x])
    sequences = []
    for m in (tf1, tf):
        with m.Graph().as_default(), m.Session() as sess:
            _, rows, cols = getattr(m.nn, pool)(x, [1.0, 2.0, 3.0, 1.0], overlapping=overlapping)
            sequences.append(sess.run([rows, cols]))
    for a, b in zip(*sequences):
        np.testing.assert_array_equal(a, b)
    # TF's shape function gives the sequences one element fewer than they have; ours give their length.
    assert rows.shape.as_list() == [5] and cols.shape.as_list() == [4]


def _reference_pool(x, rows, cols, overlapping, reduce):
    h, w = x.shape[1], x.shape[2]
    out = np.zeros((x.shape[0], len(rows) - 1, len(cols) - 1, x.shape[3]), x.dtype)
    for i in range(len(rows) - 1):
        r_end = min(rows[i + 1] if overlapping else rows[i + 1] - 1, h - 1)
        for j in range(len(cols) - 1):
            c_end = min(cols[j + 1] if overlapping else cols[j + 1] - 1, w - 1)
            out[:, i, j] = reduce(x[:, rows[i] : r_end + 1, cols[j] : c_end + 1], axis=(1, 2))
    return out


@pytest.mark.parametrize("pseudo_random", [False, True])
@pytest.mark.parametrize("overlapping", [False, True])
def test_fractional_pools_with_random_sequences(tf1, pseudo_random, overlapping):
    x = _rand(2, 11, 13, 2, seed=61)
    g = _rand(2, 7, 9, 2, seed=62)
    for pool, reduce, raw_grad in (
        ("fractional_max_pool", np.max, "FractionalMaxPoolGrad"),
        ("fractional_avg_pool", np.mean, "FractionalAvgPoolGrad"),
    ):
        with tf.Graph().as_default():
            a = tf.constant(x)
            out, rows, cols = getattr(tf.nn, pool)(
                a, [1.0, 1.5, 1.4, 1.0], pseudo_random, overlapping, deterministic=True, seed=1, seed2=2
            )
            (grad,) = tf.gradients(out, a, grad_ys=tf.constant(g))
            with tf.Session() as sess:
                values, r, c, dx = sess.run([out, rows, cols, grad])
                again = sess.run([rows, cols])
        np.testing.assert_array_equal(again[0], r)
        np.testing.assert_array_equal(again[1], c)
        assert r[0] == 0 and r[-1] == 11 and set(np.diff(r)) <= {1, 2} and len(r) == 8
        assert c[0] == 0 and c[-1] == 13 and set(np.diff(c)) <= {1, 2} and len(c) == 10
        np.testing.assert_allclose(values, _reference_pool(x, r, c, overlapping, reduce), rtol=1e-5, atol=1e-7)
        # TF's gradient kernels, given the same sequences.
        with tf1.Graph().as_default(), tf1.Session() as sess:
            if raw_grad == "FractionalMaxPoolGrad":
                expected = tf1.raw_ops.FractionalMaxPoolGrad(
                    orig_input=x,
                    orig_output=values,
                    out_backprop=g,
                    row_pooling_sequence=r,
                    col_pooling_sequence=c,
                    overlapping=overlapping,
                )
            else:
                expected = tf1.raw_ops.FractionalAvgPoolGrad(
                    orig_input_tensor_shape=np.array(x.shape, np.int64),
                    out_backprop=g,
                    row_pooling_sequence=r,
                    col_pooling_sequence=c,
                    overlapping=overlapping,
                )
            np.testing.assert_allclose(dx, sess.run(expected), rtol=1e-6, atol=1e-7)


def test_fractional_pool_sequences_change_per_run_unless_deterministic():
    with tf.Graph().as_default():
        _, rows, _ = tf.nn.fractional_max_pool(tf.zeros([1, 50, 50, 1]), [1.0, 1.3, 1.3, 1.0], seed=3, seed2=4)
        with tf.Session() as sess:
            runs = [tuple(sess.run(rows)) for _ in range(5)]
    assert len(set(runs)) > 1


def test_conv_transpose_and_depthwise_backprops(tf1):
    x1, w1 = _rand(2, 5, 4, seed=63), _rand(3, 6, 4, seed=64)
    _run_both(tf1, lambda m, a, b: m.nn.conv_transpose(a, b, [2, 10, 6], 2), [x1, w1], rtol=1e-4, atol=1e-4)
    x2, w2 = _rand(1, 3, 3, 2, seed=65), _rand(3, 3, 4, 2, seed=66)
    _run_both(tf1, lambda m, a, b: m.nn.conv_transpose(a, b, [1, 6, 6, 4], 2), [x2, w2], rtol=1e-4, atol=1e-4)
    x3, w3 = _rand(1, 2, 3, 3, 2, seed=67), _rand(2, 2, 2, 3, 2, seed=68)
    _run_both(
        tf1, lambda m, a, b: m.nn.conv_transpose(a, b, [1, 4, 6, 6, 3], [1, 2, 2, 2, 1]), [x3, w3], rtol=1e-4, atol=1e-4
    )
    x, w, dy = _rand(2, 6, 5, 3, seed=69), _rand(3, 2, 3, 2, seed=70), _rand(2, 3, 3, 6, seed=71)
    _run_both(
        tf1,
        lambda m, f, d: m.nn.depthwise_conv2d_native_backprop_input([2, 6, 5, 3], f, d, [1, 2, 2, 1], "SAME"),
        [w, dy],
        rtol=1e-4,
        atol=1e-4,
    )
    _run_both(
        tf1,
        lambda m, a, d: m.nn.depthwise_conv2d_backprop_filter(a, [3, 2, 3, 2], d, [1, 2, 2, 1], "SAME"),
        [x, dy],
        rtol=1e-4,
        atol=1e-4,
    )


# ---- CTC -----------------------------------------------------------------------------------------------------------
_CTC_LABELS = [[1, 1, 3], [2], [4, 0, 4, 4], [0, 2]]  # repeats, a single label, a label repeated three times
_CTC_LENGTHS = np.array([8, 5, 8, 3], np.int32)


def _ctc_sparse(m, labels=_CTC_LABELS):
    indices = [[b, i] for b, row in enumerate(labels) for i in range(len(row))]
    values = [v for row in labels for v in row]
    return m.SparseTensor(np.array(indices, np.int64), np.array(values, np.int32), [len(labels), 4])


@pytest.mark.parametrize("collapse", [False, True])
@pytest.mark.parametrize("merge", [True, False])
def test_ctc_loss_values_and_gradients(tf1, collapse, merge):
    logits = _rand(8, 4, 6, seed=80, low=-3, high=3)

    def build(m, x):
        return m.nn.ctc_loss(
            _ctc_sparse(m), x, _CTC_LENGTHS, preprocess_collapse_repeated=collapse, ctc_merge_repeated=merge
        )

    _run_both(tf1, build, [logits], rtol=1e-4, atol=1e-5)


def test_ctc_loss_batch_major_ignoring_long_labels_and_double_precision(tf1):
    logits = _rand(4, 8, 6, seed=81, low=-3, high=3)
    lengths = np.array([8, 2, 8, 3], np.int32)  # the second and fourth labels do not fit: zero loss and gradient

    def build(m, x):
        return m.nn.ctc_loss(
            _ctc_sparse(m, [[1, 1, 3], [2, 3, 1], [4, 0, 4, 4], [0, 2, 2, 2]]),
            x,
            lengths,
            ignore_longer_outputs_than_inputs=True,
            time_major=False,
        )

    values = _run_both(tf1, build, [logits], rtol=1e-4, atol=1e-5)
    assert values[0][1] == 0 and values[0][3] == 0
    time_major = logits.transpose(1, 0, 2).astype(np.float64)
    _run_both(tf1, lambda m, x: m.nn.ctc_loss(_ctc_sparse(m), x, _CTC_LENGTHS), [time_major])


def test_ctc_loss_errors_match_tf(tf1):
    logits = np.zeros([3, 2, 4], np.float32)
    cases = [
        ([[1, 2], []], [3, 3], "Labels length is zero in batch 1"),
        ([[1, 2, 0, 1], [1]], [3, 3], "Not enough time for target transition sequence"),
        ([[1, 3, 2], [1]], [3, 3], "Saw a non-null label"),
    ]
    for labels, lengths, message in cases:
        for m in (tf1, tf):
            with m.Graph().as_default(), m.Session() as sess:
                indices = [[b, i] for b, row in enumerate(labels) for i in range(len(row))]
                values = [v for row in labels for v in row]
                sparse = m.SparseTensor(np.array(indices, np.int64), np.array(values, np.int32), [2, 4])
                with pytest.raises(m.errors.InvalidArgumentError, match=message):
                    sess.run(m.nn.ctc_loss(sparse, logits, lengths))
    for m in (tf1, tf):
        with m.Graph().as_default():
            x = m.constant(logits)
            loss = m.nn.ctc_loss(_ctc_sparse(m, [[1], [2]]), x, [3, 3])
            (g,) = m.gradients(loss, x)
            with pytest.raises(LookupError, match="Gradient explicitly disabled"):
                m.gradients(g, x)
            with pytest.raises(TypeError, match="SparseTensor"):
                m.nn.ctc_loss([[1]], x, [3, 3])


@pytest.mark.parametrize("blank_index", [None, 0, 3, -1])
def test_ctc_loss_v2_dense_and_sparse_labels(tf1, blank_index):
    logits = _rand(8, 4, 6, seed=82, low=-3, high=3)
    dense = np.array([[1, 1, 3, 0], [2, 0, 0, 0], [4, 5, 4, 4], [1, 2, 0, 0]], np.int32)
    label_length = np.array([3, 1, 4, 2], np.int32)
    if blank_index is not None:
        # The blank is never a label.
        blank = blank_index % 6
        dense = np.where(dense == blank, (blank + 1) % 6, dense)
    _run_both(
        tf1,
        lambda m, x: m.nn.ctc_loss_v2(dense, x, label_length, _CTC_LENGTHS, blank_index=blank_index),
        [logits],
        rtol=1e-4,
        atol=1e-4,
    )
    if blank_index is not None:

        def sparse_build(m, x):
            rows = [list(r[:n]) for r, n in zip(dense.tolist(), label_length)]
            return m.nn.ctc_loss_v2(_ctc_sparse(m, rows), x, None, _CTC_LENGTHS, blank_index=blank_index)

        _run_both(tf1, sparse_build, [logits], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("merge", [True, False])
@pytest.mark.parametrize("blank_index", [None, 0])
def test_ctc_greedy_decoder(tf1, merge, blank_index):
    # Rounded logits make ties and repeats.
    logits = np.round(_rand(7, 3, 4, seed=83, low=-1, high=1) * 2) / 2
    lengths = np.array([7, 4, 0], np.int32)
    results = []
    for m in (tf1, tf):
        with m.Graph().as_default(), m.Session() as sess:
            (decoded,), log_prob = m.nn.ctc_greedy_decoder(logits, lengths, merge, blank_index=blank_index)
            value, lp = sess.run([decoded, log_prob])
            results.append((value.indices, value.values, value.dense_shape, lp))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b)


def test_collapse_repeated_and_ctc_unique_labels(tf1):
    labels = np.array([[1, 1, 2, 2, 3], [4, 4, 4, 1, 1], [2, 3, 3, 3, 2]], np.int32)
    lengths = np.array([5, 3, 4], np.int32)
    # Fed, not constants: TF's shape inference would evaluate the constant labels and know the collapsed length.
    results = []
    for m in (tf1, tf):
        with m.Graph().as_default(), m.Session() as sess:
            a, n = m.placeholder(m.int32, [3, 5]), m.placeholder(m.int32, [3])
            collapsed, new_lengths = m.nn.collapse_repeated(a, n)
            results.append((collapsed.shape.as_list(), *sess.run([collapsed, new_lengths], {a: labels, n: lengths})))
    assert results[0][0] == results[1][0]
    for a, b in zip(results[0][1:], results[1][1:]):
        np.testing.assert_array_equal(a, b)
    _run_both(tf1, lambda m, a: list(m.nn.ctc_unique_labels(a)), [labels.astype(np.int64)])


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize(
    "strides,rates", [([1, 1, 1, 1], [1, 1, 1, 1]), ([1, 2, 1, 1], [1, 1, 1, 1]), ([1, 1, 1, 1], [1, 2, 3, 1])]
)
def test_dilation2d_and_erosion2d(tf1, padding, strides, rates):
    # Rounded values make ties, which both must give to the same element.
    x = np.round(_rand(2, 7, 8, 3, seed=90) * 2) / 2
    f = np.round(_rand(3, 2, 3, seed=91) * 2) / 2
    _run_both(tf1, lambda m, a, b: m.nn.dilation2d(a, b, strides, rates, padding), [x, f])
    _run_both(tf1, lambda m, a, b: m.nn.erosion2d(a, b, strides, rates, padding), [x, f])
