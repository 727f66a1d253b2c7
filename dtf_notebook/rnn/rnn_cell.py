"""``tf.nn.rnn_cell``: TF1's RNN cells, their state tuple and wrappers.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> sorted(n for n in dir(tf.nn.rnn_cell) if not n.startswith("_"))  # doctest: +NORMALIZE_WHITESPACE
    ['BasicLSTMCell', 'BasicRNNCell', 'DeviceWrapper', 'DropoutWrapper', 'GRUCell', 'LSTMCell', 'LSTMStateTuple',
     'MultiRNNCell', 'RNNCell', 'ResidualWrapper']
"""

from dtf_notebook.rnn.cells import (
    BasicLSTMCell,
    BasicRNNCell,
    GRUCell,
    LSTMCell,
    LSTMStateTuple,
    MultiRNNCell,
    RNNCell,
)
from dtf_notebook.rnn.wrappers import DeviceWrapper, DropoutWrapper, ResidualWrapper

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
]
