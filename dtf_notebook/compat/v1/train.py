"""``tf.train``: optimizers, global step and (with later layers) savers, servers and hooks."""
