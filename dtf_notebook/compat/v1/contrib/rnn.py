"""``tf.contrib.rnn``: TF1's core RNN cells and static RNNs under their contrib names.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> tf.contrib.rnn.BasicLSTMCell is tf.nn.rnn_cell.BasicLSTMCell, tf.contrib.rnn.static_rnn is tf.nn.static_rnn
    (True, True)
"""

from dtf_notebook.rnn.recurrent import (
    stack_bidirectional_dynamic_rnn,
    stack_bidirectional_rnn,
    static_bidirectional_rnn,
    static_rnn,
    static_state_saving_rnn,
)
from dtf_notebook.rnn.rnn_cell import (
    BasicLSTMCell,
    BasicRNNCell,
    DeviceWrapper,
    DropoutWrapper,
    GRUCell,
    LSTMCell,
    LSTMStateTuple,
    MultiRNNCell,
    ResidualWrapper,
    RNNCell,
)

__all__ = [
    "BasicLSTMCell",
    "BasicRNNCell",
    "DeviceWrapper",
    "DropoutWrapper",
    "GRUCell",
    "LSTMCell",
    "LSTMStateTuple",
    "MultiRNNCell",
    "RNNCell",
    "ResidualWrapper",
    "stack_bidirectional_dynamic_rnn",
    "stack_bidirectional_rnn",
    "static_bidirectional_rnn",
    "static_rnn",
    "static_state_saving_rnn",
]
