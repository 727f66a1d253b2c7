"""A TF1 program's scaffolding: ``tf.app.run``, ``tf.flags`` and ``tf.logging`` (TF's ``python/platform``).

Example:
    >>> from dtf_notebook.platform import tf_logging
    >>> tf_logging.get_logger().name
    'tensorflow'
"""
