"""Random ops, seeds and initializers: reproducibility, statistics, graph layout and errors."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors
from dtf_notebook.framework import op_registry, random_seed
from dtf_notebook.ops import init_ops, random_ops, variable_scope

N = 100_000

# name -> builder(shape, seed); each returns a float32 (or int32) tensor of `shape`.
RANDOM_BUILDERS = {
    "random_normal": lambda shape, seed: tf.random_normal(shape, mean=1.0, stddev=2.0, seed=seed),
    "truncated_normal": lambda shape, seed: tf.truncated_normal(shape, stddev=0.5, seed=seed),
    "random_uniform": lambda shape, seed: tf.random_uniform(shape, seed=seed),
    "random_uniform_scaled": lambda shape, seed: tf.random_uniform(shape, -3.0, 5.0, seed=seed),
    "random_uniform_int": lambda shape, seed: tf.random_uniform(shape, 0, 1000, dtype=tf.int32, seed=seed),
    "random_shuffle": lambda shape, seed: tf.random_shuffle(np.arange(64), seed=seed),
    "multinomial": lambda shape, seed: tf.multinomial(np.zeros((4, 50), np.float32), 16, seed=seed),
}


def _draw(build, graph_seed=None, op_seed=None, runs=1, shape=(64,)):
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        x = build(list(shape), op_seed)
        with tf.Session() as sess:
            return [sess.run(x) for _ in range(runs)]


# ---- seeds ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(RANDOM_BUILDERS))
@pytest.mark.parametrize("graph_seed, op_seed", [(None, 7), (3, None), (3, 7)])
def test_seeded_ops_repeat_across_fresh_graphs_and_sessions(name, graph_seed, op_seed):
    build = RANDOM_BUILDERS[name]
    first = _draw(build, graph_seed, op_seed, runs=2)
    second = _draw(build, graph_seed, op_seed, runs=2)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], first[1]), "successive runs of one session must differ"


@pytest.mark.parametrize("name", sorted(RANDOM_BUILDERS))
def test_unseeded_ops_differ_across_sessions(name):
    a, b = _draw(RANDOM_BUILDERS[name])[0], _draw(RANDOM_BUILDERS[name])[0]
    assert not np.array_equal(a, b)


def test_different_op_seeds_give_different_values():
    a = _draw(RANDOM_BUILDERS["random_normal"], op_seed=1)[0]
    b = _draw(RANDOM_BUILDERS["random_normal"], op_seed=2)[0]
    assert not np.array_equal(a, b)


def test_generator_survives_new_plans_in_one_session():
    # A new fetch list compiles a new plan; the node's sequence must continue, not restart.
    with tf.Graph().as_default():
        x = tf.random_uniform([8], seed=1)
        y = x * 1.0
        with tf.Session() as sess:
            first = sess.run(x)
            second, _ = sess.run([x, y])
    assert not np.array_equal(first, second)


def test_get_seed_rules():
    with tf.Graph().as_default() as g:
        assert tf.get_seed(None) == (None, None)
        assert tf.get_seed(5) == (random_seed.DEFAULT_GRAPH_SEED, 5)
        assert tf.get_seed(2**31 + 4) == (random_seed.DEFAULT_GRAPH_SEED, 5)
        tf.set_random_seed(9)
        assert g.seed == 9
        assert tf.get_seed(4) == (9, 4)
        tf.constant(1.0)
        tf.constant(2.0)
        assert tf.get_seed(None) == (9, 2)  # the op count
        tf.set_random_seed(0)
        assert tf.get_seed(0) == (0, 2**31 - 1)  # (0, 0) would mean "unseeded" to the kernels


def test_seed_attrs_follow_get_seed():
    with tf.Graph().as_default():
        a = tf.random_normal([2], seed=3)
        tf.set_random_seed(11)
        b = tf.random_uniform([2])
    rnd = a.op.inputs[0].op.inputs[0].op
    assert (rnd.type, rnd.get_attr("seed"), rnd.get_attr("seed2")) == ("RandomStandardNormal", 87654321, 3)
    assert (b.op.type, b.op.get_attr("seed"), b.op.get_attr("seed2")) == ("RandomUniform", 11, 7)  # 7 ops existed


# ---- statistics -------------------------------------------------------------------------------
def _sample(build):
    with tf.Graph().as_default():
        t = build()
        with tf.Session() as sess:
            return sess.run(t), t


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16])
def test_random_normal_statistics(dtype):
    v, t = _sample(lambda: tf.random_normal([N], mean=3.0, stddev=2.0, dtype=dtype, seed=1))
    assert t.dtype is dtype and v.dtype == dtype.np_dtype and v.shape == (N,)
    v = v.astype(np.float64)
    assert abs(v.mean() - 3.0) < 0.03 and abs(v.std() - 2.0) < 0.03


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16])
def test_truncated_normal_never_beyond_two_sigma(dtype):
    v, _ = _sample(lambda: tf.truncated_normal([N], mean=-1.0, stddev=0.5, dtype=dtype, seed=2))
    v = v.astype(np.float64)
    assert np.all(np.abs(v + 1.0) <= 1.0 + 1e-3)
    assert abs(v.mean() + 1.0) < 0.01
    assert abs(v.std() - 0.5 * 0.87962566103423978) < 0.01


@pytest.mark.parametrize("dtype", [tf.float32, tf.float64, tf.float16, tf.bfloat16])
def test_random_uniform_statistics(dtype):
    v, _ = _sample(lambda: tf.random_uniform([N], -2.0, 6.0, dtype=dtype, seed=3))
    v = v.astype(np.float64)
    assert v.min() >= -2.0 and v.max() < 6.0
    assert abs(v.mean() - 2.0) < 0.05 and abs(v.std() - 8 / math.sqrt(12)) < 0.05


@pytest.mark.parametrize("dtype", [tf.float16, tf.bfloat16])
def test_random_uniform_unit_range_is_half_open_in_16_bit(dtype):
    v, _ = _sample(lambda: tf.random_uniform([N], dtype=dtype, seed=4))
    assert v.astype(np.float64).max() < 1.0 and v.astype(np.float64).min() >= 0.0


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_random_uniform_int(dtype):
    v, t = _sample(lambda: tf.random_uniform([N], -3, 4, dtype=dtype, seed=5))
    assert t.op.type == "RandomUniformInt" and t.op.name == "random_uniform" and v.dtype == dtype.np_dtype
    assert set(np.unique(v).tolist()) == set(range(-3, 4))


def test_random_shuffle_is_a_permutation_of_rows():
    data = np.arange(20).reshape(10, 2)
    v, t = _sample(lambda: tf.random_shuffle(data, seed=1))
    assert t.shape.as_list() == [10, 2]
    assert sorted(map(tuple, v.tolist())) == sorted(map(tuple, data.tolist()))
    strings, _ = _sample(lambda: tf.random_shuffle(tf.constant([b"a", b"b", b"c"]), seed=2))
    assert sorted(strings.tolist()) == [b"a", b"b", b"c"]
    scalar, _ = _sample(lambda: tf.random_shuffle(5.0))
    assert scalar == 5.0


def test_multinomial_frequencies():
    probs = np.array([0.1, 0.2, 0.7])
    v, t = _sample(lambda: tf.multinomial(np.log([probs]).astype(np.float32), N, seed=3))
    assert t.dtype is tf.int64 and t.shape.as_list() == [1, N]
    np.testing.assert_allclose(np.bincount(v[0], minlength=3) / N, probs, atol=0.01)
    v32, t32 = _sample(lambda: tf.multinomial([[0.0, 0.0]], 4, output_dtype=tf.int32))
    assert t32.op.name == "multinomial/Multinomial" and v32.dtype == np.int32
    empty, _ = _sample(lambda: tf.multinomial([[0.0, 0.0]], 0))
    assert empty.shape == (1, 0)


# ---- shapes -------------------------------------------------------------------------------------
def test_shapes_from_tensors_lists_and_placeholders():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [], name="n")
        dims = tf.placeholder(tf.int32, [None], name="dims")
        fully = tf.random_normal(tf.TensorShape([2, 4]))
        scalar = tf.random_uniform([])
        packed = tf.random_uniform([n, 3])
        dynamic = tf.random_normal(dims)
        int64_shape = tf.truncated_normal(np.array([3], np.int64))
        from_dims = tf.random_uniform((fully.shape[1], 2))
        assert from_dims.shape.as_list() == [4, 2]
        assert fully.shape.as_list() == [2, 4] and scalar.shape.as_list() == []
        assert packed.shape.as_list() == [None, 3] and dynamic.shape.ndims is None
        assert int64_shape.op.inputs[0].op.inputs[0].op.get_attr("T") is tf.int64
        with tf.Session() as sess:
            a, b, c = sess.run([packed, dynamic, int64_shape], {n: 5, dims: [2, 0, 3]})
            assert a.shape == (5, 3) and b.shape == (2, 0, 3) and c.shape == (3,)
            with pytest.raises(errors.InvalidArgumentError, match="negative"):
                sess.run(dynamic, {dims: [-1]})


def test_graph_layout_matches_tf():
    with tf.Graph().as_default() as g:
        tf.random_normal([2, 3], seed=1)
        tf.random_uniform([2])
        tf.random_uniform([2], 0.0, 10.0)
        tf.random_uniform([2], maxval=10)
        tf.truncated_normal([2], name="tn")
    got = [(op.name, op.type) for op in g.get_operations()]
    assert got == [
        ("random_normal/shape", "Const"),
        ("random_normal/mean", "Const"),
        ("random_normal/stddev", "Const"),
        ("random_normal/RandomStandardNormal", "RandomStandardNormal"),
        ("random_normal/mul", "Mul"),
        ("random_normal", "Add"),
        ("random_uniform/shape", "Const"),
        ("random_uniform/RandomUniform", "RandomUniform"),
        ("random_uniform_1/shape", "Const"),
        ("random_uniform_1/min", "Const"),
        ("random_uniform_1/max", "Const"),
        ("random_uniform_1/RandomUniform", "RandomUniform"),
        ("random_uniform_1/sub", "Sub"),
        ("random_uniform_1/mul", "Mul"),
        ("random_uniform_1", "Add"),
        ("random_uniform_2/shape", "Const"),
        ("random_uniform_2/min", "Const"),
        ("random_uniform_2/max", "Const"),
        ("random_uniform_2/RandomUniform", "RandomUniform"),
        ("random_uniform_2/Mul", "Mul"),
        ("tn/shape", "Const"),
        ("tn/mean", "Const"),
        ("tn/stddev", "Const"),
        ("tn/TruncatedNormal", "TruncatedNormal"),
        ("tn/mul", "Mul"),
        ("tn", "Add"),
    ]


@pytest.mark.parametrize(
    "op_type",
    ["RandomStandardNormal", "TruncatedNormal", "RandomUniform", "RandomUniformInt", "RandomShuffle", "Multinomial"],
)
def test_random_ops_are_stateful_and_not_differentiable(op_type):
    op_def = op_registry.get(op_type)
    assert op_def.stateful and op_def.grad is op_registry.NOT_DIFFERENTIABLE


def test_gradient_flows_through_mean_and_stddev_only():
    with tf.Graph().as_default():
        mean = tf.constant(1.0)
        x = tf.random_normal([3], mean=mean, seed=1)
        (g,) = tf.gradients(tf.reduce_sum(x), [mean])
        with tf.Session() as sess:
            assert sess.run(g) == pytest.approx(3.0)


# ---- errors -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "build, exc, message",
    [
        (
            lambda: tf.random_normal([2], dtype=tf.int32),
            TypeError,
            "Value passed to parameter 'dtype' has DataType int32 not in list of allowed values: float16, bfloat16, "
            "float32, float64",
        ),
        (lambda: tf.truncated_normal([2], dtype=tf.bool), TypeError, "DataType bool not in list"),
        (
            lambda: tf.random_normal([2.5]),
            TypeError,
            "Value passed to parameter 'shape' has DataType float32 not in list of allowed values: int32, int64",
        ),
        (lambda: tf.random_normal(tf.constant([2.0])), TypeError, "parameter 'shape' has DataType float32"),
        (lambda: tf.random_normal(tf.TensorShape([None, 2])), ValueError, "partially known"),
        (lambda: tf.random_uniform([2], dtype=tf.int32), ValueError, "Must specify maxval for integer dtype tf.int32"),
        (
            lambda: tf.random_uniform([2], maxval=3, dtype=tf.int16),
            ValueError,
            "Argument `dtype` got invalid value <dtype: 'int16'>. Accepted dtypes are (tf.float16, tf.bfloat16, "
            "tf.float32, tf.float64, tf.int32, tf.int64).",
        ),
        (lambda: tf.random_uniform([2], [0, 1], 3, dtype=tf.int32), ValueError, "minval must be 0-D"),
        (
            lambda: tf.multinomial([[1.0, 2.0]], 2, output_dtype=tf.float32),
            ValueError,
            "Argument `dtype` got invalid value <dtype: 'float32'>. Accepted dtypes are (tf.int32, tf.int64).",
        ),
        (lambda: tf.multinomial([1.0, 2.0], 2), ValueError, "logits should be a matrix"),
        (lambda: tf.random_normal([[2, 3]]), ValueError, "Shape must be rank 1 but is rank 2"),
    ],
)
def test_bad_arguments(build, exc, message):
    with tf.Graph().as_default(), pytest.raises(exc, match=_literal(message)):
        build()


def _literal(message: str) -> str:
    return re.escape(message)


def test_uniform_int_needs_minval_below_maxval_at_run_time():
    with tf.Graph().as_default():
        lo = tf.placeholder(tf.int32, [])
        x = tf.random_uniform([3], lo, 5, dtype=tf.int32)
        with tf.Session() as sess, pytest.raises(errors.InvalidArgumentError, match="Need minval < maxval, got 5 >= 5"):
            sess.run(x, {lo: 5})


# ---- initializers -------------------------------------------------------------------------------
def _init_value(init, shape, dtype=None, partition_info=None):
    with tf.Graph().as_default():
        t = init(shape, dtype, partition_info=partition_info) if dtype else init(shape, partition_info=partition_info)
        with tf.Session() as sess:
            return sess.run(t), t


@pytest.mark.parametrize(
    "init, dtype, expected",
    [
        (tf.zeros_initializer(), tf.float32, np.zeros((2, 3), np.float32)),
        (tf.zeros_initializer(), tf.int64, np.zeros((2, 3), np.int64)),
        (tf.zeros_initializer(dtype=tf.bool), None, np.zeros((2, 3), bool)),
        (tf.ones_initializer(), tf.int32, np.ones((2, 3), np.int32)),
        (tf.ones_initializer(), None, np.ones((2, 3), np.float32)),
        (tf.constant_initializer(2.5), tf.float64, np.full((2, 3), 2.5)),
        (tf.constant_initializer([1, 2, 3, 4, 5, 6]), None, np.arange(1, 7, dtype=np.float32).reshape(2, 3)),
        (tf.constant_initializer([1, 2]), tf.int32, np.array([[1, 2, 2], [2, 2, 2]], np.int32)),
        (init_ops.Identity(3.0), None, 3 * np.eye(2, 3, dtype=np.float32)),
    ],
)
def test_deterministic_initializers(init, dtype, expected):
    value, t = _init_value(init, [2, 3], dtype)
    assert t.shape.as_list() == [2, 3]
    np.testing.assert_array_equal(value, expected)
    assert value.dtype == expected.dtype


def test_zeros_initializer_of_large_and_string_shapes():
    value, _ = _init_value(tf.zeros_initializer(), [300, 400])
    assert value.shape == (300, 400) and not value.any()
    strings, _ = _init_value(tf.zeros_initializer(), [2], tf.string)
    assert strings.tolist() == [b"", b""]


def test_constant_initializer_verify_shape_and_type():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match=_literal("Expected Tensor's shape: (2, 2), got (3,).")):
            tf.constant_initializer([1, 2, 3], verify_shape=True)([2, 2])
        with pytest.raises(TypeError, match="Invalid type for initial value"):
            tf.constant_initializer({"a": 1})


@pytest.mark.parametrize(
    "init, mean, std, bound",
    [
        (tf.random_normal_initializer(1.0, 0.5, seed=1), 1.0, 0.5, None),
        (tf.truncated_normal_initializer(0.0, 2.0, seed=1), 0.0, 2.0 * 0.87962566103423978, 4.0),
        (tf.random_uniform_initializer(-1.0, 3.0, seed=1), 1.0, 4 / math.sqrt(12), 3.0),
        (
            tf.uniform_unit_scaling_initializer(2.0, seed=1),
            0.0,
            2 * math.sqrt(3 / 400) / math.sqrt(3),
            2 * math.sqrt(3 / 400),
        ),
    ],
)
def test_random_initializer_statistics(init, mean, std, bound):
    value, t = _init_value(init, [400, 250])
    assert t.dtype is tf.float32 and value.shape == (400, 250)
    assert abs(value.mean() - mean) < 0.02 and abs(value.std() - std) / std < 0.02
    if bound is not None:
        assert np.abs(value).max() <= bound + 1e-6


def _fans(shape):
    return init_ops._compute_fans(shape)


@pytest.mark.parametrize("shape", [[300, 200], [3, 3, 40, 60], [50_000]])
@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg"])
@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "untruncated_normal", "uniform"])
def test_variance_scaling_modes(shape, mode, distribution):
    fan_in, fan_out = _fans(shape)
    n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
    init = tf.variance_scaling_initializer(2.0, mode=mode, distribution=distribution, seed=3)
    value, _ = _init_value(init, shape)
    target_std = math.sqrt(2.0 / n)
    assert abs(value.std() - target_std) / target_std < 0.05
    if distribution == "uniform":
        assert np.abs(value).max() <= math.sqrt(3 * 2.0 / n) + 1e-6
    elif distribution != "untruncated_normal":
        assert np.abs(value).max() <= 2 * target_std / 0.87962566103423978 + 1e-5


def test_compute_fans():
    assert _fans([]) == (1, 1)
    assert _fans([7]) == (7, 7)
    assert _fans([3, 5]) == (3, 5)
    assert _fans([2, 3, 4, 5]) == (24, 30)
    assert _fans(tf.TensorShape([3, 5])) == (3, 5)


def test_glorot_initializers_respect_their_bounds():
    limit = math.sqrt(6 / (200 + 300))
    value, _ = _init_value(tf.glorot_uniform_initializer(seed=1), [200, 300])
    assert np.abs(value).max() <= limit and np.abs(value).max() > 0.99 * limit
    assert abs(value.std() - limit / math.sqrt(3)) / (limit / math.sqrt(3)) < 0.02
    normal, _ = _init_value(tf.glorot_normal_initializer(seed=1), [200, 300])
    assert abs(normal.std() - math.sqrt(2 / 500)) / math.sqrt(2 / 500) < 0.03


@pytest.mark.parametrize(
    "factory, scale, mode, distribution",
    [
        (init_ops.lecun_normal, 1.0, "fan_in", "truncated_normal"),
        (init_ops.lecun_uniform, 1.0, "fan_in", "uniform"),
        (init_ops.he_normal, 2.0, "fan_in", "truncated_normal"),
        (init_ops.he_uniform, 2.0, "fan_in", "uniform"),
    ],
)
def test_named_variance_scaling_factories(factory, scale, mode, distribution):
    config = factory(seed=4).get_config()
    assert config == {"scale": scale, "mode": mode, "distribution": distribution, "seed": 4, "dtype": "float32"}


def test_variance_scaling_uses_the_full_shape_of_a_partition():
    info = variable_scope._PartitionInfo(full_shape=[400, 100], var_offset=[200, 0])
    value, _ = _init_value(
        tf.variance_scaling_initializer(1.0, "fan_in", "uniform", seed=1), [200, 100], partition_info=info
    )
    assert value.shape == (200, 100) and np.abs(value).max() <= math.sqrt(3 / 400) + 1e-7


def test_identity_initializer_of_a_partition():
    info = variable_scope._PartitionInfo(full_shape=[4, 4], var_offset=[2, 0])
    value, _ = _init_value(init_ops.Identity(), [2, 4], partition_info=info)
    np.testing.assert_array_equal(value, np.eye(4, dtype=np.float32)[2:])
    with tf.Graph().as_default(), pytest.raises(ValueError, match="two-dimensional"):
        init_ops.Identity()([2, 2, 2])


@pytest.mark.parametrize(
    "init",
    [
        tf.zeros_initializer(tf.int32),
        tf.ones_initializer(),
        tf.constant_initializer([1.0, 2.0]),
        tf.random_uniform_initializer(-1, 1, seed=3),
        tf.random_normal_initializer(0.5, 2.0, seed=1),
        tf.truncated_normal_initializer(stddev=3.0),
        tf.uniform_unit_scaling_initializer(1.3),
        tf.variance_scaling_initializer(3.0, "fan_out", "uniform", seed=9),
        tf.glorot_uniform_initializer(seed=2),
        tf.glorot_normal_initializer(),
        init_ops.Identity(0.5),
    ],
)
def test_get_config_round_trips(init):
    clone = type(init).from_config(init.get_config())
    assert clone.get_config() == init.get_config()


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: tf.variance_scaling_initializer(0.0), "Argument `scale` must be a positive float. Received: 0.0"),
        (
            lambda: tf.variance_scaling_initializer(mode="fan"),
            "Argument `mode` should be one of ('fan_in', 'fan_out', 'fan_avg'). Received: fan",
        ),
        (lambda: tf.variance_scaling_initializer(distribution="cauchy"), "Received: cauchy"),
        (
            lambda: tf.random_normal_initializer(dtype=tf.int32),
            "Argument `dtype` is expected to be floating point. Received: <dtype: 'int32'>.",
        ),
        (lambda: tf.glorot_uniform_initializer(dtype=tf.int64), "expected to be floating point"),
    ],
)
def test_initializer_argument_errors(build, message):
    with pytest.raises(ValueError, match=_literal(message)):
        build()


def test_initializer_base_class_is_abstract():
    with pytest.raises(TypeError):
        init_ops.Initializer()


def test_initializers_namespace_table():
    assert init_ops.INITIALIZERS["glorot_uniform"] is tf.glorot_uniform_initializer
    assert init_ops.INITIALIZERS["he_normal"](seed=1).get_config()["scale"] == 2.0
    assert not hasattr(tf, "Zeros"), "the classes are not flat TF1 names"


def test_random_uniform_of_an_initializer_uses_its_seed():
    a, _ = _init_value(tf.random_uniform_initializer(seed=5), [10])
    b, _ = _init_value(tf.random_uniform_initializer(seed=5), [10])
    np.testing.assert_array_equal(a, b)


def test_random_ops_module_names():
    assert set(random_ops.__all__) <= set(dir(tf))
    assert set(init_ops.__all__) <= set(dir(tf))


@pytest.mark.tf_oracle
@pytest.mark.parametrize(
    "name",
    [
        "zeros_initializer",
        "ones_initializer",
        "constant_initializer",
        "random_uniform_initializer",
        "random_normal_initializer",
        "truncated_normal_initializer",
        "uniform_unit_scaling_initializer",
        "variance_scaling_initializer",
        "glorot_uniform_initializer",
        "glorot_normal_initializer",
    ],
)
def test_initializer_configs_match_tf(name):
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    assert getattr(tf, name)().get_config() == getattr(tf1, name)().get_config()


@pytest.mark.tf_oracle
def test_get_seed_matches_tf_without_graph_seed():
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    with tf1.Graph().as_default():
        expected = [tf1.get_seed(s) for s in (None, 0, 5, 2**31 + 4)]
    with tf.Graph().as_default():
        assert [tf.get_seed(s) for s in (None, 0, 5, 2**31 + 4)] == expected
