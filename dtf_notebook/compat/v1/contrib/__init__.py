"""``tf.contrib``: the parts of TF1's contrib library that distributed training scripts use.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> greedy = tf.contrib.training.GreedyLoadBalancingStrategy(3, tf.contrib.training.byte_size_load_fn)
    >>> with tf.Graph().as_default():
    ...     with tf.device(tf.train.replica_device_setter(ps_tasks=3, ps_strategy=greedy)):
    ...         w = tf.get_variable("w", [784, 100])
    ...         b = tf.get_variable("b", [100])
    >>> w.device, b.device
    ('/job:ps/task:0', '/job:ps/task:1')
"""

from dtf_notebook.compat.v1.contrib import layers, learn, lookup, rnn, training
