"""The ``tf.nn`` ops, one module per family; ``dtf_notebook.ops.nn_ops`` gathers them as ``tf.nn``.

Modules, from the bottom up: ``common`` (dtype families, rank and argument checks), ``activations`` and
``activations_extra`` (selu, swish, crelu), ``softmax``, ``softmax_cross_entropy``, ``losses``, ``bias_add``,
``statistics`` (``l2_loss``, ``moments``, ``dropout``), ``normalization`` (weighted moments, LRN),
``batch_norm`` (fused and composite batch normalization), ``conv_window`` (the window arithmetic convolution and
pooling share), ``conv``, ``conv3d``, ``depthwise``, ``convolution`` (N-d and atrous convolution as TF composes
them), ``dilation``, ``pooling``, ``pooling3d``, ``pooling_argmax``, ``fractional_pool``, ``embedding`` and
``embedding_sparse``, ``candidate_sampling`` (the samplers), ``sampled_losses`` (NCE, sampled softmax) and
``ctc``. Importing a module registers its ops.
"""
