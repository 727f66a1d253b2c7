"""``tf.math``: TF1's math functions under their ``tf.math.*`` names (most are also top-level names).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.math.cumsum([1, 2, 3], exclusive=True)))
    [0 1 3]
"""

from dtf_notebook.compat.v1 import _math_special as special
from dtf_notebook.ops.array_ops import invert_permutation
from dtf_notebook.ops.math.einsum import *  # noqa: F403
from dtf_notebook.ops.math.reductions import *  # noqa: F403
from dtf_notebook.ops.math.reductions import (
    l2_normalize,
    polyval,
    reciprocal_no_nan,
    reduce_euclidean_norm,
    reduce_std,
    reduce_variance,
    zero_fraction,
)
from dtf_notebook.ops.math.safe_div import *  # noqa: F403
from dtf_notebook.ops.math.safe_div import divide_no_nan, multiply_no_nan, nextafter, xdivy, xlog1py, xlogy
from dtf_notebook.ops.math.scan import *  # noqa: F403
from dtf_notebook.ops.math.scan import cumulative_logsumexp
from dtf_notebook.ops.math.segment import *  # noqa: F403
from dtf_notebook.ops.math.sequences import *  # noqa: F403
from dtf_notebook.ops.math.sorting import *  # noqa: F403
from dtf_notebook.ops.math.sorting import approx_max_k, approx_min_k, in_top_k, top_k
from dtf_notebook.ops.math.special import *  # noqa: F403
from dtf_notebook.ops.math.special import bessel_i0, bessel_i0e, bessel_i1, bessel_i1e, erfcinv, erfinv, ndtri
from dtf_notebook.ops.math.trig import *  # noqa: F403
from dtf_notebook.ops.math_ops import *  # noqa: F403
from dtf_notebook.ops.math_ops import (
    abs,
    add,
    add_n,
    argmax,
    argmin,
    ceil,
    divide,
    equal,
    exp,
    floor,
    floordiv,
    floormod,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    pow,
    reciprocal,
    reduce_all,
    reduce_any,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
    round,
    rsqrt,
    scalar_mul,
    sigmoid,
    sign,
    sqrt,
    square,
    squared_difference,
    subtract,
    tanh,
    truediv,
    unsorted_segment_sum,
)
from dtf_notebook.ops.nn_ops import log_softmax, softmax, softplus, softsign
