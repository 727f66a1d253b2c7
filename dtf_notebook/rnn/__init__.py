"""TF1's recurrent networks: the cells of ``tf.nn.rnn_cell`` and the drivers ``tf.nn.dynamic_rnn`` & co.

Modules: ``cells`` (the cells and ``LSTMStateTuple``), ``wrappers`` (dropout, residual and device wrappers),
``recurrent`` (dynamic, bidirectional, raw and static RNNs) and ``rnn_cell`` (the ``tf.nn.rnn_cell`` namespace).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> tf.nn.rnn_cell.LSTMCell is tf.contrib.rnn.LSTMCell
    True
"""

from dtf_notebook.rnn import rnn_cell
from dtf_notebook.rnn.recurrent import (
    bidirectional_dynamic_rnn,
    dynamic_rnn,
    raw_rnn,
    static_bidirectional_rnn,
    static_rnn,
    static_state_saving_rnn,
)

__all__ = [
    "rnn_cell",
    "dynamic_rnn",
    "bidirectional_dynamic_rnn",
    "raw_rnn",
    "static_rnn",
    "static_bidirectional_rnn",
    "static_state_saving_rnn",
]
