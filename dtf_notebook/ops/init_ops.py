"""TF1 initializers: callables ``init(shape, dtype=None, partition_info=None) -> Tensor``.

``tf.get_variable`` calls one with the variable's shape and dtype (and, for a
part of a partitioned variable, a ``partition_info`` whose ``full_shape`` the
scaling initializers use for their fan computation). The random ones build
``random_ops`` graphs, so their values follow the graph and op seeds.

The flat TF1 names (``tf.zeros_initializer``, ...) are the classes themselves,
as in TF; the ``tf.initializers`` short names (``zeros``, ``glorot_uniform``,
``he_normal``, ...) are listed in :data:`INITIALIZERS`.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.get_variable("w", [2, 2], initializer=tf.constant_initializer(0.5))
    ...     with tf.Session() as sess:
    ...         sess.run(w.initializer)
    ...         print(sess.run(w))
    [[0.5 0.5]
     [0.5 0.5]]
"""

from __future__ import annotations

import abc
import math
from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops import array_ops, random_ops
from dtf_notebook.ops.constant_op import constant

__all__ = [
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
    "orthogonal_initializer",
]


def _as_dims(shape: Any) -> list[int]:
    """A fully known shape (list, tuple or TensorShape) as a list of ints."""
    if isinstance(shape, TensorShape):
        return [int(d) for d in shape.as_list()]
    return [int(d) for d in shape]


def _assert_float_dtype(dtype: dtypes.DType) -> dtypes.DType:
    if not dtype.is_floating:
        raise ValueError(f"Argument `dtype` is expected to be floating point. Received: {dtype}.")
    return dtype


def _compute_fans(shape: Any) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight shape; dims before the last two count as a convolution's receptive field."""
    dims = _as_dims(shape)
    if len(dims) < 1:
        return 1, 1
    if len(dims) == 1:
        return dims[0], dims[0]
    if len(dims) == 2:
        return dims[0], dims[1]
    receptive_field = math.prod(dims[:-2])
    return dims[-2] * receptive_field, dims[-1] * receptive_field


class Initializer(abc.ABC):
    """Base class of initializers: ``__call__(shape, dtype=None, partition_info=None)`` and ``get_config()``.

    Example:
        >>> Zeros.from_config(Zeros().get_config()).dtype
        tf.float32
    """

    dtype: dtypes.DType = dtypes.float32

    @abc.abstractmethod
    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        """A tensor of ``shape`` and ``dtype`` (default: the initializer's) holding the initial value."""

    def get_config(self) -> dict[str, Any]:
        """The constructor arguments as a JSON-serialisable dict."""
        return {}

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Initializer:
        """Builds an initializer from :meth:`get_config`'s output."""
        return cls(**config)

    def _dtype(self, dtype: Any) -> dtypes.DType:
        return self.dtype if dtype is None else dtypes.as_dtype(dtype)


class Zeros(Initializer):
    """Initializes to 0 (``tf.zeros_initializer``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.zeros_initializer()([2], tf.int32)))
        [0 0]
    """

    def __init__(self, dtype: Any = dtypes.float32) -> None:
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return array_ops.zeros(shape, self._dtype(dtype))

    def get_config(self) -> dict[str, Any]:
        return {"dtype": self.dtype.name}


class Ones(Initializer):
    """Initializes to 1 (``tf.ones_initializer``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.ones_initializer()([3])))
        [1. 1. 1.]
    """

    def __init__(self, dtype: Any = dtypes.float32) -> None:
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return array_ops.ones(shape, self._dtype(dtype))

    def get_config(self) -> dict[str, Any]:
        return {"dtype": self.dtype.name}


class Constant(Initializer):
    """Initializes to a scalar (broadcast) or a list/array (``tf.constant_initializer``).

    A list shorter than the shape is padded with its last value (TF1's
    ``tf.constant`` rule) unless ``verify_shape`` is set, which makes any
    shape mismatch a TypeError.

    Raises:
        TypeError: ``value`` is not a scalar, list, tuple or numpy array.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.constant_initializer([1, 2, 3, 4])([2, 2])))
        [[1. 2.]
         [3. 4.]]
    """

    def __init__(self, value: Any = 0, dtype: Any = dtypes.float32, verify_shape: bool = False) -> None:
        if not (np.isscalar(value) or isinstance(value, list | tuple | np.ndarray)):
            raise TypeError(
                f"Invalid type for initial value={value} of type: {type(value).__name__}. Expected Python scalar, "
                "list or tuple of values, or numpy.ndarray."
            )
        self.value = value
        self.dtype = dtypes.as_dtype(dtype)
        self._verify_shape = verify_shape

    def __call__(
        self, shape: Any, dtype: Any = None, partition_info: Any = None, verify_shape: bool | None = None
    ) -> Tensor:
        verify = self._verify_shape if verify_shape is None else verify_shape
        return constant(self.value, dtype=self._dtype(dtype), shape=shape, verify_shape=verify)

    def get_config(self) -> dict[str, Any]:
        # verify_shape is left out, as in TF: it is a property of a call, not of the initializer.
        return {"value": self.value, "dtype": self.dtype.name}


class RandomUniform(Initializer):
    """Uniform values in ``[minval, maxval)`` (``tf.random_uniform_initializer``); ints need ``maxval``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         v = sess.run(tf.random_uniform_initializer(-1.0, 1.0, seed=1)([100]))
        >>> bool((abs(v) <= 1).all())
        True
    """

    def __init__(
        self, minval: Any = 0.0, maxval: Any = None, seed: int | None = None, dtype: Any = dtypes.float32
    ) -> None:
        self.minval = minval
        self.maxval = maxval
        self.seed = seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return random_ops.random_uniform(shape, self.minval, self.maxval, self._dtype(dtype), seed=self.seed)

    def get_config(self) -> dict[str, Any]:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed, "dtype": self.dtype.name}


class _Normal(Initializer):
    """Shared arguments of the two normal initializers."""

    def __init__(
        self, mean: Any = 0.0, stddev: Any = 1.0, seed: int | None = None, dtype: Any = dtypes.float32
    ) -> None:
        self.mean = mean
        self.stddev = stddev
        self.seed = seed
        self.dtype = _assert_float_dtype(dtypes.as_dtype(dtype))

    def get_config(self) -> dict[str, Any]:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed, "dtype": self.dtype.name}


class RandomNormal(_Normal):
    """Normal values (``tf.random_normal_initializer``).

    Raises:
        ValueError: ``dtype`` is not floating.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.random_normal_initializer(stddev=0.1)([3, 2]).shape.as_list()
        [3, 2]
    """

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return random_ops.random_normal(shape, self.mean, self.stddev, self._dtype(dtype), seed=self.seed)


class TruncatedNormal(_Normal):
    """Normal values redrawn beyond two standard deviations (``tf.truncated_normal_initializer``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.truncated_normal_initializer(stddev=0.1)([4]).op.type
        'Add'
    """

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        return random_ops.truncated_normal(shape, self.mean, self.stddev, self._dtype(dtype), seed=self.seed)


class UniformUnitScaling(Initializer):
    """Uniform in ``±factor * sqrt(3 / input_size)``, ``input_size`` the product of all dims but the last (deprecated).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.uniform_unit_scaling_initializer(1.5)([3, 2]).dtype
        tf.float32
    """

    def __init__(self, factor: float = 1.0, seed: int | None = None, dtype: Any = dtypes.float32) -> None:
        self.factor = factor
        self.seed = seed
        self.dtype = _assert_float_dtype(dtypes.as_dtype(dtype))

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        scale_shape = _as_dims(shape if partition_info is None else partition_info.full_shape)
        input_size = max(float(math.prod(scale_shape[:-1])), 1.0)
        max_val = math.sqrt(3 / input_size) * self.factor
        return random_ops.random_uniform(shape, -max_val, max_val, self._dtype(dtype), seed=self.seed)

    def get_config(self) -> dict[str, Any]:
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}


class VarianceScaling(Initializer):
    """Values whose variance is ``scale / n``, ``n`` the fan-in, fan-out or their mean (``mode``).

    ``distribution``: ``"truncated_normal"`` (alias ``"normal"``; stddev
    corrected by .87962566103423978 so the truncated distribution has the
    target variance), ``"untruncated_normal"`` or ``"uniform"`` (limit
    ``sqrt(3 * scale / n)``).

    Raises:
        ValueError: ``scale`` is not positive, or ``mode``/``distribution`` is unknown.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     init = tf.variance_scaling_initializer(2.0, mode="fan_in", distribution="uniform", seed=1)
        ...     with tf.Session() as sess:
        ...         w = sess.run(init([50, 10]))
        >>> bool(abs(w).max() <= (3 * 2.0 / 50) ** 0.5)
        True
    """

    def __init__(
        self,
        scale: float = 1.0,
        mode: str = "fan_in",
        distribution: str = "truncated_normal",
        seed: int | None = None,
        dtype: Any = dtypes.float32,
    ) -> None:
        if scale <= 0.0:
            raise ValueError(f"Argument `scale` must be a positive float. Received: {scale}")
        if mode not in {"fan_in", "fan_out", "fan_avg"}:
            raise ValueError(f"Argument `mode` should be one of ('fan_in', 'fan_out', 'fan_avg'). Received: {mode}")
        distribution = distribution.lower()
        if distribution not in {"normal", "uniform", "truncated_normal", "untruncated_normal"}:
            raise ValueError(
                "Argument `distribution` should be one of ('normal', uniform', 'truncated_normal', "
                f"'untruncated_normal'). Received: {distribution}"
            )
        self.scale = scale
        self.mode = mode
        self.distribution = distribution
        self.seed = seed
        self.dtype = _assert_float_dtype(dtypes.as_dtype(dtype))

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        dtype = self._dtype(dtype)
        # A part of a partitioned variable is scaled like the whole variable.
        fan_in, fan_out = _compute_fans(shape if partition_info is None else partition_info.full_shape)
        if self.mode == "fan_in":
            scale = self.scale / max(1.0, fan_in)
        elif self.mode == "fan_out":
            scale = self.scale / max(1.0, fan_out)
        else:
            scale = self.scale / max(1.0, (fan_in + fan_out) / 2.0)
        if self.distribution in ("normal", "truncated_normal"):
            # scipy.stats.truncnorm.std(a=-2, b=2, loc=0., scale=1.): undoes the variance lost to truncation.
            stddev = math.sqrt(scale) / 0.87962566103423978
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(scale), dtype, seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)

    def get_config(self) -> dict[str, Any]:
        return {
            "scale": self.scale,
            "mode": self.mode,
            "distribution": self.distribution,
            "seed": self.seed,
            "dtype": self.dtype.name,
        }


class GlorotUniform(VarianceScaling):
    """Uniform in ``±sqrt(6 / (fan_in + fan_out))`` (Xavier; ``tf.glorot_uniform_initializer``, get_variable's default).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         w = sess.run(tf.glorot_uniform_initializer(seed=0)([20, 30]))
        >>> bool(abs(w).max() <= (6 / 50) ** 0.5)
        True
    """

    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32) -> None:
        super().__init__(scale=1.0, mode="fan_avg", distribution="uniform", seed=seed, dtype=dtype)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotNormal(VarianceScaling):
    """Truncated normal with stddev ``sqrt(2 / (fan_in + fan_out))`` (``tf.glorot_normal_initializer``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     tf.glorot_normal_initializer()([2, 3]).shape.as_list()
        [2, 3]
    """

    def __init__(self, seed: int | None = None, dtype: Any = dtypes.float32) -> None:
        super().__init__(scale=1.0, mode="fan_avg", distribution="truncated_normal", seed=seed, dtype=dtype)

    def get_config(self) -> dict[str, Any]:
        return {"seed": self.seed, "dtype": self.dtype.name}


class Identity(Initializer):
    """``gain`` times the identity matrix, for 2-D shapes (``tf.initializers.identity``).

    Raises:
        ValueError: the (full) shape is not 2-D.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(Identity(2.0)([2, 3])))
        [[2. 0. 0.]
         [0. 2. 0.]]
    """

    def __init__(self, gain: float = 1.0, dtype: Any = dtypes.float32) -> None:
        self.gain = gain
        self.dtype = _assert_float_dtype(dtypes.as_dtype(dtype))

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        full = _as_dims(shape if partition_info is None else partition_info.full_shape)
        if len(full) != 2:
            raise ValueError(
                f"The tensor to initialize, specified by argument `shape` must be at least two-dimensional. "
                f"Received shape={shape}"
            )
        eye = np.eye(*full) * self.gain
        if partition_info is not None:
            dims = _as_dims(shape)
            rows, cols = (slice(o, o + n) for o, n in zip(partition_info.var_offset, dims))
            eye = eye[rows, cols]
        return constant(eye, dtype=self._dtype(dtype), name="identity")

    def get_config(self) -> dict[str, Any]:
        return {"gain": self.gain, "dtype": self.dtype.name}


class Orthogonal(Initializer):
    """A random orthogonal matrix times ``gain`` (``tf.orthogonal_initializer``), as TF draws it: the Q of the QR
    decomposition of a normal ``[rows, cols]`` matrix (``rows`` the product of all dims but the last; transposed
    when there are fewer rows than columns), its columns' signs fixed by R's diagonal, reshaped to ``shape``.

    Raises:
        ValueError: ``shape`` has fewer than two dimensions, or ``dtype`` is not floating.

    Example:
        >>> import numpy as np
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     q = tf.orthogonal_initializer(seed=1)([3, 3])
        ...     with tf.Session() as sess:
        ...         value = sess.run(q)
        >>> bool(np.allclose(value @ value.T, np.eye(3), atol=1e-5))
        True
    """

    def __init__(self, gain: float = 1.0, seed: int | None = None, dtype: Any = dtypes.float32) -> None:
        self.gain = gain
        self.seed = seed
        self.dtype = _assert_float_dtype(dtypes.as_dtype(dtype))

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Tensor:
        from dtf_notebook.ops import math_ops
        from dtf_notebook.ops.array.array_extras import matrix_transpose
        from dtf_notebook.ops.array.matrix_diag import diag_part
        from dtf_notebook.ops.linalg.decompositions import qr

        dims = _as_dims(shape)
        if len(dims) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional")
        num_rows = math.prod(dims[:-1])
        num_cols = dims[-1]
        flat_shape = (num_cols, num_rows) if num_rows < num_cols else (num_rows, num_cols)
        a = random_ops.random_normal(flat_shape, dtype=self._dtype(dtype), seed=self.seed)
        q, r = qr(a, full_matrices=False)
        q *= math_ops.sign(diag_part(r))
        if num_rows < num_cols:
            q = matrix_transpose(q)
        return self.gain * array_ops.reshape(q, dims)

    def get_config(self) -> dict[str, Any]:
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
uniform_unit_scaling_initializer = UniformUnitScaling
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
identity_initializer = Identity
orthogonal_initializer = Orthogonal


def lecun_normal(seed: int | None = None) -> VarianceScaling:
    """Truncated normal with stddev ``sqrt(1 / fan_in)`` (``tf.initializers.lecun_normal``).

    Example:
        >>> lecun_normal().get_config()["mode"]
        'fan_in'
    """
    return VarianceScaling(scale=1.0, mode="fan_in", distribution="truncated_normal", seed=seed)


def lecun_uniform(seed: int | None = None) -> VarianceScaling:
    """Uniform in ``±sqrt(3 / fan_in)`` (``tf.initializers.lecun_uniform``).

    Example:
        >>> lecun_uniform().get_config()["distribution"]
        'uniform'
    """
    return VarianceScaling(scale=1.0, mode="fan_in", distribution="uniform", seed=seed)


def he_normal(seed: int | None = None) -> VarianceScaling:
    """Truncated normal with stddev ``sqrt(2 / fan_in)`` (``tf.initializers.he_normal``).

    Example:
        >>> he_normal().get_config()["scale"]
        2.0
    """
    return VarianceScaling(scale=2.0, mode="fan_in", distribution="truncated_normal", seed=seed)


def he_uniform(seed: int | None = None) -> VarianceScaling:
    """Uniform in ``±sqrt(6 / fan_in)`` (``tf.initializers.he_uniform``).

    Example:
        >>> he_uniform().get_config()["scale"]
        2.0
    """
    return VarianceScaling(scale=2.0, mode="fan_in", distribution="uniform", seed=seed)


#: ``tf.initializers.<name>`` → the object it names (the variable-initializer ops come from ``variables``).
INITIALIZERS: dict[str, Any] = {
    "zeros": Zeros,
    "ones": Ones,
    "constant": Constant,
    "random_uniform": RandomUniform,
    "random_normal": RandomNormal,
    "truncated_normal": TruncatedNormal,
    "uniform_unit_scaling": UniformUnitScaling,
    "variance_scaling": VarianceScaling,
    "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal,
    "identity": Identity,
    "orthogonal": Orthogonal,
    "lecun_normal": lecun_normal,
    "lecun_uniform": lecun_uniform,
    "he_normal": he_normal,
    "he_uniform": he_uniform,
}
