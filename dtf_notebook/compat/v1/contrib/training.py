"""``tf.contrib.training``: ps placement strategies for ``tf.train.replica_device_setter``."""

from dtf_notebook.train.load_balancing import GreedyLoadBalancingStrategy, RandomStrategy, byte_size_load_fn
