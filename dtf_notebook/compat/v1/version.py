"""``tf.version``: the version and build constants of ``tf.VERSION``, ``tf.GRAPH_DEF_VERSION`` & co. under their
``tf.version.*`` names.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> tf.version.VERSION == tf.VERSION, tf.version.GRAPH_DEF_VERSION == tf.GRAPH_DEF_VERSION
    (True, True)
"""

from dtf_notebook.framework.versions import (
    COMPILER_VERSION,
    GIT_VERSION,
    GRAPH_DEF_VERSION,
    GRAPH_DEF_VERSION_MIN_CONSUMER,
    GRAPH_DEF_VERSION_MIN_PRODUCER,
    VERSION,
)

__all__ = [
    "COMPILER_VERSION",
    "GIT_VERSION",
    "GRAPH_DEF_VERSION",
    "GRAPH_DEF_VERSION_MIN_CONSUMER",
    "GRAPH_DEF_VERSION_MIN_PRODUCER",
    "VERSION",
]
