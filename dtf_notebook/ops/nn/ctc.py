"""Connectionist temporal classification of ``tf.nn``: the ``CTCLoss`` and ``CTCGreedyDecoder`` ops, ``ctc_loss``,
``ctc_loss_v2``, ``ctc_greedy_decoder``, and TF's composites ``collapse_repeated`` and ``ctc_unique_labels``.

``CTCLoss`` follows TF's ``CTCLossCalculator`` (Graves' forward-backward in log space on the softmax of the
time-major logits, the last class being the blank): label checks and messages, ``preprocess_collapse_repeated``,
``ctc_merge_repeated`` (False: repeated labels are separate and the path may stay on a label only if it is a
blank), ``ignore_longer_outputs_than_inputs``, and the gradient ``softmax - posterior`` with respect to the
logits, computed with the loss. The recursion runs over time steps, every batch entry at once.

Example:
    >>> import numpy as np
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     labels = tf.SparseTensor([[0, 0]], [1], [1, 1])
    ...     loss = tf.nn.ctc_loss(labels, tf.zeros([2, 1, 3]), [2])  # uniform over 3 classes, 2 steps
    ...     print(sess.run(loss).round(4))
    [1.0986]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.array.array_extras import sequence_mask
from dtf_notebook.ops.array.gather import boolean_mask, unique
from dtf_notebook.ops.array.scatter_nd import scatter_nd
from dtf_notebook.ops.functional_ops import map_fn
from dtf_notebook.ops.math.select import where
from dtf_notebook.ops.nn.common import with_rank
from dtf_notebook.ops.op_helpers import check_dtype, make_op

__all__ = [
    "ctc_loss",
    "ctc_loss_v2",
    "ctc_greedy_decoder",
    "collapse_repeated",
    "ctc_unique_labels",
]

_NO_SECOND_DERIVATIVE = (
    "Currently there is no way to take the second  derivative of ctc_loss due to the fused implementation's "
    "interaction  with tf.gradients()"
)


def _invalid(op: Any, message: str) -> errors.OpError:
    return errors.InvalidArgumentError(None, op, message)


# ---- labels ----------------------------------------------------------------------------------------------------------
def _group_labels(op: Any, indices: torch.Tensor, values: torch.Tensor, batch_size: int) -> list[list[int]]:
    """Each batch entry's labels from the SparseTensor parts, after TF's validity checks (sorted, in bounds)."""
    rows = indices.tolist()
    vals = values.tolist()
    max_len = max((r[1] + 1 for r in rows), default=0)
    labels: list[list[int]] = [[] for _ in range(batch_size)]
    prev = None
    for i, (b, j) in enumerate(rows):
        if not (0 <= b < batch_size and 0 <= j < max_len):
            raise _invalid(
                op,
                f"label SparseTensor is not valid: indices[{i}] = [{b},{j}] is out of bounds: need 0 <= index < "
                f"[{batch_size},{max_len}]",
            )
        if prev is not None and (b, j) <= prev:
            what = "repeated" if (b, j) == prev else "out of order"
            raise _invalid(
                op,
                f"label SparseTensor is not valid: indices[{i}] = [{b},{j}] is {what}. Many sparse ops require "
                "sorted indices.\n    Use `tf.sparse.reorder` to create a correctly ordered copy.\n\n",
            )
        prev = (b, j)
        labels[b].append(int(vals[i]))
    return labels


def _l_primes(
    op: Any,
    labels: list[list[int]],
    seq_len: list[int],
    num_classes: int,
    collapse: bool,
    ignore_longer: bool,
) -> list[list[int]]:
    """TF's ``PopulateLPrimes``: each label sequence with blanks around every label (``2 U + 1`` states)."""
    blank = num_classes - 1
    primes = []
    for b, label in enumerate(labels):
        if not label:
            raise _invalid(op, f"Labels length is zero in batch {b}")
        kept: list[int] = []
        finished = False
        for i, value in enumerate(label):
            if i == 0 or not collapse or value != label[i - 1]:
                if value >= num_classes - 1:
                    finished = True
                else:
                    if finished:
                        raise _invalid(
                            op,
                            "Saw a non-null label (index >= num_classes - 1) following a null label, batch: "
                            f"{b} num_classes: {num_classes} labels: {','.join(map(str, label))} labels seen so far: "
                            f"{','.join(map(str, kept))}",
                        )
                    kept.append(value)
        for value in kept:
            if value < 0:
                raise _invalid(
                    op, f"All labels must be nonnegative integers, batch: {b} labels: {','.join(map(str, kept))}"
                )
        if not ignore_longer and len(label) > seq_len[b]:
            raise _invalid(
                op,
                f"Not enough time for target transition sequence (required: {len(label)}, available: {seq_len[b]})"
                f"{b}You can turn this error into a warning by using the flag ignore_longer_outputs_than_inputs",
            )
        prime = [blank]
        for value in kept:
            prime += [value, blank]
        primes.append(prime)
    return primes


# ---- the forward-backward recursion ----------------------------------------------------------------------------
def _logaddexp(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.logaddexp(a, b)


def _shift(x: torch.Tensor, k: int, fill: float) -> torch.Tensor:
    """``x`` moved ``k`` states along the last axis (towards higher states for k > 0), filled with ``fill``."""
    out = torch.full_like(x, fill)
    if k > 0:
        out[..., k:] = x[..., :-k]
    else:
        out[..., :k] = x[..., -k:]
    return out


def _ctc_loss_and_gradient(
    inputs: torch.Tensor, primes: list[list[int] | None], seq_len: list[int], merge: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """Loss ``[batch]`` and gradient ``[time, batch, classes]`` of the batch entries with a label sequence."""
    max_time, batch, num_classes = inputs.shape
    blank = num_classes - 1
    loss = torch.zeros(batch, dtype=inputs.dtype, device=inputs.device)
    grad = torch.zeros_like(inputs)
    active = [b for b in range(batch) if primes[b] is not None]
    if not active:
        return loss, grad
    dev, dtype = inputs.device, inputs.dtype
    n_states = max(len(primes[b]) for b in active)
    lp = torch.full((len(active), n_states), blank, dtype=torch.long)
    valid = torch.zeros((len(active), n_states), dtype=torch.bool)
    for i, b in enumerate(active):
        lp[i, : len(primes[b])] = torch.tensor(primes[b])
        valid[i, : len(primes[b])] = True
    lp, valid = lp.to(dev), valid.to(dev)
    lengths = torch.tensor([seq_len[b] for b in active], device=dev)
    n_used = torch.tensor([len(primes[b]) for b in active], device=dev)
    x = inputs[:, active]
    # TF's softmax: exp(x - max) / sum, then log of it (not log_softmax), in the input's precision.
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
    y = e / e.sum(dim=-1, keepdim=True)
    log_y = torch.log(y)
    emit = torch.gather(log_y, 2, lp.unsqueeze(0).expand(max_time, -1, -1))  # [time, active, states]
    neg_inf = float("-inf")
    is_blank = lp == blank
    stay = torch.ones_like(is_blank) if merge else is_blank
    prev2 = _shift(lp, 2, -1)
    skip = (~is_blank) & (prev2 >= 0) & ~(torch.tensor(merge, device=dev) & (lp == prev2))
    states = torch.arange(n_states, device=dev)

    alpha = torch.full((max_time, len(active), n_states), neg_inf, dtype=dtype, device=dev)
    first = torch.full((len(active), n_states), neg_inf, dtype=dtype, device=dev)
    first[:, 0] = emit[0, :, 0]
    first[:, 1] = torch.where(n_used > 1, emit[0, :, 1], torch.full_like(emit[0, :, 1], neg_inf))
    alpha[0] = torch.where(valid, first, neg_inf)
    for t in range(1, max_time):
        a = alpha[t - 1]
        s = torch.where(stay, a, neg_inf)
        s = _logaddexp(s, _shift(a, 1, neg_inf))
        s = _logaddexp(s, torch.where(skip, _shift(a, 2, neg_inf), neg_inf))
        alpha[t] = torch.where(valid, emit[t] + s, neg_inf)

    beta = torch.full_like(alpha, neg_inf)
    at_end = valid & (states[None, :] >= (n_used[:, None] - 2))
    end_init = torch.where(at_end, torch.zeros((), dtype=dtype, device=dev), neg_inf)
    next_skip = (~is_blank) & ~(torch.tensor(merge, device=dev) & (lp == _shift(lp, -2, -1)))
    for t in range(max_time - 1, -1, -1):
        if t + 1 < max_time:
            nb = beta[t + 1] + emit[t + 1]
            s = torch.where(stay, nb, neg_inf)
            s = _logaddexp(s, _shift(nb, -1, neg_inf))
            s = _logaddexp(s, torch.where(next_skip, _shift(nb, -2, neg_inf), neg_inf))
        else:
            s = torch.full_like(end_init, neg_inf)
        step = torch.where((t < lengths - 1)[:, None], torch.where(valid, s, neg_inf), neg_inf)
        beta[t] = torch.where((t == lengths - 1)[:, None], end_init, step)

    log_p = torch.logsumexp(alpha[0] + beta[0], dim=-1)
    posterior = torch.exp(alpha + beta - log_p[None, :, None])
    occupancy = torch.zeros_like(y).scatter_add_(2, lp.unsqueeze(0).expand(max_time, -1, -1), posterior)
    dy = y - occupancy
    no_path = torch.isneginf(log_p)
    dy = torch.where(no_path[None, :, None], y, dy)
    in_time = (torch.arange(max_time, device=dev)[:, None] < lengths[None, :])[:, :, None]
    grad[:, active] = torch.where(in_time, dy, torch.zeros((), dtype=dtype, device=dev))
    loss[active] = -log_p
    return loss, grad


def _ctc_loss_kernel(op: Any, ctx: Any):
    collapse = op.get_attr("preprocess_collapse_repeated")
    merge = op.get_attr("ctc_merge_repeated")
    ignore_longer = op.get_attr("ignore_longer_outputs_than_inputs")

    def run(
        inputs: torch.Tensor, indices: torch.Tensor, values: torch.Tensor, seq_len: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if inputs.dim() != 3:
            raise _invalid(op, "inputs is not a 3-Tensor")
        if seq_len.dim() != 1:
            raise _invalid(op, "sequence_length is not a vector")
        if indices.dim() != 2:
            raise _invalid(op, "labels_indices is not a matrix")
        if values.dim() != 1:
            raise _invalid(op, "labels_values is not a vector")
        max_time, batch, num_classes = inputs.shape
        if seq_len.shape[0] != batch:
            raise _invalid(
                op,
                f"len(sequence_length) != batch_size.  len(sequence_length):  {seq_len.shape[0]} batch_size: {batch}",
            )
        if indices.shape[0] != values.shape[0]:
            raise _invalid(
                op,
                "labels_indices and labels_values must contain the same number of rows, but saw shapes: "
                f"{list(indices.shape)} vs. {list(values.shape)}",
            )
        if batch == 0:
            raise _invalid(op, "batch_size must not be 0")
        labels = _group_labels(op, indices, values, batch)
        lengths = [int(v) for v in seq_len.tolist()]
        for b, n in enumerate(lengths):
            if n > max_time:
                raise _invalid(op, f"sequence_length({b}) <= {max_time}")
            if n < 0:
                raise _invalid(op, f"seq_len({b}) < 0")
        primes: list[list[int] | None] = list(_l_primes(op, labels, lengths, num_classes, collapse, ignore_longer))
        for b, n in enumerate(lengths):
            # Empty sequences, and (when ignored) labels longer than their sequence: zero loss and gradient.
            if n == 0 or (ignore_longer and len(labels[b]) > n):
                primes[b] = None
        return _ctc_loss_and_gradient(inputs, primes, lengths, merge)

    return run


def _ctc_loss_infer(op: Any) -> list:
    x = with_rank(op.inputs[0].shape, 3)
    batch = x[1].merge_with(with_rank(op.inputs[3].shape, 1)[0])
    return [(op.inputs[0].dtype, TensorShape([batch])), (op.inputs[0].dtype, x)]


def _prevent_gradient_grad(op: Any, grad: Tensor) -> list:
    raise LookupError(f"Gradient explicitly disabled. Reason: {op.get_attr('message')}")


# TF's PreventGradient (an identity that may not be differentiated), registered here unless already known.
if "PreventGradient" not in op_registry.registered_types():
    op_registry.register_op(
        "PreventGradient",
        infer=lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)],
        kernel=lambda op, ctx: lambda x: x,
        grad=_prevent_gradient_grad,
    )


def _ctc_loss_grad(op: Any, grad_loss: Tensor, _grad_gradient: Tensor) -> list:
    # As in TF: the fused gradient behind PreventGradient, so that a second derivative is an error.
    fused = make_op("PreventGradient", [op.outputs[1]], {"message": _NO_SECOND_DERIVATIVE}).outputs[0]
    return [math_ops.multiply(array_ops.expand_dims(grad_loss, -1), fused), None, None, None]


op_registry.register_op("CTCLoss", infer=_ctc_loss_infer, kernel=_ctc_loss_kernel, grad=_ctc_loss_grad)


# ---- greedy decoding -------------------------------------------------------------------------------------------------
def _greedy_kernel(op: Any, ctx: Any):
    merge = op.get_attr("merge_repeated")
    blank_attr = op.get_attr("blank_index")

    def run(inputs: torch.Tensor, seq_len: torch.Tensor) -> tuple[torch.Tensor, ...]:
        if inputs.dim() != 3:
            raise _invalid(op, "inputs is not a 3-Tensor")
        if seq_len.dim() != 1:
            raise _invalid(op, "sequence_length is not a vector")
        max_time, batch, num_classes = inputs.shape
        if seq_len.shape[0] != batch:
            raise _invalid(
                op,
                f"len(sequence_length) != batch_size.  len(sequence_length):  {seq_len.shape[0]} batch_size: {batch}",
            )
        lengths = [int(v) for v in seq_len.tolist()]
        for b, n in enumerate(lengths):
            if n > max_time:
                raise _invalid(op, f"sequence_length({b}) <= {max_time}")
        blank = blank_attr + num_classes if blank_attr < 0 else blank_attr
        best, best_ix = inputs.max(dim=-1)  # the first maximum, as Eigen's maxCoeff
        steps = torch.arange(max_time, device=inputs.device)[:, None] < torch.tensor(lengths, device=inputs.device)
        scores = -(torch.where(steps, best, torch.zeros((), dtype=best.dtype, device=best.device))).sum(0)
        indices, values, longest = [], [], 0
        classes = best_ix.t().tolist()
        for b in range(batch):
            prev, decoded = -1, []
            for t in range(lengths[b]):
                c = classes[b][t]
                if c != blank and not (merge and c == prev):
                    decoded.append(c)
                prev = c
            indices += [[b, i] for i in range(len(decoded))]
            values += decoded
            longest = max(longest, len(decoded))
        dev = inputs.device
        return (
            torch.tensor(indices, dtype=torch.int64, device=dev).reshape(-1, 2),
            torch.tensor(values, dtype=torch.int64, device=dev),
            torch.tensor([batch, longest], dtype=torch.int64, device=dev),
            scores.reshape(batch, 1),
        )

    return run


def _greedy_infer(op: Any) -> list:
    x = with_rank(op.inputs[0].shape, 3)
    return [
        (dtypes.int64, TensorShape([None, 2])),
        (dtypes.int64, TensorShape([None])),
        (dtypes.int64, TensorShape([2])),
        (op.inputs[0].dtype, TensorShape([x[1].value, 1])),
    ]


op_registry.register_op(
    "CTCGreedyDecoder", infer=_greedy_infer, kernel=_greedy_kernel, grad=op_registry.NOT_DIFFERENTIABLE
)


# ---- builders --------------------------------------------------------------------------------------------------------
def ctc_loss(
    labels: Any,
    inputs: Any = None,
    sequence_length: Any = None,
    preprocess_collapse_repeated: bool = False,
    ctc_merge_repeated: bool = True,
    ignore_longer_outputs_than_inputs: bool = False,
    time_major: bool = True,
    logits: Any = None,
) -> Tensor:
    """The CTC loss (negative log probability of the labels) of each sequence of unnormalized logits.

    Args:
        labels: An int32 ``SparseTensor``: ``labels.indices[i] = [batch, position]``, ``labels.values[i]`` a class
            in ``[0, num_classes - 1)`` (the last class is the blank).
        inputs: ``[max_time, batch, num_classes]`` logits (``[batch, max_time, num_classes]`` when not
            ``time_major``); ``logits`` is another name.
        sequence_length: int32 ``[batch]``: the time steps of each sequence.
        preprocess_collapse_repeated: Merge repeated labels before the loss.
        ctc_merge_repeated: Repeated emissions of a label merge into one (standard CTC); False makes each
            label emission separate.
        ignore_longer_outputs_than_inputs: Give labels longer than their sequence a zero loss (else an error).
        time_major: The layout of ``inputs``.

    Returns:
        ``[batch]`` losses.

    Raises:
        TypeError: ``labels`` is not a SparseTensor.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     logits = tf.zeros([4, 2, 5])
        ...     labels = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [1, 2, 3], [2, 2])
        ...     loss = tf.nn.ctc_loss(labels, logits, [4, 3])
        ...     tf.gradients(loss, logits)[0].shape.as_list()
        [4, 2, 5]
    """
    if not isinstance(labels, SparseTensor):
        raise TypeError(
            f"Expected argument `labels` to be a SparseTensor. Received labels={labels} of type: "
            f"{type(labels).__name__}"
        )
    if inputs is not None and logits is not None:
        raise ValueError("Cannot specify both 'logits' and 'inputs'.")
    inputs = convert_to_tensor(logits if inputs is None else inputs, name="logits")
    if not time_major:
        inputs = array_ops.transpose(inputs, [1, 0, 2])
    orig_dtype = inputs.dtype
    if orig_dtype in (dtypes.float16, dtypes.bfloat16):
        inputs = math_ops.cast(inputs, dtypes.float32)
    check_dtype(inputs, (dtypes.float32, dtypes.float64), "CTCLoss", "inputs")
    indices = convert_to_tensor(labels.indices, dtype=dtypes.int64, name="labels_indices")
    values = convert_to_tensor(labels.values, dtype=dtypes.int32, name="labels_values")
    seq_len = convert_to_tensor(sequence_length, dtype=dtypes.int32, name="sequence_length")
    attrs = {
        "preprocess_collapse_repeated": bool(preprocess_collapse_repeated),
        "ctc_merge_repeated": bool(ctc_merge_repeated),
        "ignore_longer_outputs_than_inputs": bool(ignore_longer_outputs_than_inputs),
    }
    loss = make_op("CTCLoss", [inputs, indices, values, seq_len], attrs, name="CTCLoss").outputs[0]
    if orig_dtype in (dtypes.float16, dtypes.bfloat16):
        loss = math_ops.cast(loss, orig_dtype)
    return loss


def _dense_to_sparse_labels(labels: Tensor, label_length: Any) -> SparseTensor:
    """The first ``label_length[b]`` labels of each row of ``labels`` as a SparseTensor."""
    mask = sequence_mask(label_length, maxlen=array_ops.shape(labels)[1])
    indices = math_ops.cast(where(mask), dtypes.int64)
    values = math_ops.cast(boolean_mask(labels, mask), dtypes.int32)
    return SparseTensor(indices, values, math_ops.cast(array_ops.shape(labels), dtypes.int64))


def ctc_loss_v2(
    labels: Any,
    logits: Any,
    label_length: Any,
    logit_length: Any,
    logits_time_major: bool = True,
    unique: Any = None,
    blank_index: int | None = None,
    name: str | None = None,
) -> Tensor:
    """TF2's CTC loss: dense ``[batch, max_label_length]`` labels with ``label_length`` (or a SparseTensor), and
    any ``blank_index`` (default 0 for dense labels; required for sparse ones).

    The loss is the one of :func:`ctc_loss` (the blank class moved last); ``unique`` (a speed-up TF's dense path
    may use) is accepted and unused. Dense labels longer than their logits are an error here.

    Raises:
        ValueError: sparse labels without ``blank_index``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     loss = tf.nn.ctc_loss_v2([[1]], tf.zeros([2, 1, 3]), [1], [2])
        ...     print(sess.run(loss).round(4))
        [1.0986]
    """
    if isinstance(labels, SparseTensor):
        if blank_index is None:
            raise ValueError("Argument `blank_index` must be provided when labels is a SparseTensor.")
        return _ctc_loss_with_blank(labels, logits, logit_length, logits_time_major, blank_index)
    with name_scope(name, "ctc_loss_dense", [logits, labels, label_length, logit_length]):
        sparse = _dense_to_sparse_labels(convert_to_tensor(labels, name="labels"), label_length)
        return _ctc_loss_with_blank(sparse, logits, logit_length, logits_time_major, blank_index or 0)


def _ctc_loss_with_blank(
    labels: SparseTensor, logits: Any, logit_length: Any, time_major: bool, blank_index: int
) -> Tensor:
    """:func:`ctc_loss` with the class ``blank_index`` as the blank: moved last, the labels above it shifted down."""
    logits = convert_to_tensor(logits, name="logits")
    num_classes = logits.shape[2].value if logits.shape.ndims == 3 else None
    if blank_index < 0:
        if num_classes is None:
            raise ValueError("A negative `blank_index` needs the number of classes of `logits` to be known.")
        blank_index += num_classes
    if num_classes is None or blank_index != num_classes - 1:
        logits = array_ops.concat(
            [logits[:, :, :blank_index], logits[:, :, blank_index + 1 :], logits[:, :, blank_index : blank_index + 1]],
            axis=2,
        )
        values = labels.values
        labels = SparseTensor(
            labels.indices, where(math_ops.less(values, blank_index), values, values - 1), labels.dense_shape
        )
    return ctc_loss(labels=labels, inputs=logits, sequence_length=logit_length, time_major=time_major)


def ctc_greedy_decoder(
    inputs: Any, sequence_length: Any, merge_repeated: bool = True, blank_index: int | None = None
) -> tuple[list[SparseTensor], Tensor]:
    """Best-path decoding: the most likely class at each step, repeats merged (``merge_repeated``), blanks dropped.

    Args:
        inputs: ``[max_time, batch, num_classes]`` logits.
        sequence_length: int32 ``[batch]``.
        merge_repeated: Merge consecutive repeats of a class.
        blank_index: The blank class (default the last; negative counts from the end).

    Returns:
        ``([decoded], neg_sum_logits)``: one int64 SparseTensor ``[batch, max_decoded_length]`` and a
        ``[batch, 1]`` tensor with the negative sum of each step's largest logit.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     logits = tf.one_hot([[1], [1], [2], [0]], 3)  # classes 1, 1, blank, 0
        ...     (decoded,), _ = tf.nn.ctc_greedy_decoder(logits, [4])
        ...     print(sess.run(decoded).values)
        [1 0]
    """
    x = convert_to_tensor(inputs, name="inputs")
    check_dtype(x, (dtypes.float32, dtypes.float64), "CTCGreedyDecoder", "inputs")
    seq_len = convert_to_tensor(sequence_length, dtype=dtypes.int32, name="sequence_length")
    attrs = {"merge_repeated": bool(merge_repeated), "blank_index": -1 if blank_index is None else int(blank_index)}
    op = make_op("CTCGreedyDecoder", [x, seq_len], attrs, name="CTCGreedyDecoder")
    ix, val, shape, log_probabilities = op.outputs
    return [SparseTensor(ix, val, shape)], log_probabilities


def collapse_repeated(labels: Any, seq_length: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Merges repeated labels of each row into one: ``(collapsed labels, their lengths)``, as TF composes it.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.nn.collapse_repeated([[1, 1, 2, 2, 2], [3, 3, 3, 4, 4]], [5, 3])))
        (array([[1, 2],
               [3, 0]], dtype=int32), array([2, 1], dtype=int32))
    """
    with name_scope(name, "collapse_repeated_labels", [labels, seq_length]):
        labels = convert_to_tensor(labels, name="labels")
        seq_length = convert_to_tensor(seq_length, name="seq_length")
        label_mask = array_ops.concat(
            [
                array_ops.ones_like(labels[:, :1], dtypes.bool),
                math_ops.not_equal(labels[:, 1:], labels[:, :-1]),
            ],
            axis=1,
        )
        maxlen = labels.shape[1].value if labels.shape[1].value is not None else array_ops.shape(labels)[1]
        seq_mask = sequence_mask(seq_length, maxlen=maxlen)
        label_mask = math_ops.logical_and(label_mask, seq_mask)
        new_seq_len = math_ops.reduce_sum(math_ops.cast(label_mask, dtypes.int32), axis=1)
        new_maxlen = math_ops.reduce_max(new_seq_len)
        idx_mask = sequence_mask(new_seq_len, maxlen=new_maxlen)
        flat_labels = array_ops.reshape(labels, [-1])
        flat_label_mask = array_ops.reshape(label_mask, [-1])
        flat_idx_mask = array_ops.reshape(idx_mask, [-1])
        idx = math_ops.range(array_ops.shape(flat_idx_mask)[0])
        flat = scatter_nd(
            indices=array_ops.expand_dims(boolean_mask(idx, flat_idx_mask), axis=1),
            updates=boolean_mask(flat_labels, flat_label_mask),
            shape=array_ops.shape(flat_idx_mask),
        )
        batch_size = labels.shape[0].value if labels.shape[0].value is not None else array_ops.shape(labels)[0]
        return array_ops.reshape(flat, [batch_size, new_maxlen]), math_ops.cast(new_seq_len, seq_length.dtype)


def ctc_unique_labels(labels: Any, name: str | None = None) -> tuple[Tensor, Tensor]:
    """Each row's unique labels (in order of appearance, zero-padded) and each label's index among them.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.nn.ctc_unique_labels([[3, 4, 4, 3]])))
        [array([[3, 4, 0, 0]]), array([[0, 1, 1, 0]], dtype=int32)]
    """
    with name_scope(name, "ctc_unique_labels", [labels]):
        labels = convert_to_tensor(labels, name="labels")

        def _unique(x: Tensor) -> list[Tensor]:
            y, idx = unique(x)
            size = x.shape[0].value if x.shape[0].value is not None else array_ops.shape(idx)[0]
            padded = array_ops.pad(y, [[0, size - array_ops.shape(y)[0]]])
            return [math_ops.cast(padded, dtypes.int64), idx]

        return map_fn(_unique, labels, dtype=[dtypes.int64, dtypes.int32])
