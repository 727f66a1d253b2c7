"""``tf.keras`` of TF1 scripts: only ``tf.keras.initializers`` (the v1 initializer classes). Keras models,
layers and training loops are not part of this package; use ``tf.layers`` for layers.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> type(tf.keras.initializers.glorot_uniform()).__name__
    'GlorotUniform'
"""

from dtf_notebook.compat.v1.keras import initializers
