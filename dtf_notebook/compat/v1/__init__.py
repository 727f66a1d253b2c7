"""TF1's API: ``import dtf_notebook.compat.v1 as tf`` runs TF1 graph-mode scripts unchanged.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 2])
    ...     y = tf.reduce_sum(x * 2.0, axis=1)
    ...     with tf.Session() as sess:
    ...         sess.run(y, {x: [[1.0, 2.0]]})
    array([6.], dtype=float32)
"""

import importlib

from dtf_notebook import errors
from dtf_notebook.compat.v1 import (  # noqa: E402
    bitwise,
    data,
    debugging,
    dtypes,
    feature_column,
    gfile,
    initializers,
    io,
    layers,
    linalg,
    logging,
    lookup,
    losses,
    manip,
    math,
    metrics,
    nn,
    python_io,
    queue,
    random,
    signal,
    sparse,
    spectral,
    strings,
    summary,
    train,
    version,
)
from dtf_notebook.compat.v1._names import *  # noqa: F403
from dtf_notebook.summary import Event, HistogramProto, LogMessage, SessionLog, Summary, SummaryMetadata

# Modules a graph-building script rarely needs at once load on first use (``tf.estimator``, ``tf.app``, ...), so
# that importing this namespace stays cheap; ``import dtf_notebook.compat.v1.estimator`` works as ever.
_ON_FIRST_USE = frozenset(
    {"app", "contrib", "distribute", "estimator", "flags", "image", "keras", "saved_model", "test"}
)


def __getattr__(name: str) -> object:
    if name in _ON_FIRST_USE:
        return importlib.import_module(f"{__name__}.{name}")  # the import binds it here
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _ON_FIRST_USE)
