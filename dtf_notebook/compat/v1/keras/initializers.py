"""``tf.keras.initializers`` as TF1's v1 API exports it: the ``tf.initializers`` classes, with Keras's smaller
defaults for the random ones (``RandomUniform(-0.05, 0.05)``, ``RandomNormal``/``TruncatedNormal`` with
``stddev=0.05``), lower-case aliases, and ``get``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> init = tf.keras.initializers.RandomUniform()
    >>> init.minval, init.maxval, tf.keras.initializers.get("zeros").__class__.__name__
    (-0.05, 0.05, 'Zeros')
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.ops import init_ops
from dtf_notebook.ops.init_ops import (
    Constant,
    GlorotNormal,
    GlorotUniform,
    Identity,
    Initializer,
    Ones,
    Orthogonal,
    VarianceScaling,
    Zeros,
    he_normal,
    he_uniform,
    lecun_normal,
    lecun_uniform,
)


class RandomUniform(init_ops.RandomUniform):
    """Uniform in ``[minval, maxval)``, Keras's defaults ``(-0.05, 0.05)``.

    Example:
        >>> RandomUniform().maxval
        0.05
    """

    def __init__(self, minval: Any = -0.05, maxval: Any = 0.05, seed: int | None = None, dtype: Any = dtypes.float32):
        super().__init__(minval=minval, maxval=maxval, seed=seed, dtype=dtype)


class RandomNormal(init_ops.RandomNormal):
    """Normal with Keras's default ``stddev=0.05``.

    Example:
        >>> RandomNormal().stddev
        0.05
    """

    def __init__(self, mean: Any = 0.0, stddev: Any = 0.05, seed: int | None = None, dtype: Any = dtypes.float32):
        super().__init__(mean=mean, stddev=stddev, seed=seed, dtype=dtype)


class TruncatedNormal(init_ops.TruncatedNormal):
    """Truncated normal with Keras's default ``stddev=0.05``.

    Example:
        >>> TruncatedNormal().stddev
        0.05
    """

    def __init__(self, mean: Any = 0.0, stddev: Any = 0.05, seed: int | None = None, dtype: Any = dtypes.float32):
        super().__init__(mean=mean, stddev=stddev, seed=seed, dtype=dtype)


zeros = Zeros
ones = Ones
constant = Constant
identity = Identity
orthogonal = Orthogonal
uniform = random_uniform = RandomUniform
normal = random_normal = RandomNormal
truncated_normal = TruncatedNormal
glorot_uniform = GlorotUniform
glorot_normal = GlorotNormal

_BY_NAME = {
    name.lower(): value
    for name, value in globals().items()
    if isinstance(value, type) and issubclass(value, Initializer) and value is not Initializer
}
_BY_NAME.update(
    {"he_normal": he_normal, "he_uniform": he_uniform, "lecun_normal": lecun_normal, "lecun_uniform": lecun_uniform}
)
_BY_NAME.update({"glorot_uniform": GlorotUniform, "glorot_normal": GlorotNormal, "truncated_normal": TruncatedNormal})


def get(identifier: Any) -> Any:
    """An initializer from a name (``"glorot_uniform"``, ``"zeros"``, ...), a config dict, or itself.

    Raises:
        ValueError: an unknown name.

    Example:
        >>> get("he_normal").scale, get(None)
        (2.0, None)
    """
    if (
        identifier is None
        or isinstance(identifier, Initializer)
        or callable(identifier)
        and not isinstance(identifier, str)
    ):
        return identifier
    if isinstance(identifier, dict):
        cls = _BY_NAME[str(identifier["class_name"]).lower()]
        return cls(**identifier.get("config", {}))
    key = str(identifier).lower()
    if key not in _BY_NAME:
        raise ValueError(f"Could not interpret initializer identifier: {identifier!r}")
    return _BY_NAME[key]()


__all__ = [
    "Initializer",
    "Zeros",
    "Ones",
    "Constant",
    "Identity",
    "Orthogonal",
    "RandomUniform",
    "RandomNormal",
    "TruncatedNormal",
    "VarianceScaling",
    "GlorotUniform",
    "GlorotNormal",
    "zeros",
    "ones",
    "constant",
    "identity",
    "orthogonal",
    "uniform",
    "random_uniform",
    "normal",
    "random_normal",
    "truncated_normal",
    "glorot_uniform",
    "glorot_normal",
    "he_normal",
    "he_uniform",
    "lecun_normal",
    "lecun_uniform",
    "get",
]
