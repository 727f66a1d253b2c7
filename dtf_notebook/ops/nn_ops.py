"""Neural-network ops: ``tf.nn`` (activations, softmax and cross-entropies, convolution, pooling, dropout, ...).

Every op follows TF1's op type and attr names (``Relu``/``ReluGrad``, the fused
two-output ``SoftmaxCrossEntropyWithLogits``, ``Conv2D`` with ``strides``,
``padding``, ``dilations`` and ``data_format``, ``MaxPool``/``MaxPoolGrad``, ...).
Kernels run torch directly: NHWC tensors are handed to torch's NCHW functions
as permuted views (which torch treats as channels-last memory, so no copy is
made), and TF's ``SAME`` padding, which may put one more row or column after
than before, is applied explicitly only when it is asymmetric.

The ops live in the modules of :mod:`dtf_notebook.ops.nn`, one per family; this
module gathers their public functions (importing it registers every ``tf.nn`` op).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     logits = tf.constant([[2.0, 0.0, -1.0]])
    ...     loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0], logits=logits)
    ...     with tf.Session() as sess:
    ...         print(sess.run(tf.nn.relu(logits)), sess.run(loss).round(4))
    [[2. 0. 0.]] [0.1698]
"""

from __future__ import annotations

from dtf_notebook.ops.math_ops import sigmoid, tanh
from dtf_notebook.ops.nn.activations import elu, leaky_relu, relu, relu6, softplus, softsign
from dtf_notebook.ops.nn.activations_extra import crelu, relu_layer, selu, silu, swish
from dtf_notebook.ops.nn.batch_norm import batch_normalization, fused_batch_norm
from dtf_notebook.ops.nn.bias_add import bias_add, xw_plus_b
from dtf_notebook.ops.nn.candidate_sampling import (
    all_candidate_sampler,
    compute_accidental_hits,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from dtf_notebook.ops.nn.conv import conv2d, conv2d_backprop_filter, conv2d_backprop_input, conv2d_transpose
from dtf_notebook.ops.nn.conv3d import (
    conv3d,
    conv3d_backprop_filter,
    conv3d_backprop_filter_v2,
    conv3d_backprop_input_v2,
    conv3d_transpose,
)
from dtf_notebook.ops.nn.convolution import (
    atrous_conv2d,
    atrous_conv2d_transpose,
    avg_pool_v2,
    conv1d_transpose,
    conv_transpose,
    convolution,
    depthwise_conv2d_backprop_filter,
    depthwise_conv2d_backprop_input,
    depthwise_conv2d_native_backprop_filter,
    depthwise_conv2d_native_backprop_input,
    max_pool_v2,
    pool,
    with_space_to_batch,
)
from dtf_notebook.ops.nn.ctc import collapse_repeated, ctc_greedy_decoder, ctc_loss, ctc_loss_v2, ctc_unique_labels
from dtf_notebook.ops.nn.depthwise import conv1d, depthwise_conv2d, depthwise_conv2d_native, separable_conv2d
from dtf_notebook.ops.nn.dilation import dilation2d, erosion2d
from dtf_notebook.ops.nn.embedding import embedding_lookup
from dtf_notebook.ops.nn.embedding_sparse import embedding_lookup_sparse
from dtf_notebook.ops.nn.fractional_pool import fractional_avg_pool, fractional_max_pool
from dtf_notebook.ops.nn.losses import log_poisson_loss, sigmoid_cross_entropy_with_logits
from dtf_notebook.ops.nn.normalization import (
    batch_norm_with_global_normalization,
    local_response_normalization,
    lrn,
    normalize_moments,
    sufficient_statistics,
    weighted_moments,
)
from dtf_notebook.ops.nn.pooling import avg_pool, avg_pool2d, max_pool, max_pool2d
from dtf_notebook.ops.nn.pooling3d import avg_pool1d, avg_pool3d, max_pool1d, max_pool3d
from dtf_notebook.ops.nn.pooling_argmax import max_pool_with_argmax
from dtf_notebook.ops.nn.sampled_losses import nce_loss, sampled_softmax_loss, weighted_cross_entropy_with_logits
from dtf_notebook.ops.nn.softmax import log_softmax, softmax
from dtf_notebook.ops.nn.softmax_cross_entropy import (
    softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    sparse_softmax_cross_entropy_with_logits,
)
from dtf_notebook.ops.nn.statistics import dropout, l2_loss, moments

__all__ = [
    "relu",
    "relu6",
    "elu",
    "leaky_relu",
    "sigmoid",
    "tanh",
    "softplus",
    "softsign",
    "softmax",
    "log_softmax",
    "sigmoid_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits",
    "softmax_cross_entropy_with_logits_v2",
    "sparse_softmax_cross_entropy_with_logits",
    "log_poisson_loss",
    "l2_loss",
    "bias_add",
    "xw_plus_b",
    "moments",
    "dropout",
    "conv2d",
    "conv2d_backprop_input",
    "conv2d_backprop_filter",
    "conv2d_transpose",
    "max_pool",
    "max_pool2d",
    "avg_pool",
    "avg_pool2d",
    "embedding_lookup",
    "embedding_lookup_sparse",
    "batch_normalization",
    "fused_batch_norm",
    "conv1d",
    "conv3d",
    "conv3d_backprop_input_v2",
    "conv3d_transpose",
    "depthwise_conv2d",
    "depthwise_conv2d_native",
    "separable_conv2d",
    "max_pool1d",
    "avg_pool1d",
    "max_pool3d",
    "avg_pool3d",
    "selu",
    "swish",
    "silu",
    "crelu",
    "relu_layer",
    "weighted_moments",
    "sufficient_statistics",
    "normalize_moments",
    "batch_norm_with_global_normalization",
    "lrn",
    "local_response_normalization",
    "convolution",
    "with_space_to_batch",
    "atrous_conv2d",
    "atrous_conv2d_transpose",
    "conv1d_transpose",
    "conv3d_backprop_filter",
    "conv3d_backprop_filter_v2",
    "pool",
    "max_pool_v2",
    "avg_pool_v2",
    "max_pool_with_argmax",
    "uniform_candidate_sampler",
    "log_uniform_candidate_sampler",
    "learned_unigram_candidate_sampler",
    "fixed_unigram_candidate_sampler",
    "all_candidate_sampler",
    "compute_accidental_hits",
    "nce_loss",
    "sampled_softmax_loss",
    "weighted_cross_entropy_with_logits",
    "conv_transpose",
    "depthwise_conv2d_native_backprop_input",
    "depthwise_conv2d_native_backprop_filter",
    "depthwise_conv2d_backprop_input",
    "depthwise_conv2d_backprop_filter",
    "fractional_max_pool",
    "fractional_avg_pool",
    "ctc_loss",
    "ctc_loss_v2",
    "ctc_greedy_decoder",
    "collapse_repeated",
    "ctc_unique_labels",
    "dilation2d",
    "erosion2d",
]
