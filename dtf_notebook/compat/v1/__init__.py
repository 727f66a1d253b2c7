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

from dtf_notebook import errors
from dtf_notebook.compat.v1 import (  # noqa: E402
    app,
    bitwise,
    contrib,
    data,
    debugging,
    distribute,
    dtypes,
    estimator,
    feature_column,
    flags,
    gfile,
    image,
    initializers,
    io,
    keras,
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
    test,
    train,
    version,
)
from dtf_notebook.compat.v1._names import *  # noqa: F403
from dtf_notebook.summary import Event, HistogramProto, LogMessage, SessionLog, Summary, SummaryMetadata
