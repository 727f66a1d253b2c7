"""String ops (``tf.strings`` and TF1's top-level string functions) against real TensorFlow.

Each case is one function of the TF1 API called on the same inputs with ``tensorflow.compat.v1`` and with
``dtf_notebook.compat.v1``: values, dtypes, static shapes and (for failing inputs) error classes and messages
must agree. Sparse results are compared component by component.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dtf_notebook.compat.v1 as dtf
from dtf_notebook.ops.strings.hashes import fingerprint64, siphash24, tf_hash64

pytestmark = pytest.mark.tf_oracle

WORDS = np.array([b"hello world", b"", b"  a  b ", b"caf\xc3\xa9 \xe2\x82\xac", b"x,y,,z", b"ABC def"], dtype=object)
GRID = np.array([[b"a", b"bc", b""], [b"d", b"ef", b"g"]], dtype=object)


@pytest.fixture(scope="module")
def tf1():
    real = pytest.importorskip("tensorflow")
    real.compat.v1.disable_eager_execution()
    return real.compat.v1


def _run(tf: Any, build: Callable[[Any], Any]) -> tuple[Any, Any]:
    """(value, static shape or None) of ``build(tf)`` in a fresh graph."""
    with tf.Graph().as_default():
        out = build(tf)
        shape = (
            None if isinstance(out, tf.SparseTensor) else out.shape.as_list() if out.shape.ndims is not None else "?"
        )
        with tf.Session() as sess:
            return sess.run(out), shape


def _assert_same(got: Any, want: Any) -> None:
    if hasattr(want, "indices"):
        for part in ("indices", "values", "dense_shape"):
            _assert_same(getattr(got, part), getattr(want, part))
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-6)
    else:
        assert got.tolist() == want.tolist()


CASES: dict[str, Callable[[Any], Any]] = {
    "length": lambda tf: tf.strings.length(WORDS),
    "length_utf8": lambda tf: tf.strings.length(WORDS, unit="UTF8_CHAR"),
    "length_grid": lambda tf: tf.strings.length(GRID),
    "substr": lambda tf: tf.substr(WORDS, [0, 0, 1, 2, -3, 1], [5, 2, 3, 4, 2, 100]),
    "substr_scalar_pos": lambda tf: tf.strings.substr(GRID, 0, 1),
    "substr_utf8": lambda tf: tf.strings.substr(
        [b"caf\xc3\xa9\xe2\x82\xac", b"abc"], [3, -2], [2, 1], unit="UTF8_CHAR"
    ),
    "substr_int64": lambda tf: tf.strings.substr(["abcdef"], tf.constant([2], tf.int64), tf.constant([3], tf.int64)),
    "strip": lambda tf: tf.strings.strip([" \t a b \n", "x", "  "]),
    "string_strip": lambda tf: tf.string_strip(GRID),
    "lower": lambda tf: tf.strings.lower(["ABC dÉf", "ÀÉ"]),
    "lower_utf8": lambda tf: tf.strings.lower(["ABC dÉf", "ÀÉ"], encoding="utf-8"),
    "upper": lambda tf: tf.strings.upper(["abc dÉf", "àé"]),
    "upper_utf8": lambda tf: tf.strings.upper(["abc dÉf", "àé"], encoding="utf-8"),
    "join": lambda tf: tf.strings.join([GRID, "-", GRID], separator="|"),
    "string_join_scalars": lambda tf: tf.string_join(["a", "b", "c"]),
    "reduce_join_all": lambda tf: tf.reduce_join(GRID),
    "reduce_join_axis0": lambda tf: tf.strings.reduce_join(GRID, axis=0, separator=","),
    "reduce_join_axis1_keep": lambda tf: tf.strings.reduce_join(GRID, axis=-1, keep_dims=True, separator=" "),
    "reduce_join_axes_reversed": lambda tf: tf.reduce_join(
        np.array([[[b"a", b"b"], [b"c", b"d"]], [[b"e", b"f"], [b"g", b"h"]]], dtype=object), axis=[2, 0]
    ),
    "reduce_join_none": lambda tf: tf.reduce_join(GRID, axis=[]),
    "to_number_float": lambda tf: tf.strings.to_number([" 1.5", "-2e3", "inf", "-NaN", "0x1A", ".5", "3."]),
    "to_number_double": lambda tf: tf.string_to_number(["0.1", "1e-300"], tf.float64),
    "to_number_int32": lambda tf: tf.string_to_number([" 42 ", "-7", "2147483647", "+3"], out_type=tf.int32),
    "to_number_int64": lambda tf: tf.strings.to_number(["-9223372036854775808", "12"], tf.int64),
    "as_string_float": lambda tf: tf.as_string([1.5, -0.25, 1e10, 3.14159]),
    "as_string_precision": lambda tf: tf.as_string([1.5, -0.25, 1e10], precision=2),
    "as_string_scientific": lambda tf: tf.strings.as_string([1.5, -0.25], scientific=True, precision=3),
    "as_string_shortest": lambda tf: tf.as_string([1.5, 1e-7, 123456789.0], shortest=True),
    "as_string_width_fill": lambda tf: tf.as_string([7, -42], width=5, fill="0"),
    "as_string_width": lambda tf: tf.as_string(tf.constant([7, 42], tf.int64), width=4),
    "as_string_bool": lambda tf: tf.as_string([True, False]),
    "as_string_double": lambda tf: tf.as_string(tf.constant([0.1, 2.0], tf.float64), precision=10),
    "regex_replace": lambda tf: tf.regex_replace(WORDS, r"[aeiou]", "_"),
    "regex_replace_groups": lambda tf: tf.strings.regex_replace(["a1b22c333"], r"(\d+)", r"<\1|\0>"),
    "regex_replace_first": lambda tf: tf.strings.regex_replace(["aaa", "bab"], "a", "x", replace_global=False),
    "regex_replace_empty_matches": lambda tf: tf.strings.regex_replace(["baaac", "", "abc"], "a*", "-"),
    "regex_replace_tensor": lambda tf: tf.strings.regex_replace(WORDS, tf.constant(r"\s+"), tf.constant(" ")),
    "regex_full_match": lambda tf: tf.strings.regex_full_match(WORDS, r"[a-z ]+"),
    "regex_full_match_tensor": lambda tf: tf.strings.regex_full_match(GRID, tf.constant(r"[a-f]+")),
    "base64": lambda tf: tf.encode_base64(WORDS),
    "base64_pad": lambda tf: tf.encode_base64(WORDS, pad=True),
    "base64_roundtrip": lambda tf: tf.decode_base64(tf.encode_base64(WORDS)),
    "decode_base64_padded": lambda tf: tf.decode_base64(["aGk_Pg==", "aGk_Pg", "YQ"]),
    "hash_fast": lambda tf: tf.strings.to_hash_bucket_fast(WORDS, 1000),
    "hash_fast_grid": lambda tf: tf.string_to_hash_bucket_fast(GRID, 7),
    "hash_strong": lambda tf: tf.strings.to_hash_bucket_strong(WORDS, 1000, [17, 42]),
    "hash_legacy": lambda tf: tf.string_to_hash_bucket(WORDS, 1000),
    "hash_legacy_v1_names": lambda tf: tf.strings.to_hash_bucket(string_tensor=WORDS, num_buckets=77),
    "segment_join": lambda tf: tf.strings.unsorted_segment_join(GRID, [1, 0], 3, separator="+"),
    "segment_join_rows": lambda tf: tf.strings.unsorted_segment_join(["a", "b", "c", "d"], [2, 0, 2, 0], 4),
    "format": lambda tf: tf.strings.format("x={} y={}", [tf.constant(3), tf.constant([1.5, 2.0])]),
    "string_split": lambda tf: tf.string_split(WORDS),
    "string_split_sep": lambda tf: tf.string_split(WORDS, sep=", "),
    "string_split_keep_empty": lambda tf: tf.string_split(WORDS, delimiter=",", skip_empty=False),
    "string_split_bytes": lambda tf: tf.string_split(["abc", ""], sep=""),
    "strings_split": lambda tf: tf.strings.split(WORDS),
    "strings_split_sep": lambda tf: tf.strings.split(WORDS, sep=","),
    "strings_split_maxsplit": lambda tf: tf.strings.split(["a b c d  ", "e f", " g "], maxsplit=2),
    "strings_split_maxsplit_0": lambda tf: tf.strings.split(["  a b  ", ""], maxsplit=0),
    "strings_split_sep_maxsplit": lambda tf: tf.strings.split(["a,,b,c", ""], sep=",", maxsplit=1),
    "strings_split_scalar": lambda tf: tf.strings.split("one two"),
    "strings_split_grid": lambda tf: tf.strings.split(np.array([[b"a b", b"c"], [b"", b"d e f"]], dtype=object)),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_matches_tensorflow(tf1, kind):
    want, want_shape = _run(tf1, CASES[kind])
    got, got_shape = _run(dtf, CASES[kind])
    _assert_same(got, want)
    assert got_shape == want_shape


ERRORS: dict[str, Callable[[Any], Any]] = {
    "to_number_bad_float": lambda tf: tf.strings.to_number(["1.5", "abc"]),
    "to_number_int_overflow": lambda tf: tf.string_to_number(["2147483648"], tf.int32),
    "to_number_int_fraction": lambda tf: tf.string_to_number(["1.5"], tf.int32),
    "as_string_both_notations": lambda tf: tf.as_string([1.0], scientific=True, shortest=True),
    "as_string_bad_fill": lambda tf: tf.as_string([1.0], fill="x"),
    "as_string_long_fill": lambda tf: tf.as_string([1.0], fill="00"),
    "as_string_int_precision": lambda tf: tf.as_string([1], precision=2),
    "as_string_int_scientific": lambda tf: tf.as_string([1], scientific=True),
    "reduce_join_duplicate_axis": lambda tf: tf.reduce_join([["a"]], axis=[0, 0]),
    "substr_pos_out_of_range": lambda tf: tf.strings.substr(["abc", "hello"], [1, 6], [1, 1]),
    "decode_base64_bad": lambda tf: tf.decode_base64(["a$b"]),
    "split_not_vector": lambda tf: tf.string_split(tf.placeholder_with_default(GRID, None)),
    "join_inconsistent": lambda tf: tf.strings.join(
        [tf.placeholder_with_default(GRID, None), tf.placeholder_with_default(WORDS, None)]
    ),
    "reduce_join_bad_axis": lambda tf: tf.reduce_join(tf.placeholder_with_default(GRID, None), axis=2),
    "segment_join_out_of_range": lambda tf: tf.strings.unsorted_segment_join(["a", "b"], [0, 3], 2),
    "segment_join_negative": lambda tf: tf.strings.unsorted_segment_join(["a", "b"], [0, -1], 2),
}


@pytest.mark.parametrize("kind", sorted(ERRORS))
def test_errors_match_tensorflow(tf1, kind):
    with pytest.raises(tf1.errors.OpError) as want:
        _run(tf1, ERRORS[kind])
    with pytest.raises(dtf.errors.OpError) as got:
        _run(dtf, ERRORS[kind])
    assert type(got.value).__name__ == type(want.value).__name__
    assert got.value.message.splitlines()[0] in want.value.message


BUILD_ERRORS: dict[str, Callable[[Any], Any]] = {
    "reduce_join_static_axis": lambda tf: tf.reduce_join([["a"]], axis=[-3]),
    "format_count": lambda tf: tf.strings.format("{} {}", [tf.constant(1)]),
    "split_ragged_or_sparse": lambda tf: tf.strings.split(["a"], result_type="Dense"),
}


@pytest.mark.parametrize("kind", sorted(BUILD_ERRORS))
def test_build_errors_match_tensorflow(tf1, kind):
    with tf1.Graph().as_default(), pytest.raises((ValueError, tf1.errors.InvalidArgumentError)) as want:
        BUILD_ERRORS[kind](tf1)
    with dtf.Graph().as_default(), pytest.raises(ValueError) as got:
        BUILD_ERRORS[kind](dtf)
    message = want.value.message if hasattr(want.value, "message") else str(want.value)
    assert str(got.value).split(" (while creating")[0] in message


def test_ragged_results_are_refused_with_a_clear_error():
    with dtf.Graph().as_default(), pytest.raises(ValueError, match="no RaggedTensor"):
        dtf.strings.split(["a b"], result_type="RaggedTensor")


def test_hashes_match_tensorflow_on_all_lengths(tf1):
    """farmhash, SipHash and Hash64 take different paths by length (0-16, 17-32, 33-64, longer, tails of 0-7)."""
    rng = np.random.default_rng(5)
    strings = [bytes(rng.integers(0, 256, n, dtype=np.uint8)) for n in [*range(0, 140), 255, 256, 257, 1000]]
    buckets = 2**62
    with tf1.Graph().as_default(), tf1.Session() as sess:
        fast, strong, legacy = sess.run(
            [
                tf1.strings.to_hash_bucket_fast(strings, buckets),
                tf1.strings.to_hash_bucket_strong(strings, buckets, [-(2**62) - 3, 12345]),
                tf1.string_to_hash_bucket(strings, buckets),
            ]
        )
    assert [fingerprint64(s) % buckets for s in strings] == fast.tolist()
    assert [siphash24((2**64 - 2**62 - 3, 12345), s) % buckets for s in strings] == strong.tolist()
    assert [tf_hash64(s) % buckets for s in strings] == legacy.tolist()
