"""TF1's top-level aliases of namespaced functions that public TF1 scripts call, found missing by running them
(tests/model_scripts): ``tf.random_crop`` is ``tf.image.random_crop`` (tensorflow/models' cifar10_input.py).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> tf.random_crop is tf.image.random_crop
    True
"""

from dtf_notebook.ops.image.transforms import random_crop

__all__ = ["random_crop"]
