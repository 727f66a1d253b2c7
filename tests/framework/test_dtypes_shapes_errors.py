"""DTypes, TensorShape/Dimension and the OpError family (pure: no sessions)."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.tensor_shape import Dimension, TensorShape, broadcast_shapes


@pytest.mark.parametrize(
    "value, expected",
    [
        ("float32", tf.float32),
        (np.float64, tf.float64),
        (np.dtype("int8"), tf.int8),
        (bool, tf.bool),
        ("float32_ref", tf.float32),
        ("half", tf.float16),
        (np.uint8, tf.uint8),
        (bytes, tf.string),
        (tf.bfloat16, tf.bfloat16),
        (1, tf.float32),
        (9, tf.int64),
    ],
)
def test_as_dtype(value, expected):
    assert dtypes.as_dtype(value) is expected


def test_as_dtype_error_names_value():
    with pytest.raises(TypeError, match="Cannot convert value 'floaty' to a TensorFlow DType"):
        dtypes.as_dtype("floaty")


def test_dtype_properties():
    assert tf.float32.is_floating and not tf.int32.is_floating and tf.uint8.is_unsigned
    assert tf.int8.min == -128 and tf.int8.max == 127 and tf.float16.size == 2
    assert repr(tf.float32) == "tf.float32" and str(tf.float32) == "<dtype: 'float32'>"
    assert tf.bfloat16.as_numpy_dtype.__name__ == "bfloat16"


def test_python_values_default_dtypes():
    assert dtypes.dtype_of_value(1) is tf.int32 and dtypes.dtype_of_value(2**40) is tf.int64
    assert dtypes.dtype_of_value(1.5) is tf.float32 and dtypes.dtype_of_value([1, 2.5]) is tf.float32
    assert dtypes.dtype_of_value(True) is tf.bool and dtypes.dtype_of_value(["a"]) is tf.string


def test_tensor_shape_partial_semantics():
    s = TensorShape([None, 784])
    assert s.ndims == 2 and s[1].value == 784 and s[0].value is None and str(s) == "(?, 784)"
    assert s.is_compatible_with([100, 784]) and not s.is_compatible_with([100, 10])
    assert s.merge_with([32, None]).as_list() == [32, 784]
    assert TensorShape(None).ndims is None and TensorShape(None).is_compatible_with([1, 2, 3])
    assert TensorShape([2, 3]).num_elements() == 6 and s.num_elements() is None
    with pytest.raises(ValueError):
        s.merge_with([1, 2, 3])
    with pytest.raises(ValueError, match="unknown TensorShape"):
        TensorShape(None).as_list()


def test_dimension_arithmetic_and_comparison():
    assert Dimension(3) + 2 == Dimension(5) and (Dimension(None) + 1).value is None
    assert int(Dimension(4)) == 4 and (Dimension(None) == 3) is None
    with pytest.raises(ValueError):
        Dimension(-1)


def test_broadcast_shapes():
    assert broadcast_shapes(TensorShape([None, 1]), TensorShape([5])).as_list() == [None, 5]
    with pytest.raises(ValueError, match="Incompatible shapes"):
        broadcast_shapes(TensorShape([2]), TensorShape([3]))


def test_error_family_codes_and_classes():
    expected = {
        "CancelledError": 1,
        "InvalidArgumentError": 3,
        "DeadlineExceededError": 4,
        "NotFoundError": 5,
        "AlreadyExistsError": 6,
        "PermissionDeniedError": 7,
        "ResourceExhaustedError": 8,
        "FailedPreconditionError": 9,
        "AbortedError": 10,
        "OutOfRangeError": 11,
        "UnimplementedError": 12,
        "InternalError": 13,
        "UnavailableError": 14,
        "DataLossError": 15,
        "UnauthenticatedError": 16,
    }
    for name, code in expected.items():
        cls = getattr(tf.errors, name)
        err = cls(None, None, "msg")
        assert isinstance(err, tf.errors.OpError) and err.error_code == code and err.message == "msg"
        assert errors.exception_type_from_error_code(code) is cls
        assert type(errors.error_from_code(code, "again")) is cls


def test_errors_survive_pickling_as_plain_data():
    import pickle

    err = pickle.loads(pickle.dumps(tf.errors.AbortedError(None, None, "peer restarted")))
    assert isinstance(err, tf.errors.AbortedError) and err.message == "peer restarted"
