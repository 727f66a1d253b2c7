"""The ``tf.nn`` ops, one module per family; ``dtf_notebook.ops.nn_ops`` gathers them as ``tf.nn``.

Modules, from the bottom up: ``common`` (dtype families, rank and argument checks), ``activations``,
``softmax``, ``softmax_cross_entropy``, ``losses``, ``bias_add``, ``statistics`` (``l2_loss``,
``moments``, ``dropout``), ``conv_window`` (the window arithmetic convolution and pooling share),
``conv``, ``pooling`` and ``embedding``. Importing a module registers its ops.
"""
