"""``tf.nn``: neural-network ops."""

from dtf_notebook.ops.nn_ops import *  # noqa: F403
