"""Feature columns against real TF 1's ``tf.compat.v1.feature_column``: the same columns over the same features give
the same ``input_layer`` and ``linear_model`` values, variable names and shapes (TF 2.21 still ships them)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dtf_notebook.compat.v1 as dtf

pytestmark = pytest.mark.tf_oracle

EMB = np.arange(24, dtype=np.float32).reshape(8, 3) / 10.0


@pytest.fixture(scope="module")
def tf1() -> Any:
    tf = pytest.importorskip("tensorflow").compat.v1
    tf.disable_eager_execution()
    return tf


def _features(tf: Any) -> dict[str, Any]:
    return {
        "price": tf.constant([[1.0, 2.0], [3.0, -4.0], [0.5, 0.0]]),
        "age": tf.constant([17.0, 40.0, 70.0]),
        "color": tf.constant([["red", "blue"], ["green", ""], ["pink", "red"]]),
        "city": tf.constant([["paris"], ["rome"], [""]]),
        "code": tf.constant([[3, -1], [0, 9], [1, 1]], dtype=tf.int64),
        "size": tf.constant([[2], [5], [-1]], dtype=tf.int64),
        "word": tf.constant([["the"], ["cat"], ["zebra"]]),
    }


def _columns(fc: Any, tf: Any, vocab_file: str) -> dict[str, Any]:
    age = fc.numeric_column("age")
    color = fc.categorical_column_with_vocabulary_list("color", ["red", "green", "blue"], num_oov_buckets=2)
    city = fc.categorical_column_with_hash_bucket("city", 7)
    code = fc.categorical_column_with_identity("code", 10, default_value=0)
    size = fc.categorical_column_with_vocabulary_list("size", [5, 2, 7], dtype=tf.int64)
    word = fc.categorical_column_with_vocabulary_file("word", vocab_file, num_oov_buckets=1)
    return {
        "price": fc.numeric_column("price", shape=[2], normalizer_fn=lambda x: x * 2.0),
        "age_b": fc.bucketized_column(age, [18.0, 65.0]),
        "color_i": fc.indicator_column(color),
        "color_e": fc.embedding_column(color, 3, initializer=tf.constant_initializer(EMB[:5])),
        "city_i": fc.indicator_column(city),
        "code_e": fc.embedding_column(code, 3, combiner="sqrtn", initializer=tf.constant_initializer(EMB[:10])),
        "size_i": fc.indicator_column(size),
        "word_i": fc.indicator_column(word),
        "color": color,
        "city": city,
        "code": code,
        "word": word,
        "age": fc.bucketized_column(fc.numeric_column("age"), [18.0, 65.0]),
    }


DENSE = ["price", "age_b", "color_i", "color_e", "city_i", "code_e", "size_i", "word_i"]
LINEAR = ["price", "age", "color", "city", "code", "word"]


def _run(tf: Any, vocab_file: str, combiner: str = "sum") -> dict[str, Any]:
    with tf.Graph().as_default():
        columns = _columns(tf.feature_column, tf, vocab_file)
        features = _features(tf)
        net = tf.feature_column.input_layer(features, [columns[k] for k in DENSE])
        linear = tf.feature_column.linear_model(
            features, [columns[k] for k in LINEAR], units=2, sparse_combiner=combiner
        )
        variables = tf.global_variables()
        with tf.Session() as sess:
            sess.run([tf.global_variables_initializer(), tf.tables_initializer()])
            # non-zero linear weights, the same in both libraries: each variable's values in creation order
            for i, v in enumerate(v for v in variables if v.op.name.startswith("linear_model")):
                size = int(np.prod(v.shape.as_list()))
                value = np.sin(np.arange(size, dtype=np.float32) + i).reshape(v.shape.as_list())
                v.load(value, sess)
            return {
                "input_layer": sess.run(net),
                "linear_model": sess.run(linear),
                "variables": [(v.op.name, v.shape.as_list()) for v in variables],
            }


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_input_layer_and_linear_model_match_tensorflow(tf1: Any, tmp_path: Any, combiner: str) -> None:
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("the\ncat\nsat\n")
    expected = _run(tf1, str(vocab), combiner)
    got = _run(dtf, str(vocab), combiner)
    assert got["variables"] == expected["variables"]
    np.testing.assert_allclose(got["input_layer"], expected["input_layer"], rtol=1e-6)
    np.testing.assert_allclose(got["linear_model"], expected["linear_model"], rtol=1e-5)


def test_column_names_and_shapes(tf1: Any, tmp_path: Any) -> None:
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("the\ncat\nsat\n")
    with tf1.Graph().as_default():
        theirs = _columns(tf1.feature_column, tf1, str(vocab))
    ours = _columns(dtf.feature_column, dtf, str(vocab))
    for key in ours:
        assert ours[key].name == theirs[key].name
        for attr in ("_num_buckets", "_variable_shape"):
            if hasattr(theirs[key], attr):
                assert getattr(ours[key], attr) == getattr(theirs[key], attr), (key, attr)


@pytest.mark.parametrize(
    "make",
    [
        lambda fc, tf: fc.categorical_column_with_hash_bucket("x", 0),
        lambda fc, tf: fc.categorical_column_with_vocabulary_list("x", ["a", "a"]),
        lambda fc, tf: fc.categorical_column_with_vocabulary_list("x", ["a"], default_value=0, num_oov_buckets=1),
        lambda fc, tf: fc.categorical_column_with_identity("x", 3, default_value=5),
        lambda fc, tf: fc.bucketized_column(fc.numeric_column("x"), [2.0, 1.0]),
        lambda fc, tf: fc.bucketized_column(fc.numeric_column("x", shape=[2, 2]), [1.0]),
        lambda fc, tf: fc.embedding_column(fc.categorical_column_with_identity("x", 3), 0),
        lambda fc, tf: fc.input_layer({"x": tf.constant([[1]])}, [fc.categorical_column_with_identity("x", 3)]),
        lambda fc, tf: fc.input_layer({"x": tf.constant([1.0])}, []),
        lambda fc, tf: fc.input_layer({}, [fc.numeric_column("x")]),
    ],
)
def test_errors_match_tensorflow(tf1: Any, make: Any) -> None:
    with tf1.Graph().as_default(), pytest.raises(ValueError) as theirs:
        make(tf1.feature_column, tf1)
    with dtf.Graph().as_default(), pytest.raises(ValueError) as ours:
        make(dtf.feature_column, dtf)
    assert str(ours.value).split(".")[0][:40] == str(theirs.value).split(".")[0][:40]


def test_make_parse_example_spec_matches_tensorflow(tf1: Any, tmp_path: Any) -> None:
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("the\ncat\nsat\n")

    def spec(tf: Any) -> dict[str, Any]:
        parsed = tf.feature_column.make_parse_example_spec(list(_columns(tf.feature_column, tf, str(vocab)).values()))
        return {k: (type(v).__name__, v.dtype.name, tuple(getattr(v, "shape", ()))) for k, v in parsed.items()}

    assert spec(dtf) == spec(tf1)
    for lib in (dtf, tf1):
        with pytest.raises(ValueError, match="different parse_spec for key x"):
            lib.feature_column.make_parse_example_spec(
                [lib.feature_column.numeric_column("x"), lib.feature_column.numeric_column("x", shape=[2])]
            )
