"""``tf.nn``: neural-network ops."""

from dtf_notebook.ops.array.space_depth import batch_to_space, depth_to_space, space_to_batch, space_to_depth
from dtf_notebook.ops.math.reductions import l2_normalize, zero_fraction
from dtf_notebook.ops.math.sorting import approx_max_k, approx_min_k, in_top_k, top_k
from dtf_notebook.ops.nn.embedding_safe import safe_embedding_lookup_sparse
from dtf_notebook.ops.nn_ops import *  # noqa: F403
from dtf_notebook.rnn import (
    bidirectional_dynamic_rnn,
    dynamic_rnn,
    raw_rnn,
    rnn_cell,
    static_bidirectional_rnn,
    static_rnn,
    static_state_saving_rnn,
)
