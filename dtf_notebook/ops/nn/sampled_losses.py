"""Sampled losses of ``tf.nn`` and the weighted logistic loss, composed as TF's ``nn_impl`` composes them:
``nce_loss``, ``sampled_softmax_loss`` (both over ``compute_sampled_logits``) and
``weighted_cross_entropy_with_logits``.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     weights, biases = tf.ones([10, 4]), tf.zeros([10])
    ...     loss = tf.nn.nce_loss(weights, biases, labels=[[1], [2]], inputs=tf.ones([2, 4]),
    ...                           num_sampled=3, num_classes=10)
    ...     loss.shape.as_list()
    [2]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.array.scatter_nd import scatter_nd
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.identity_ops import stop_gradient
from dtf_notebook.ops.math.select_v2 import where_v2
from dtf_notebook.ops.nn.activations import relu
from dtf_notebook.ops.nn.candidate_sampling import compute_accidental_hits, log_uniform_candidate_sampler
from dtf_notebook.ops.nn.embedding import embedding_lookup
from dtf_notebook.ops.nn.losses import sigmoid_cross_entropy_with_logits
from dtf_notebook.ops.nn.softmax_cross_entropy import softmax_cross_entropy_with_logits_v2
from dtf_notebook.ops.partitioned_variables import PartitionedVariable

__all__ = ["weighted_cross_entropy_with_logits", "nce_loss", "sampled_softmax_loss", "compute_sampled_logits"]

_FLT_MAX = float(np.finfo(np.float32).max)


def weighted_cross_entropy_with_logits(
    labels: Any = None,
    logits: Any = None,
    pos_weight: Any = None,
    name: str | None = None,
    targets: Any = None,
) -> Tensor:
    """Logistic loss with positives weighted by ``pos_weight``:
    ``(1 - labels) * logits + (1 + (pos_weight - 1) * labels) * (log(1 + exp(-|logits|)) + max(-logits, 0))``.

    ``targets`` is TF1's older name of ``labels``.

    Raises:
        ValueError: both ``labels`` and ``targets``, or shapes that differ.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     loss = tf.nn.weighted_cross_entropy_with_logits(labels=[1.0, 0.0], logits=[0.0, 0.0], pos_weight=3.0)
        ...     print(sess.run(loss).round(4))
        [2.0794 0.6931]
    """
    if labels is not None and targets is not None:
        raise ValueError("Cannot specify both 'labels' and 'targets'.")
    labels = targets if labels is None else labels
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, dtype=logits.dtype, name="labels")
        if not labels.shape.is_compatible_with(logits.shape):
            raise ValueError(
                f"`logits` and `labels` must have the same shape, received ({logits.shape} vs {labels.shape})."
            )
        log_weight = 1 + (pos_weight - 1) * labels
        softplus_neg = math_ops.log1p(math_ops.exp(math_ops.negative(math_ops.abs(logits))))
        return math_ops.add(
            (1 - labels) * logits, log_weight * (softplus_neg + relu(math_ops.negative(logits))), name=scope
        )


def _sum_rows(x: Tensor) -> Tensor:
    """Row sums as TF takes them for the sampled losses: a matmul with a column of ones."""
    cols = array_ops.shape(x)[1]
    ones = array_ops.ones(array_ops.stack([cols, 1]), x.dtype)
    return array_ops.reshape(math_ops.matmul(x, ones), [-1])


def compute_sampled_logits(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int = 1,
    sampled_values: Any = None,
    subtract_log_q: bool = True,
    remove_accidental_hits: bool = False,
    partition_strategy: str = "mod",
    name: str | None = None,
    seed: int | None = None,
) -> tuple[Tensor, Tensor]:
    """Logits of the true and sampled classes and their labels (TF's ``_compute_sampled_logits``).

    Args:
        weights: ``[num_classes, dim]`` class embeddings (a tensor, a list of shards or a PartitionedVariable).
        biases: ``[num_classes]`` class biases.
        labels: int ``[batch_size, num_true]`` target classes.
        inputs: ``[batch_size, dim]`` activations.
        num_sampled: Classes to sample per batch.
        num_classes: The number of classes.
        num_true: Targets per example.
        sampled_values: ``(sampled_candidates, true_expected_count, sampled_expected_count)`` from a candidate
            sampler (default: ``log_uniform_candidate_sampler`` with ``unique=True``).
        subtract_log_q: Subtract the log of the expected counts (the "corrected" logits).
        remove_accidental_hits: Push sampled classes that are also true classes to ``-FLT_MAX``.
        partition_strategy: How sharded ``weights``/``biases`` are split (``"mod"`` or ``"div"``).
        name: Name scope; seed: the sampler's seed.

    Returns:
        ``(out_logits, out_labels)``, both ``[batch_size, num_true + num_sampled]``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     sampled = (tf.constant([4, 5], tf.int64), tf.ones([1, 1]), tf.ones([2]))
        ...     logits, labels = compute_sampled_logits(tf.ones([6, 3]), tf.zeros([6]), [[1]], tf.ones([1, 3]), 2, 6,
        ...                                             sampled_values=sampled)
        ...     with tf.Session() as sess:
        ...         print(sess.run([logits, labels]))
        [array([[3., 3., 3.]], dtype=float32), array([[1., 0., 0.]], dtype=float32)]
    """
    if isinstance(weights, PartitionedVariable):
        weights = list(weights)
    if not isinstance(weights, list):
        weights = [weights]
    with name_scope(name, "compute_sampled_logits", weights + [biases, inputs, labels]):
        labels = convert_to_tensor(labels, name="labels")
        inputs = convert_to_tensor(inputs, name="inputs")
        if labels.dtype != dtypes.int64:
            labels = math_ops.cast(labels, dtypes.int64)
        labels_flat = array_ops.reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(
                true_classes=labels,
                num_true=num_true,
                num_sampled=num_sampled,
                unique=True,
                range_max=num_classes,
                seed=seed,
            )
        sampled, true_expected_count, sampled_expected_count = (stop_gradient(s) for s in sampled_values)
        sampled = math_ops.cast(sampled, dtypes.int64)
        all_ids = array_ops.concat([labels_flat, sampled], 0)
        all_w = embedding_lookup(weights, all_ids, partition_strategy=partition_strategy)
        if all_w.dtype != inputs.dtype:
            all_w = math_ops.cast(all_w, inputs.dtype)
        num_labels = array_ops.shape(labels_flat)[0]
        true_w = array_ops.slice(all_w, [0, 0], array_ops.stack([num_labels, -1]))
        sampled_w = array_ops.slice(all_w, array_ops.stack([num_labels, 0]), [-1, -1])
        sampled_logits = math_ops.matmul(inputs, sampled_w, transpose_b=True)
        all_b = embedding_lookup(biases, all_ids, partition_strategy=partition_strategy)
        if all_b.dtype != inputs.dtype:
            all_b = math_ops.cast(all_b, inputs.dtype)
        true_b = array_ops.slice(all_b, [0], array_ops.shape(labels_flat))
        sampled_b = array_ops.slice(all_b, array_ops.shape(labels_flat), [-1])
        dim = array_ops.shape(true_w)[1:2]
        new_true_w_shape = array_ops.concat([[-1, num_true], dim], 0)
        row_wise_dots = math_ops.multiply(array_ops.expand_dims(inputs, 1), array_ops.reshape(true_w, new_true_w_shape))
        dots_as_matrix = array_ops.reshape(row_wise_dots, array_ops.concat([[-1], dim], 0))
        true_logits = array_ops.reshape(_sum_rows(dots_as_matrix), [-1, num_true])
        true_b = array_ops.reshape(true_b, [-1, num_true])
        true_logits += true_b
        sampled_logits += sampled_b
        if remove_accidental_hits:
            acc_indices, acc_ids, acc_weights = compute_accidental_hits(labels, sampled, num_true=num_true)
            acc_indices_2d = array_ops.reshape(acc_indices, [-1, 1])
            acc_ids_2d = array_ops.reshape(math_ops.cast(acc_ids, dtypes.int32), [-1, 1])
            sparse_indices = array_ops.concat([acc_indices_2d, acc_ids_2d], 1, "sparse_indices")
            sampled_logits_shape = array_ops.concat(
                [array_ops.shape(labels)[:1], array_ops.expand_dims(num_sampled, 0)], 0
            )
            # TF's sparse_to_dense of the hits: -FLT_MAX at each hit (once, even if a row repeats a label).
            hits = scatter_nd(sparse_indices, array_ops.ones_like(acc_weights), sampled_logits_shape)
            mask = where_v2(
                math_ops.greater(hits, 0.0),
                constant(-_FLT_MAX, sampled_logits.dtype),
                constant(0.0, sampled_logits.dtype),
            )
            sampled_logits += mask
        if subtract_log_q:
            true_logits -= math_ops.log(true_expected_count)
            sampled_logits -= math_ops.log(sampled_expected_count)
        out_logits = array_ops.concat([true_logits, sampled_logits], 1)
        out_labels = array_ops.concat(
            [array_ops.ones_like(true_logits) / num_true, array_ops.zeros_like(sampled_logits)], 1
        )
        return out_logits, out_labels


def nce_loss(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int = 1,
    sampled_values: Any = None,
    remove_accidental_hits: bool = False,
    partition_strategy: str = "mod",
    name: str = "nce_loss",
) -> Tensor:
    """Noise-contrastive estimation loss per example: logistic losses of the true classes (label ``1 / num_true``)
    and of the sampled classes (label 0), on logits corrected by the log expected counts.

    Arguments are those of :func:`compute_sampled_logits`.

    Returns:
        ``[batch_size]`` losses.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sampled = (tf.constant([3], tf.int64), tf.ones([1, 1]), tf.ones([1]))
        ...     loss = tf.nn.nce_loss(tf.zeros([4, 2]), tf.zeros([4]), [[0]], tf.ones([1, 2]), 1, 4,
        ...                           sampled_values=sampled)
        ...     print(sess.run(loss).round(4))
        [1.3863]
    """
    problem = (weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values)
    logits, labels = compute_sampled_logits(*problem, True, remove_accidental_hits, partition_strategy, name)
    sampled_losses = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="sampled_losses")
    return _sum_rows(sampled_losses)


def sampled_softmax_loss(
    weights: Any,
    biases: Any,
    labels: Any,
    inputs: Any,
    num_sampled: int,
    num_classes: int,
    num_true: int = 1,
    sampled_values: Any = None,
    remove_accidental_hits: bool = True,
    partition_strategy: str = "mod",
    name: str = "sampled_softmax_loss",
    seed: int | None = None,
) -> Tensor:
    """Softmax cross-entropy over the true and the sampled classes only (a fast estimate of the full softmax loss
    for training); accidental hits are removed by default.

    Arguments are those of :func:`compute_sampled_logits`.

    Returns:
        ``[batch_size]`` losses.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sampled = (tf.constant([2, 3], tf.int64), tf.ones([1, 1]), tf.ones([2]))
        ...     loss = tf.nn.sampled_softmax_loss(tf.zeros([4, 2]), tf.zeros([4]), [[0]], tf.ones([1, 2]), 2, 4,
        ...                                       sampled_values=sampled)
        ...     print(sess.run(loss).round(4))
        [1.0986]
    """
    problem = (weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values)
    logits, labels = compute_sampled_logits(*problem, True, remove_accidental_hits, partition_strategy, name, seed)
    labels = stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
