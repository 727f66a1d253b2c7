"""``tf.debugging``: TF1's checks and assertions under their ``tf.debugging.*`` names."""

from dtf_notebook.ops.assert_op import Assert, check_numerics
from dtf_notebook.ops.check_ops import (
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_integer,
    assert_less,
    assert_less_equal,
    assert_near,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    assert_proper_iterable,
    assert_rank,
    assert_rank_at_least,
    assert_rank_in,
    assert_scalar,
    assert_type,
    is_numeric_tensor,
)
from dtf_notebook.ops.math.sequences import is_non_decreasing, is_strictly_increasing
from dtf_notebook.ops.math.special import is_finite, is_inf, is_nan
from dtf_notebook.ops.numerics_ops import assert_same_float_dtype

__all__ = [
    "Assert",
    "assert_equal",
    "assert_greater",
    "assert_greater_equal",
    "assert_integer",
    "assert_less",
    "assert_less_equal",
    "assert_near",
    "assert_negative",
    "assert_non_negative",
    "assert_non_positive",
    "assert_none_equal",
    "assert_positive",
    "assert_proper_iterable",
    "assert_rank",
    "assert_rank_at_least",
    "assert_rank_in",
    "assert_same_float_dtype",
    "assert_scalar",
    "assert_type",
    "check_numerics",
    "is_finite",
    "is_inf",
    "is_nan",
    "is_non_decreasing",
    "is_numeric_tensor",
    "is_strictly_increasing",
]
