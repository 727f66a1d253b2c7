"""Every dataset source and transformation, and combinations of them, against real TensorFlow 1: the element
sequences (values, dtypes, nesting), ``output_types``/``output_shapes``, ``get_next``'s static shapes, and the error
class that ends a sequence."""

from __future__ import annotations

import numpy as np
import pytest

from tests.data.oracle import compare, real_tf, run

pytestmark = pytest.mark.tf_oracle

_ARRAY = np.arange(24, dtype=np.float32).reshape(6, 4)

CASES = {
    # sources
    "slices_matrix": lambda m: m.data.Dataset.from_tensor_slices(_ARRAY),
    "slices_list": lambda m: m.data.Dataset.from_tensor_slices([1, 2, 3]),
    "slices_strings": lambda m: m.data.Dataset.from_tensor_slices(["a", "bb", ""]),
    "slices_nested": lambda m: m.data.Dataset.from_tensor_slices(
        ([1, 2], {"b": ["x", "y"], "a": [[1.0, 1.5], [2.0, 2.5]]})
    ),
    "slices_bool_int64": lambda m: m.data.Dataset.from_tensor_slices(
        (np.array([True, False]), np.array([7, 8], np.int64))
    ),
    "tensors_scalar": lambda m: m.data.Dataset.from_tensors(3.5),
    "tensors_nested": lambda m: m.data.Dataset.from_tensors(([1, 2], {"s": "text"})),
    "range_stop": lambda m: m.data.Dataset.range(5),
    "range_start_stop": lambda m: m.data.Dataset.range(2, 6),
    "range_negative_step": lambda m: m.data.Dataset.range(10, 0, -3),
    "range_empty": lambda m: m.data.Dataset.range(3, 3),
    "range_int32": lambda m: m.data.Dataset.range(3, output_type=m.int32),
    "zip_tuple": lambda m: m.data.Dataset.zip((m.data.Dataset.range(3), m.data.Dataset.range(10, 20))),
    "zip_nested": lambda m: m.data.Dataset.zip(
        (m.data.Dataset.range(4), {"k": m.data.Dataset.from_tensor_slices(["a", "b", "c"])})
    ),
    "concatenate": lambda m: m.data.Dataset.range(3).concatenate(m.data.Dataset.range(7, 9)),
    "concatenate_shapes": lambda m: m.data.Dataset.from_tensors([1, 2]).concatenate(
        m.data.Dataset.from_tensors([3, 4, 5])
    ),
    # map
    "map_scalar": lambda m: m.data.Dataset.range(5).map(lambda x: x * 2 + 1),
    "map_tuple_out": lambda m: m.data.Dataset.range(4).map(lambda x: (x, m.cast(x, m.float32) / 2, "s")),
    "map_list_out": lambda m: m.data.Dataset.range(3).map(lambda x: [x, x + 1]),
    "map_tuple_args": lambda m: m.data.Dataset.from_tensor_slices(([1, 2], [3, 4])).map(lambda a, b: a * b),
    "map_dict_arg": lambda m: m.data.Dataset.from_tensor_slices({"a": [1, 2], "b": [5, 3]}).map(
        lambda d: {"diff": d["a"] - d["b"], "a": d["a"]}
    ),
    "map_python_constants": lambda m: m.data.Dataset.range(2).map(lambda x: (x, 3, 2.5, "c")),
    "map_captures_constant": lambda m: m.data.Dataset.range(4).map(
        lambda x, c=None: x * m.constant(10, m.int64, name="scale")
    ),
    "map_strings": lambda m: m.data.Dataset.from_tensor_slices(["1.5", "2.25"]).map(
        lambda s: (m.strings.to_number(s), m.strings.length(s))
    ),
    "map_cond": lambda m: m.data.Dataset.range(6).map(lambda x: m.cond(x > 2, lambda: x * 10, lambda: -x)),
    "map_parallel": lambda m: m.data.Dataset.range(40).map(lambda x: x * x, num_parallel_calls=4),
    "map_autotune": lambda m: m.data.Dataset.range(10).map(lambda x: x + 1, num_parallel_calls=-1),
    "map_error_mid_sequence": lambda m: m.data.Dataset.range(4).map(
        lambda x: m.debugging.check_numerics(1.0 / m.cast(x - 2, m.float32), "boom")
    ),
    # filter, flat_map, interleave
    "filter": lambda m: m.data.Dataset.range(10).filter(lambda x: m.equal(x % 3, 0)),
    "filter_tuple": lambda m: m.data.Dataset.from_tensor_slices(([1, 2, 3, 4], ["a", "b", "c", "d"])).filter(
        lambda n, s: n > 2
    ),
    "flat_map": lambda m: m.data.Dataset.range(4).flat_map(lambda x: m.data.Dataset.range(x)),
    "flat_map_slices": lambda m: m.data.Dataset.from_tensor_slices([[1, 2], [3, 4]]).flat_map(
        lambda row: m.data.Dataset.from_tensor_slices(row * 10)
    ),
    "interleave_block2": lambda m: m.data.Dataset.range(1, 6).interleave(
        lambda x: m.data.Dataset.from_tensors(x).repeat(x), cycle_length=2, block_length=2
    ),
    "interleave_cycle3": lambda m: m.data.Dataset.range(1, 6).interleave(
        lambda x: m.data.Dataset.range(x * 10, x * 10 + x), cycle_length=3, block_length=1
    ),
    "interleave_nested_map": lambda m: m.data.Dataset.range(3).interleave(
        lambda x: m.data.Dataset.range(2).map(lambda y: y + x * 100), cycle_length=2
    ),
    # batching
    "batch": lambda m: m.data.Dataset.range(7).batch(3),
    "batch_drop_remainder": lambda m: m.data.Dataset.range(7).batch(3, drop_remainder=True),
    "batch_strings": lambda m: m.data.Dataset.from_tensor_slices(["a", "b", "c"]).batch(2),
    "batch_nested": lambda m: m.data.Dataset.from_tensor_slices(({"x": _ARRAY}, np.arange(6))).batch(4),
    "batch_of_batches": lambda m: m.data.Dataset.range(10).batch(2).batch(2),
    "batch_shape_mismatch": lambda m: m.data.Dataset.range(5).map(lambda x: m.fill([x], x)).batch(2),
    "batch_size_zero": lambda m: m.data.Dataset.range(5).batch(0),
    "padded_batch": lambda m: (
        m.data.Dataset.range(5)
        .map(lambda x: m.fill([x], x))
        .padded_batch(2, padded_shapes=[None], padding_values=m.constant(-1, m.int64))
    ),
    "padded_batch_defaults": lambda m: (
        m.data.Dataset.range(5).map(lambda x: (m.fill([x], x), m.as_string(x))).padded_batch(2)
    ),
    "padded_batch_fixed": lambda m: m.data.Dataset.range(4).map(lambda x: m.fill([x], x)).padded_batch(3, [4]),
    "padded_batch_strings": lambda m: (
        m.data.Dataset.range(4).map(lambda x: m.fill([x], "s")).padded_batch(2, [None], padding_values="pad")
    ),
    "padded_batch_too_small": lambda m: m.data.Dataset.range(5).map(lambda x: m.fill([x], x)).padded_batch(2, [2]),
    # map + batch (run once per batch when vectorized)
    "map_batch_vectorized": lambda m: (
        m.data.Dataset.from_tensor_slices(np.arange(40, dtype=np.uint8).reshape(10, 4))
        .map(lambda x: m.reshape(m.cast(x, m.float32) / 255.0, [2, 2]))
        .batch(4)
    ),
    "map_batch_axes": lambda m: (
        m.data.Dataset.range(10)
        .map(
            lambda x: (
                m.one_hot(x % 3, 3),
                m.expand_dims(x, 0),
                m.reduce_sum(m.stack([x, x])),
                m.transpose(m.reshape(m.range(6, dtype=m.int64) + x, [2, 3])),
            )
        )
        .batch(4, drop_remainder=True)
    ),
    "map_batch_slices": lambda m: (
        m.data.Dataset.from_tensor_slices(_ARRAY)
        .map(lambda v: (v[1:3], v[-1], m.concat([v, v * 2], 0), m.squeeze(m.reshape(v, [1, 4]))))
        .batch(4)
    ),
    "map_batch_captured_unbatched": lambda m: (
        m.data.Dataset.range(5).map(lambda x: (x, m.constant([1.0, 2.0]))).batch(2)
    ),
    "map_batch_ragged_falls_back": lambda m: (
        m.data.Dataset.range(1, 5).map(lambda x: m.reduce_sum(m.range(x))).batch(3)
    ),
    # order, repetition, selection
    "repeat": lambda m: m.data.Dataset.range(3).repeat(2),
    "repeat_zero": lambda m: m.data.Dataset.range(3).repeat(0),
    "take_skip": lambda m: m.data.Dataset.range(10).skip(2).take(5),
    "take_all_skip_all": lambda m: m.data.Dataset.range(4).take(-1).concatenate(m.data.Dataset.range(4).skip(-1)),
    "shard": lambda m: m.data.Dataset.range(10).shard(3, 1),
    "shard_bad_index": lambda m: m.data.Dataset.range(10).shard(3, 5),
    "shard_zero_shards": lambda m: m.data.Dataset.range(10).shard(0, 0),
    "prefetch": lambda m: m.data.Dataset.range(10).map(lambda x: x * 2).prefetch(3),
    "prefetch_autotune": lambda m: m.data.Dataset.range(5).prefetch(-1),
    "cache_memory": lambda m: m.data.Dataset.range(4).map(lambda x: x + 1).cache().repeat(3),
    "apply": lambda m: m.data.Dataset.range(6).apply(lambda ds: ds.skip(1).batch(2)),
    "padded_batch_dict": lambda m: (
        m.data.Dataset.range(1, 5)
        .map(lambda x: {"v": m.fill([x], x), "s": m.as_string(x)})
        .padded_batch(
            2,
            padded_shapes={"v": [None], "s": []},
            padding_values={"v": m.constant(9, m.int64), "s": "-"},
            drop_remainder=True,
        )
    ),
    "batch_size_fed": lambda m: (lambda p: (m.data.Dataset.range(7).batch(p), {p: 3}))(m.placeholder(m.int64, [])),
    "map_batch_strings": lambda m: (
        m.data.Dataset.from_tensor_slices(["a b", " c "])
        .map(lambda s: (m.strings.strip(s), m.strings.length(s), m.strings.regex_replace(s, " ", "_")))
        .batch(2)
    ),
    # combinations
    "combo_zip_one_dataset_twice": lambda m: (lambda d: m.data.Dataset.zip((d, d)))(m.data.Dataset.range(3)),
    "combo_nested_structures": lambda m: m.data.Dataset.range(3).map(lambda x: ((x, (x + 1, "a")), {"z": x})),
    "combo_flat_map_zip": lambda m: m.data.Dataset.range(3).flat_map(
        lambda x: m.data.Dataset.zip((m.data.Dataset.range(x), m.data.Dataset.range(x).map(lambda y: y * 2)))
    ),
    "combo_batches_concatenated_filtered": lambda m: (
        m.data.Dataset.range(3)
        .batch(2)
        .concatenate(m.data.Dataset.range(4).batch(3))
        .filter(lambda b: m.reduce_sum(b) > 0)
    ),
    "combo_pipeline": lambda m: (
        m.data.Dataset.zip((m.data.Dataset.range(20), m.data.Dataset.range(20).map(lambda x: m.as_string(x))))
        .filter(lambda a, b: a % 2 == 0)
        .map(lambda a, b: {"n": a, "s": b})
        .batch(3)
        .repeat(2)
        .prefetch(2)
    ),
    "combo_shard_flat_map_batch": lambda m: (
        m.data.Dataset.range(12)
        .shard(2, 0)
        .flat_map(lambda x: m.data.Dataset.from_tensors(x).repeat(2))
        .batch(5, drop_remainder=True)
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_elements_match_tf(name):
    compare(CASES[name])


def test_one_shot_iterators_match_tf():
    for name in ("map_tuple_out", "interleave_block2", "padded_batch_defaults", "combo_pipeline"):
        compare(CASES[name], iterator="one_shot")


def test_shuffle_is_a_permutation_fixed_by_its_seed():
    tf1 = real_tf()
    import dtf_notebook.compat.v1 as dtf

    def build(m):
        return m.data.Dataset.range(50).shuffle(10, seed=3)

    ours = run(dtf, build)["elements"]
    again = run(dtf, build)["elements"]
    theirs = run(tf1, build)["elements"]
    assert sorted(int(x) for x in ours) == sorted(int(x) for x in theirs) == list(range(50))
    assert [int(x) for x in ours] == [int(x) for x in again]  # seeded: the same order every run
    assert [int(x) for x in ours] != list(range(50))
    # A buffer of one shuffles nothing, as in TF.
    assert [int(x) for x in run(dtf, lambda m: m.data.Dataset.range(5).shuffle(1, seed=1))["elements"]] == [
        0,
        1,
        2,
        3,
        4,
    ]


def test_shuffle_reshuffles_each_epoch_unless_told_not_to():
    import dtf_notebook.compat.v1 as dtf

    def epochs(reshuffle):
        els = run(
            dtf, lambda m: m.data.Dataset.range(20).shuffle(20, seed=5, reshuffle_each_iteration=reshuffle).repeat(3)
        )["elements"]
        values = [int(x) for x in els]
        return [values[i * 20 : (i + 1) * 20] for i in range(3)]

    different = epochs(True)
    assert all(sorted(e) == list(range(20)) for e in different)
    assert different[0] != different[1] or different[1] != different[2]
    same = epochs(False)
    assert same[0] == same[1] == same[2]


def test_unseeded_shuffle_follows_the_graph_seed():
    import dtf_notebook.compat.v1 as dtf

    def build(m):
        m.set_random_seed(7)
        return m.data.Dataset.range(30).shuffle(30)

    first = [int(x) for x in run(dtf, build)["elements"]]
    assert first == [int(x) for x in run(dtf, build)["elements"]]
    assert sorted(first) == list(range(30))
