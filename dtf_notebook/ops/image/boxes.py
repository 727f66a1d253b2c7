"""Bounding-box ops: non-max suppression (``NonMaxSuppressionV3``/``V4``/``V5``, ``NonMaxSuppressionWithOverlaps``,
``CombinedNonMaxSuppression``, the padded batch form), ``DrawBoundingBoxesV2`` and ``SampleDistortedBoundingBoxV2``.

The kernels follow TF's CPU kernels step for step on the host (numpy): IOUs in float32 with TF's formula (corners
in either order, zero for an empty box), candidates above ``score_threshold`` taken by descending score (the lower
index first on ties), a candidate dropped when its IOU with a kept box exceeds the threshold, and soft-NMS's
Gaussian re-weighting with TF's priority queue. ``non_max_suppression_padded`` is TF 2's tiled algorithm (its
first box decides the corner order, a suppression at ``IOU >= threshold``, boxes with no positive coordinate not
counted) computed greedily. ``sample_distorted_bounding_box`` is TF's rejection sampler drawing from TF's
``SimplePhilox`` stream; the stateful op keys that stream per run from the node's generator (a seeded graph
repeats its crops in a new session), so its crops are TF's algorithm but not TF's draws.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     boxes = [[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, 2, 1, 3]]
    ...     print(sess.run(tf.image.non_max_suppression(boxes, [0.9, 0.8, 0.7], 3)))
    [0 2]
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, scalar, unknown_shape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.op_helpers import check_dtype, constant_value, make_op

__all__ = [
    "combined_non_max_suppression",
    "draw_bounding_boxes",
    "non_max_suppression",
    "non_max_suppression_overlaps",
    "non_max_suppression_padded",
    "non_max_suppression_with_scores",
    "sample_distorted_bounding_box",
]

_BOX_TYPES = (dtypes.float16, dtypes.float32)
_NOT_DIFF = op_registry.NOT_DIFFERENTIABLE


def _host(x: Any) -> np.ndarray:
    return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)


def _scalar(op: Any, x: Any, what: str) -> Any:
    arr = _host(x)
    if arr.ndim != 0:
        raise errors.InvalidArgumentError(None, op, f"{what} must be 0-D, got shape {list(arr.shape)}")
    return arr.item()


# ---- NMS core ------------------------------------------------------------------------------------------------------
def _canonical(boxes: np.ndarray) -> tuple[np.ndarray, ...]:
    b = boxes.astype(np.float32)
    return (
        np.minimum(b[:, 0], b[:, 2]),
        np.minimum(b[:, 1], b[:, 3]),
        np.maximum(b[:, 0], b[:, 2]),
        np.maximum(b[:, 1], b[:, 3]),
    )


def _iou_fn(boxes: np.ndarray) -> Callable[[np.ndarray, int], np.ndarray]:
    """TF's ``IOU(candidate, selected)`` in float32, vectorised over the candidates."""
    ymin, xmin, ymax, xmax = _canonical(boxes)
    area = (ymax - ymin) * (xmax - xmin)
    zero = np.float32(0)

    def iou(others: np.ndarray, i: int) -> np.ndarray:
        iy = np.maximum(np.minimum(ymax[i], ymax[others]) - np.maximum(ymin[i], ymin[others]), zero)
        ix = np.maximum(np.minimum(xmax[i], xmax[others]) - np.maximum(xmin[i], xmin[others]), zero)
        inter = iy * ix
        with np.errstate(invalid="ignore", divide="ignore"):
            out = inter / (area[i] + area[others] - inter)
        return np.where((area[i] <= 0) | (area[others] <= 0), zero, out).astype(np.float32)

    return iou


def _greedy(
    scores: np.ndarray,
    similarity: Callable[[np.ndarray, int], np.ndarray],
    max_out: int,
    threshold: Any,
    score_threshold: Any,
) -> tuple[list[int], list[Any]]:
    """Hard NMS: by descending score (lower index first), keep a box unless its similarity with a kept one exceeds
    ``threshold``."""
    candidates = np.nonzero(scores > score_threshold)[0]
    order = candidates[np.argsort(-scores[candidates], kind="stable")]
    alive = np.ones(order.size, dtype=bool)
    selected: list[int] = []
    for k, i in enumerate(order):
        if len(selected) >= max_out:
            break
        if not alive[k]:
            continue
        selected.append(int(i))
        rest = order[k + 1 :]
        if rest.size:
            alive[k + 1 :] &= ~(similarity(rest, int(i)).astype(scores.dtype) > threshold)
    return selected, [scores[i] for i in selected]


def _soft(
    scores: np.ndarray,
    similarity: Callable[[np.ndarray, int], np.ndarray],
    max_out: int,
    threshold: Any,
    score_threshold: Any,
    sigma: Any,
) -> tuple[list[int], list[Any]]:
    """TF's soft-NMS loop: a candidate is re-weighted by ``exp(-0.5 / sigma * iou**2)`` against each kept box it
    has not met yet, and goes back into the queue while its score stays above ``score_threshold``."""
    t = scores.dtype.type
    scale = t(-0.5) / t(sigma)
    heap = [(-scores[i], i, 0) for i in range(scores.size) if scores[i] > score_threshold]
    heapq.heapify(heap)
    selected: list[int] = []
    kept_scores: list[Any] = []
    while len(selected) < max_out and heap:
        neg, i, begin = heapq.heappop(heap)
        score = original = -neg
        for j in range(len(selected) - 1, begin - 1, -1):
            sim = t(similarity(np.array([i]), selected[j])[0])
            score = t(score * np.exp(scale * sim * sim))  # exp in the scores' precision, as TF's
            if score <= score_threshold:
                break
        if score == original:
            selected.append(i)
            kept_scores.append(score)
        elif score > score_threshold:
            heapq.heappush(heap, (-score, i, len(selected)))
    return selected, kept_scores


def _nms_kernel(overlaps: bool, with_scores: bool) -> Callable[[Any, Any], Callable[..., Any]]:
    def factory(op: Any, ctx: Any) -> Callable[..., Any]:
        pad = bool(op.get_attr("pad_to_max_output_size")) if "pad_to_max_output_size" in op.attrs else False
        outputs = len(op.outputs)

        def run(boxes: Any, scores: Any, max_output_size: Any, threshold: Any, score_threshold: Any, *rest: Any):
            b, s = _host(boxes), _host(scores)
            what = "overlaps" if overlaps else "boxes"
            if overlaps and (b.ndim != 2 or b.shape[0] != b.shape[1]):
                raise errors.InvalidArgumentError(None, op, f"overlaps must be square{list(b.shape)}")
            if not overlaps and (b.ndim != 2 or b.shape[1] != 4):
                raise errors.InvalidArgumentError(None, op, f"boxes must be 2-D with 4 columns, got {list(b.shape)}")
            if s.ndim != 1 or s.shape[0] != b.shape[0]:
                raise errors.InvalidArgumentError(
                    None, op, f"scores has incompatible shape {list(s.shape)} for {b.shape[0]} {what}"
                )
            max_out = int(_scalar(op, max_output_size, "max_output_size"))
            if max_out < 0:
                raise errors.InvalidArgumentError(None, op, "output size must be non-negative")
            t = s.dtype.type
            thr = t(_scalar(op, threshold, "overlap_threshold" if overlaps else "iou_threshold"))
            if not overlaps and not 0 <= thr <= 1:
                raise errors.InvalidArgumentError(None, op, "iou_threshold must be in [0, 1]")
            score_thr = t(_scalar(op, score_threshold, "score_threshold"))
            sigma = t(_scalar(op, rest[0], "soft_nms_sigma")) if rest else t(0)
            if sigma < 0:
                raise errors.InvalidArgumentError(None, op, "soft_nms_sigma_val must be >= 0")
            matrix = b.astype(np.float32)
            similarity = (lambda cands, kept: matrix[cands, kept]) if overlaps else _iou_fn(b)
            if sigma > 0:
                selected, kept = _soft(s, similarity, max_out, thr, score_thr, sigma)
            else:
                selected, kept = _greedy(s, similarity, max_out, thr, score_thr)
            valid = len(selected)
            if pad:
                selected = selected + [0] * (max_out - valid)
                kept = kept + [t(0)] * (max_out - valid)
            device = boxes.device if hasattr(boxes, "device") else None
            out = [torch.tensor(selected, dtype=torch.int32, device=device)]
            if with_scores:
                out.append(torch.from_numpy(np.asarray(kept, dtype=s.dtype).reshape(-1)).to(device))
            if outputs > len(out):
                out.append(torch.tensor(valid, dtype=torch.int32, device=device))
            return out[0] if outputs == 1 else tuple(out)

        return run

    return factory


def _nms_infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
    boxes, scores, max_output_size = op.inputs[:3]
    pad = bool(op.get_attr("pad_to_max_output_size")) if "pad_to_max_output_size" in op.attrs else False
    n = constant_value(max_output_size) if pad else None
    size = TensorShape([None if n is None else int(n)])
    outputs = [(dtypes.int32, size)]
    if op.type == "NonMaxSuppressionV5":
        outputs.append((scores.dtype, size))
    if op.type in ("NonMaxSuppressionV4", "NonMaxSuppressionV5"):
        outputs.append((dtypes.int32, scalar()))
    return outputs


for _type, _overlaps, _scores in (
    ("NonMaxSuppressionV3", False, False),
    ("NonMaxSuppressionV4", False, False),
    ("NonMaxSuppressionV5", False, True),
    ("NonMaxSuppressionWithOverlaps", True, False),
):
    op_registry.register_op(
        _type, infer=_nms_infer, kernel=_nms_kernel(_overlaps, _scores), grad=_NOT_DIFF, cpu_only=True
    )


def _nms_inputs(boxes: Any, scores: Any, max_output_size: Any, threshold: Any, score_threshold: Any, what: str):
    boxes_t = convert_to_tensor(boxes, name="boxes")
    check_dtype(boxes_t, _BOX_TYPES, "NonMaxSuppression", "boxes")
    scores_t = convert_to_tensor(scores, dtype=boxes_t.dtype, name="scores")
    max_t = convert_to_tensor(max_output_size, dtype=dtypes.int32, name="max_output_size")
    thr_t = convert_to_tensor(threshold, dtype=dtypes.float32, name=what)
    score_t = convert_to_tensor(score_threshold, dtype=dtypes.float32, name="score_threshold")
    return boxes_t, scores_t, max_t, thr_t, score_t


def non_max_suppression(
    boxes: Any,
    scores: Any,
    max_output_size: Any,
    iou_threshold: Any = 0.5,
    score_threshold: Any = float("-inf"),
    name: str | None = None,
) -> Tensor:
    """Indices of at most ``max_output_size`` boxes kept by greedy non-max suppression (``NonMaxSuppressionV3``).

    Args:
        boxes: ``[num_boxes, 4]`` float boxes ``[y1, x1, y2, x2]`` (either corner order).
        scores: ``[num_boxes]`` scores.
        max_output_size: Scalar int: the most boxes kept.
        iou_threshold: A box is dropped when its IOU with a kept box exceeds this (in ``[0, 1]``).
        score_threshold: Only boxes scoring above this are candidates.
        name: Name scope.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.image.non_max_suppression([[0, 0, 1, 1], [0, 0, 1, 1.2]], [0.5, 0.6], 2)))
        [1]
    """
    with name_scope(name, "non_max_suppression"):
        inputs = _nms_inputs(boxes, scores, max_output_size, iou_threshold, score_threshold, "iou_threshold")
        attrs = {"T": inputs[0].dtype, "T_threshold": dtypes.float32}
        return make_op("NonMaxSuppressionV3", list(inputs), attrs, name="NonMaxSuppressionV3").outputs[0]


def non_max_suppression_with_scores(
    boxes: Any,
    scores: Any,
    max_output_size: Any,
    iou_threshold: Any = 0.5,
    score_threshold: Any = float("-inf"),
    soft_nms_sigma: Any = 0.0,
    name: str | None = None,
) -> tuple[Tensor, Tensor]:
    """Non-max suppression returning the kept indices and their scores; ``soft_nms_sigma > 0`` is soft-NMS (scores
    decay by ``exp(-iou**2 / (2 * sigma))`` instead of dropping), as TF's ``NonMaxSuppressionV5``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     i, s = sess.run(tf.image.non_max_suppression_with_scores(
        ...         [[0, 0, 1, 1], [0, 0, 1, 1.2]], [0.5, 0.6], 2, soft_nms_sigma=0.5))
        >>> i.tolist(), [round(float(v), 3) for v in s]
        ([1, 0], [0.6, 0.25])
    """
    with name_scope(name, "non_max_suppression_with_scores"):
        inputs = _nms_inputs(boxes, scores, max_output_size, iou_threshold, score_threshold, "iou_threshold")
        sigma = convert_to_tensor(soft_nms_sigma, dtype=dtypes.float32, name="soft_nms_sigma")
        attrs = {"T": inputs[0].dtype, "pad_to_max_output_size": False}
        op = make_op("NonMaxSuppressionV5", [*inputs, sigma], attrs, name="NonMaxSuppressionV5")
        return op.outputs[0], op.outputs[1]


def non_max_suppression_overlaps(
    overlaps: Any,
    scores: Any,
    max_output_size: Any,
    overlap_threshold: Any = 0.5,
    score_threshold: Any = float("-inf"),
    name: str | None = None,
) -> Tensor:
    """Non-max suppression from a precomputed ``[num_boxes, num_boxes]`` overlap matrix (drop when the overlap with
    a kept box exceeds ``overlap_threshold``).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.image.non_max_suppression_overlaps([[1.0, 0.8], [0.8, 1.0]], [0.3, 0.4], 2)))
        [1]
    """
    with name_scope(name, "non_max_suppression_overlaps"):
        overlaps_t = convert_to_tensor(overlaps, dtype=dtypes.float32, name="overlaps")
        scores_t = convert_to_tensor(scores, dtype=dtypes.float32, name="scores")
        max_t = convert_to_tensor(max_output_size, dtype=dtypes.int32, name="max_output_size")
        thr_t = convert_to_tensor(overlap_threshold, dtype=dtypes.float32, name="overlap_threshold")
        score_t = convert_to_tensor(score_threshold, dtype=dtypes.float32, name="score_threshold")
        inputs = [overlaps_t, scores_t, max_t, thr_t, score_t]
        return make_op("NonMaxSuppressionWithOverlaps", inputs, name="NonMaxSuppressionWithOverlaps").outputs[0]


# ---- padded (TF 2's tiled algorithm, computed greedily) ------------------------------------------------------------
def _padded_one(boxes: np.ndarray, scores: np.ndarray, max_out: int, thr: np.float32) -> tuple[list[int], int]:
    order = np.argsort(-scores, kind="stable")
    b = boxes[order]
    ymin, xmin, ymax, xmax = b[:, 0], b[:, 1], b[:, 2], b[:, 3]
    area = (ymax - ymin) * (xmax - xmin)
    alive = np.ones(len(order), dtype=bool)
    counted: list[int] = []
    eps = np.float32(1e-8)
    for k in range(len(order)):
        if not alive[k]:
            continue
        if (b[k] > 0).any():
            counted.append(int(order[k]))
            if len(counted) >= max_out:
                break
        rest = slice(k + 1, None)
        iy = np.maximum(np.minimum(ymax[k], ymax[rest]) - np.maximum(ymin[k], ymin[rest]), np.float32(0))
        ix = np.maximum(np.minimum(xmax[k], xmax[rest]) - np.maximum(xmin[k], xmin[rest]), np.float32(0))
        inter = ix * iy
        iou = inter / (area[k] + area[rest] - inter + eps)
        alive[rest] &= ~(iou >= thr)
    return counted, len(counted)


def _padded_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    canonical = bool(op.get_attr("canonicalized_coordinates"))
    sorted_input = bool(op.get_attr("sorted_input"))
    filtered = bool(op.get_attr("filter_by_score"))

    def run(boxes: Any, scores: Any, max_output_size: Any, iou_threshold: Any, score_threshold: Any):
        b, s = _host(boxes).astype(np.float32), _host(scores).astype(np.float32)
        max_out = int(_scalar(op, max_output_size, "max_output_size"))
        thr, score_thr = np.float32(_scalar(op, iou_threshold, "iou_threshold")), _scalar(op, score_threshold, "")
        batch_shape, n = b.shape[:-2], b.shape[-2]
        b, s = b.reshape(-1, n, 4), s.reshape(-1, n)
        if filtered:
            keep = (s > np.float32(score_thr)).astype(np.float32)
            s, b = s * keep, b * keep[:, :, None]
        if not canonical and b.size:
            # TF's rule: the first box of the batch decides the corner order of every box.
            if not b[0, 0, 0] <= b[0, 0, 2]:
                b = b[:, :, [2, 1, 0, 3]]
            if not b[0, 0, 1] <= b[0, 0, 3]:
                b = b[:, :, [0, 3, 2, 1]]
        out = np.zeros((b.shape[0], max_out), np.int32)
        valid = np.zeros(b.shape[0], np.int32)
        for i in range(b.shape[0]):
            scores_i = s[i] if not sorted_input else -np.arange(n, dtype=np.float32)
            kept, count = _padded_one(b[i], scores_i, max_out, thr)
            out[i, :count] = kept
            valid[i] = count
        device = boxes.device
        return torch.from_numpy(out).to(device), torch.from_numpy(valid.reshape(batch_shape)).to(device)

    return run


def _padded_infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
    boxes, _, max_output_size = op.inputs[:3]
    n = constant_value(max_output_size)
    batch = boxes.shape[:-2] if boxes.shape.ndims is not None else unknown_shape()
    rows = TensorShape([None]) if batch.ndims is None else TensorShape([batch.num_elements()])
    return [(dtypes.int32, rows.concatenate([None if n is None else int(n)])), (dtypes.int32, batch)]


op_registry.register_op(
    "NonMaxSuppressionPadded", infer=_padded_infer, kernel=_padded_kernel, grad=_NOT_DIFF, cpu_only=True
)


def non_max_suppression_padded(
    boxes: Any,
    scores: Any,
    max_output_size: Any,
    iou_threshold: Any = 0.5,
    score_threshold: Any = float("-inf"),
    pad_to_max_output_size: bool = False,
    name: str | None = None,
    sorted_input: bool = False,
    canonicalized_coordinates: bool = False,
    tile_size: int = 512,
) -> tuple[Tensor, Tensor]:
    """Batched non-max suppression with TF 2's semantics: ``boxes`` ``[..., num_boxes, 4]``, the kept indices padded
    with zeros to ``max_output_size`` and the number kept per batch.

    TF's rules are kept: a box scoring at most ``score_threshold`` is zeroed, the first box decides the corner order
    of all, a box is suppressed at ``IOU >= iou_threshold``, and a box without a positive coordinate is not counted.
    ``tile_size`` only sets how TF tiles its loop; the result does not depend on it.

    Raises:
        ValueError: batched boxes without ``pad_to_max_output_size``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     idx, n = tf.image.non_max_suppression_padded(
        ...         [[0, 0, 1, 1], [0, 0, 1, 1.1], [0, 2, 1, 3]], [0.9, 0.8, 0.7], 3, pad_to_max_output_size=True)
        ...     i, n = sess.run([idx, n])
        >>> i.tolist(), int(n)
        ([0, 2, 0], 2)
    """
    with name_scope(name, "non_max_suppression_padded"):
        boxes_t = convert_to_tensor(boxes, name="boxes")
        if not pad_to_max_output_size and boxes_t.shape.ndims is not None and boxes_t.shape.ndims > 2:
            raise ValueError(
                f"'pad_to_max_output_size' (value {pad_to_max_output_size}) must be True for batched input"
            )
        check_dtype(boxes_t, _BOX_TYPES + (dtypes.float64,), "NonMaxSuppressionPadded", "boxes")
        scores_t = convert_to_tensor(scores, dtype=boxes_t.dtype, name="scores")
        max_t = convert_to_tensor(max_output_size, dtype=dtypes.int32, name="max_output_size")
        thr_t = convert_to_tensor(iou_threshold, dtype=dtypes.float32, name="iou_threshold")
        score_t = convert_to_tensor(score_threshold, dtype=dtypes.float32, name="score_threshold")
        attrs = {
            "T": boxes_t.dtype,
            "sorted_input": bool(sorted_input),
            "canonicalized_coordinates": bool(canonicalized_coordinates),
            "filter_by_score": score_threshold != float("-inf"),
        }
        op = make_op("NonMaxSuppressionPadded", [boxes_t, scores_t, max_t, thr_t, score_t], attrs)
        idx, num_valid = op.outputs
        from dtf_notebook.ops import array_ops

        if not pad_to_max_output_size:
            return idx[0, :num_valid], num_valid
        batch_dims = array_ops.concat([array_ops.shape(boxes_t)[:-2], array_ops.expand_dims(max_t, 0)], 0)
        return array_ops.reshape(idx, batch_dims), num_valid


# ---- CombinedNonMaxSuppression --------------------------------------------------------------------------------------
def _combined_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    pad_per_class, clip = bool(op.get_attr("pad_per_class")), bool(op.get_attr("clip_boxes"))

    def run(boxes: Any, scores: Any, max_per_class: Any, max_total: Any, iou_threshold: Any, score_threshold: Any):
        b, s = _host(boxes).astype(np.float32), _host(scores).astype(np.float32)
        if b.ndim != 4 or b.shape[3] != 4 or s.ndim != 3 or b.shape[:2] != s.shape[:2]:
            raise errors.InvalidArgumentError(
                None,
                op,
                f"boxes {list(b.shape)} and scores {list(s.shape)} must be [batch, boxes, q, 4] and "
                "[batch, boxes, classes]",
            )
        batches, n, q, classes = b.shape[0], b.shape[1], b.shape[2], s.shape[2]
        if q not in (1, classes):
            raise errors.InvalidArgumentError(None, op, "third dimension of boxes must be either 1 or num classes")
        per_class = int(_scalar(op, max_per_class, "max_size_per_class"))
        total = int(_scalar(op, max_total, "max_total_size"))
        if per_class <= 0 or total <= 0:
            raise errors.InvalidArgumentError(None, op, "max_size_per_class and max_total_size must be > 0")
        thr, score_thr = np.float32(_scalar(op, iou_threshold, "")), np.float32(_scalar(op, score_threshold, ""))
        if not 0 <= thr <= 1:
            raise errors.InvalidArgumentError(None, op, "iou_threshold must be in [0, 1]")
        size_per_class = min(per_class, n)
        per_batch = min(total, per_class * classes) if pad_per_class else total
        out_boxes = np.zeros((batches, per_batch, 4), np.float32)
        out_scores = np.zeros((batches, per_batch), np.float32)
        out_classes = np.zeros((batches, per_batch), np.float32)
        valid = np.zeros(batches, np.int32)
        for i in range(batches):
            found = []  # (score, class, box)
            for c in range(classes):
                class_boxes = b[i, :, c if q > 1 else 0]
                kept, kept_scores = _greedy(s[i, :, c], _iou_fn(class_boxes), size_per_class, thr, score_thr)
                found += [(sc, c, class_boxes[k]) for k, sc in zip(kept, kept_scores)]
            found.sort(key=lambda r: -r[0])  # stable: class order, then kept order, on ties
            count = min(len(found), total) if not pad_per_class else min(per_batch, len(found))
            valid[i] = count
            for j, (sc, c, box) in enumerate(found[:count]):
                out_boxes[i, j] = np.clip(box, 0, 1) if clip else box
                out_scores[i, j], out_classes[i, j] = sc, c
        device = boxes.device
        return tuple(torch.from_numpy(a).to(device) for a in (out_boxes, out_scores, out_classes, valid))

    return run


def _combined_infer(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
    boxes, scores, max_per_class, max_total = op.inputs[:4]
    batch = boxes.shape[0].value if boxes.shape.ndims else None
    total, per_class = constant_value(max_total), constant_value(max_per_class)
    classes = scores.shape[2].value if scores.shape.ndims == 3 else None
    size = None if total is None else int(total)
    if op.get_attr("pad_per_class"):
        size = None if None in (total, per_class, classes) else min(int(total), int(per_class) * classes)
    return [
        (dtypes.float32, TensorShape([batch, size, 4])),
        (dtypes.float32, TensorShape([batch, size])),
        (dtypes.float32, TensorShape([batch, size])),
        (dtypes.int32, TensorShape([batch])),
    ]


op_registry.register_op(
    "CombinedNonMaxSuppression", infer=_combined_infer, kernel=_combined_kernel, grad=_NOT_DIFF, cpu_only=True
)


def combined_non_max_suppression(
    boxes: Any,
    scores: Any,
    max_output_size_per_class: Any,
    max_total_size: Any,
    iou_threshold: Any = 0.5,
    score_threshold: Any = float("-inf"),
    pad_per_class: bool = False,
    clip_boxes: bool = True,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Per-class greedy NMS over a batch, the survivors of all classes merged by score: returns ``nmsed_boxes``
    ``[batch, size, 4]``, ``nmsed_scores``, ``nmsed_classes`` (float) and ``valid_detections`` ``[batch]``.

    ``boxes`` is ``[batch, num_boxes, q, 4]`` (``q`` 1, shared by all classes, or one box per class) and ``scores``
    ``[batch, num_boxes, num_classes]``; ``size`` is ``max_total_size`` (with ``pad_per_class``, at most
    ``max_output_size_per_class * num_classes``); ``clip_boxes`` clips the boxes to ``[0, 1]``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     b, s, c, n = sess.run(tf.image.combined_non_max_suppression(
        ...         [[[[0, 0, 1, 1]], [[0, 0, 1, 1.1]]]], [[[0.9, 0.1], [0.8, 0.7]]], 2, 3))
        >>> s.tolist(), c.tolist(), n.tolist()
        ([[0.8999999761581421, 0.699999988079071, 0.0]], [[0.0, 1.0, 0.0]], [2])
    """
    with name_scope(name, "combined_non_max_suppression"):
        boxes_t = convert_to_tensor(boxes, dtype=dtypes.float32, name="boxes")
        scores_t = convert_to_tensor(scores, dtype=dtypes.float32, name="scores")
        per_class = convert_to_tensor(max_output_size_per_class, dtype=dtypes.int32, name="max_output_size_per_class")
        thr = convert_to_tensor(iou_threshold, dtype=dtypes.float32, name="iou_threshold")
        score_thr = convert_to_tensor(score_threshold, dtype=dtypes.float32, name="score_threshold")
        total = convert_to_tensor(max_total_size, dtype=dtypes.int32, name="max_total_size")
        attrs = {"pad_per_class": bool(pad_per_class), "clip_boxes": bool(clip_boxes)}
        op = make_op("CombinedNonMaxSuppression", [boxes_t, scores_t, per_class, total, thr, score_thr], attrs)
        return tuple(op.outputs)


# ---- DrawBoundingBoxesV2 -------------------------------------------------------------------------------------------
_DEFAULT_COLORS = [
    [1, 1, 0, 1],
    [0, 0, 1, 1],
    [1, 0, 0, 1],
    [0, 1, 0, 1],
    [0.5, 0, 0.5, 1],
    [0.5, 0.5, 0, 1],
    [0.5, 0, 0, 1],
    [0, 0, 0.5, 1],
    [0, 1, 1, 1],
    [1, 0, 1, 1],
]


def _draw_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    def run(images: Any, boxes: Any, colors: Any) -> torch.Tensor:
        if images.ndim != 4:
            raise errors.InvalidArgumentError(None, op, "The rank of the images should be 4")
        if boxes.ndim != 3:
            raise errors.InvalidArgumentError(None, op, "The rank of the boxes tensor should be 3")
        if images.shape[0] != boxes.shape[0]:
            raise errors.InvalidArgumentError(None, op, "The batch sizes should be the same")
        batch, height, width, depth = images.shape
        if depth not in (1, 3, 4):
            raise errors.InvalidArgumentError(None, op, "Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)")
        if boxes.shape[2] != 4:
            raise errors.InvalidArgumentError(
                None, op, f"The size of the third dimension of the box must be 4. Received: {boxes.shape[2]}"
            )
        c = _host(colors).astype(np.float32)
        if c.ndim != 2 or (c.size and c.shape[1] < depth):
            raise errors.InvalidArgumentError(None, op, f"colors must be a 2-D matrix with at least {depth} channels")
        table = c[:, :depth] if c.size else np.array(_DEFAULT_COLORS, np.float32)[:, :depth]
        if not c.size and depth == 1:
            table = np.ones((len(_DEFAULT_COLORS), 1), np.float32)
        canvas = images.clone()
        color_rows = torch.from_numpy(table).to(canvas.dtype).to(canvas.device)
        tb = _host(boxes).astype(np.float32)
        for b in range(batch):
            for k in range(tb.shape[1]):
                color = color_rows[k % len(table)]
                # float -> int64 truncates toward zero, as TF's static_cast.
                y0, x0 = int(tb[b, k, 0] * np.float32(height - 1)), int(tb[b, k, 1] * np.float32(width - 1))
                y1, x1 = int(tb[b, k, 2] * np.float32(height - 1)), int(tb[b, k, 3] * np.float32(width - 1))
                if y0 > y1 or x0 > x1 or y0 >= height or y1 < 0 or x0 >= width or x1 < 0:
                    continue  # inverted or entirely outside: TF skips it
                r0, r1, c0, c1 = max(y0, 0), min(y1, height - 1), max(x0, 0), min(x1, width - 1)
                if y0 >= 0:
                    canvas[b, y0, c0 : c1 + 1] = color
                if y1 < height:
                    canvas[b, y1, c0 : c1 + 1] = color
                if x0 >= 0:
                    canvas[b, r0 : r1 + 1, x0] = color
                if x1 < width:
                    canvas[b, r0 : r1 + 1, x1] = color
        return canvas

    return run


op_registry.register_op(
    "DrawBoundingBoxesV2",
    infer=lambda op: [(op.inputs[0].dtype, op.inputs[0].shape)],
    kernel=_draw_kernel,
    grad=_NOT_DIFF,
    cpu_only=True,
)


def draw_bounding_boxes(images: Any, boxes: Any, name: str | None = None, colors: Any = None) -> Tensor:
    """Draws the one-pixel outlines of ``boxes`` ``[batch, num_boxes, 4]`` (``[y_min, x_min, y_max, x_max]`` in
    ``[0, 1]``) on float ``images`` ``[batch, height, width, depth]``, cycling through ``colors`` (RGBA rows; TF's
    table of ten when None).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     out = sess.run(tf.image.draw_bounding_boxes(tf.zeros([1, 4, 4, 1]), [[[0.0, 0.0, 1.0, 1.0]]]))
        >>> out[0, :, :, 0]
        array([[1., 1., 1., 1.],
               [1., 0., 0., 1.],
               [1., 0., 0., 1.],
               [1., 1., 1., 1.]], dtype=float32)
    """
    with name_scope(name, "DrawBoundingBoxes" if colors is None else "DrawBoundingBoxesV2") as scope:
        images_t = convert_to_tensor(images, name="images")
        check_dtype(images_t, _BOX_TYPES, "DrawBoundingBoxesV2", "images")
        boxes_t = convert_to_tensor(boxes, dtype=dtypes.float32, name="boxes")
        colors_t = convert_to_tensor(np.zeros((0, 4), np.float32) if colors is None else colors, dtypes.float32)
        attrs = {"T": images_t.dtype}
        return make_op("DrawBoundingBoxesV2", [images_t, boxes_t, colors_t], attrs, name=scope).outputs[0]


# ---- SampleDistortedBoundingBoxV2 -----------------------------------------------------------------------------------
class _SimplePhilox:
    """TF's ``SimplePhilox`` over one Philox stream: 32-bit words in order, ``RandFloat`` and the exact
    ``Uniform(n)`` (rejection below ``(2**32 - 1) % n + 1``)."""

    def __init__(self, key: Sequence[int], counter: Sequence[int]) -> None:
        from dtf_notebook.ops.philox import philox_block

        self._block, self._key, self._counter = philox_block, tuple(key), list(counter)
        self._words: list[int] = []

    def rand32(self) -> int:
        if not self._words:
            self._words = list(self._block(self._counter, self._key))
            carry = 1
            for i in range(4):  # SkipOne: the 128-bit counter plus one
                total = self._counter[i] + carry
                self._counter[i], carry = total & 0xFFFFFFFF, total >> 32
        return self._words.pop(0)

    def rand_float(self) -> np.float32:
        bits = np.array([(self.rand32() & 0x7FFFFF) | 0x3F800000], np.uint32)
        return bits.view(np.float32)[0] - np.float32(1)

    def uniform(self, n: int) -> int:
        n &= 0xFFFFFFFF
        if n == 0:
            self.rand32()
            return 0
        if n & (n - 1) == 0:
            return self.rand32() & (n - 1)
        rem = (0xFFFFFFFF % n) + 1
        while True:
            rnd = self.rand32()
            if rnd >= rem:
                return rnd % n


def _lrintf(x: np.float32) -> int:
    return int(np.rint(np.float32(x)))


def _random_crop(
    rng: _SimplePhilox, width: int, height: int, min_area_rel: float, max_area_rel: float, ratio: np.float32
) -> tuple[int, int, int, int] | None:
    """TF's ``GenerateRandomCrop`` (float32 arithmetic, ``lrintf`` rounding): ``(x, y, w, h)`` or None."""
    f = np.float32
    if max_area_rel <= 0 or ratio <= 0 or width <= 0 or height <= 0 or min_area_rel > max_area_rel:
        return None
    min_area = f(f(min_area_rel) * f(width)) * f(height)
    max_area = f(f(max_area_rel) * f(width)) * f(height)
    h = _lrintf(np.sqrt(f(min_area / ratio)))
    max_h = _lrintf(np.sqrt(f(max_area / ratio)))
    if _lrintf(f(max_h) * ratio) > width:
        max_h = int((width + 0.5 - f(0.0000001)) / float(ratio))
        if _lrintf(f(max_h) * ratio) > width:
            max_h -= 1
    max_h = min(max_h, height)
    h = min(h, max_h)
    if h < max_h:
        h += rng.uniform(max_h - h + 1)
    w = _lrintf(f(h) * ratio)
    area = f(w * h)
    if area < min_area:
        h += 1
        w = _lrintf(f(h) * ratio)
        area = f(w * h)
    if area > max_area:
        h -= 1
        w = _lrintf(f(h) * ratio)
        area = f(w * h)
    if area < min_area or area > max_area or w > width or h > height or w <= 0 or h <= 0:
        return None
    y = rng.uniform(height - h) if h < height else 0
    x = rng.uniform(width - w) if w < width else 0
    return x, y, w, h


def _covers(crop: tuple[int, int, int, int], min_covered: float, rects: list[tuple[int, int, int, int]]) -> bool:
    x, y, w, h = crop
    cx0, cy0, cx1, cy1 = x, y, x + w, y + h
    if np.float32(w * h) < 1:
        return False
    for bx0, by0, bx1, by1 in rects:
        area = np.float32((bx1 - bx0) * (by1 - by0))
        if area < 1:
            continue
        ix0, iy0, ix1, iy1 = max(cx0, bx0), max(cy0, by0), min(cx1, bx1), min(cy1, by1)
        inter = np.float32((ix1 - ix0) * (iy1 - iy0)) if ix0 <= ix1 and iy0 <= iy1 else np.float32(0)
        if inter / area >= np.float32(min_covered):
            return True
    return False


def sample_crop(
    key: Sequence[int],
    counter: Sequence[int],
    image_size: Sequence[int],
    boxes: np.ndarray,
    min_object_covered: float,
    aspect_ratio_range: Sequence[float],
    area_range: Sequence[float],
    max_attempts: int,
    use_image_if_no_bounding_boxes: bool,
) -> tuple[list[int], list[int], np.ndarray]:
    """TF's ``SampleDistortedBoundingBox`` on the Philox stream ``(key, counter)``: ``begin``, ``size`` and the
    ``[1, 1, 4]`` box of the crop.

    Raises:
        ValueError: no bounding boxes and not ``use_image_if_no_bounding_boxes``, or a coordinate outside [0, 1].

    Example:
        >>> from dtf_notebook.ops import philox
        >>> key, counter = philox.key_counter_from_seed(1, 2)
        >>> begin, size, box = sample_crop(key, counter, [40, 60, 3], np.zeros((1, 0, 4)), 0.1, (0.75, 1.33),
        ...                                (0.05, 1.0), 100, True)
        >>> len(begin), size[2], box.shape
        (3, -1, (1, 1, 4))
    """
    height, width = int(image_size[0]), int(image_size[1])
    flat = np.asarray(boxes, np.float32).reshape(-1, 4)
    if ((flat < 0) | (flat > 1)).any():
        raise ValueError(f"All bounding box coordinates must be in [0.0, 1.0]: {flat[(flat < 0) | (flat > 1)][0]}")
    rects = [
        (int(b[1] * np.float32(width)), int(b[0] * np.float32(height)), int(b[3] * np.float32(width)))
        + (int(b[2] * np.float32(height)),)
        for b in flat
    ]
    if not rects:
        if not use_image_if_no_bounding_boxes:
            raise ValueError(
                "No bounding boxes provided as input. One must enable use_image_if_no_bounding_boxes if you wish "
                "to not provide any bounding boxes."
            )
        rects = [(0, 0, width, height)]
    rng = _SimplePhilox(key, counter)
    lo, hi = np.float32(aspect_ratio_range[0]), np.float32(aspect_ratio_range[1])
    crop = (0, 0, width, height)
    for _ in range(max_attempts):
        ratio = rng.rand_float() * (hi - lo) + lo
        candidate = _random_crop(rng, width, height, area_range[0], area_range[1], ratio)
        if candidate is not None and _covers(candidate, min_object_covered, rects):
            crop = candidate
            break
    x, y, w, h = crop
    f = np.float32
    box = np.array([[[f(y) / f(height), f(x) / f(width), f(y + h) / f(height), f(x + w) / f(width)]]], np.float32)
    return [y, x, 0], [h, w, -1], box


def _sample_kernel(op: Any, ctx: Any) -> Callable[..., Any]:
    ratios, areas = list(op.get_attr("aspect_ratio_range")), list(op.get_attr("area_range"))
    attempts, use_image = int(op.get_attr("max_attempts")), bool(op.get_attr("use_image_if_no_bounding_boxes"))
    if len(ratios) != 2 or not (ratios[0] > 0 and ratios[1] > 0):
        raise errors.InvalidArgumentError(None, op, f"Aspect ratio range must be non-negative: {ratios}")
    if len(areas) != 2 or not (0 < areas[0] <= 1 and 0 < areas[1] <= 1):
        raise errors.InvalidArgumentError(None, op, f"Area range must be in (0, 1]: {areas}")
    if attempts <= 0:
        raise errors.InvalidArgumentError(None, op, f"Max attempts must be non-negative: {attempts}")
    gen, device = ctx.generator(op.get_attr("seed"), op.get_attr("seed2")), ctx.device
    out_dtype = getattr(torch, op.get_attr("T").name)

    def run(image_size: Any, bounding_boxes: Any, min_object_covered: Any) -> tuple[torch.Tensor, ...]:
        size = _host(image_size)
        if size.shape != (3,):
            raise errors.InvalidArgumentError(None, op, f"image_size must contain 3 elements, got {list(size.shape)}")
        boxes = _host(bounding_boxes)
        if boxes.ndim != 3 or boxes.shape[-1] != 4:
            raise errors.InvalidArgumentError(
                None, op, f"input boxes must be 3-dimensional [batch, num_boxes, coords]: {list(boxes.shape)}"
            )
        covered = float(_scalar(op, min_object_covered, "min_object_covered"))
        if covered < 0:
            raise errors.InvalidArgumentError(None, op, f"Min object covered must be non-negative: {covered}")
        words = torch.randint(0, 2**32, (6,), generator=gen, dtype=torch.int64, device=device).tolist()
        try:
            begin, extent, box = sample_crop(
                words[:2], words[2:], size, boxes, covered, ratios, areas, attempts, use_image
            )
        except ValueError as e:
            raise errors.InvalidArgumentError(None, op, str(e)) from None
        return (
            torch.tensor(begin, dtype=out_dtype, device=device),
            torch.tensor(extent, dtype=out_dtype, device=device),
            torch.from_numpy(box).to(device),
        )

    return run


op_registry.register_op(
    "SampleDistortedBoundingBoxV2",
    infer=lambda op: [
        (op.inputs[0].dtype, TensorShape([3])),
        (op.inputs[0].dtype, TensorShape([3])),
        (dtypes.float32, TensorShape([1, 1, 4])),
    ],
    kernel=_sample_kernel,
    grad=_NOT_DIFF,
    stateful=True,
    cpu_only=True,
)


def sample_distorted_bounding_box(
    image_size: Any,
    bounding_boxes: Any,
    seed: int | None = None,
    seed2: int | None = None,
    min_object_covered: Any = 0.1,
    aspect_ratio_range: Sequence[float] | None = None,
    area_range: Sequence[float] | None = None,
    max_attempts: int | None = None,
    use_image_if_no_bounding_boxes: bool | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """A random crop of an image covering at least ``min_object_covered`` of one of ``bounding_boxes``: returns
    ``begin`` and ``size`` (for ``tf.slice``) and the crop as a ``[1, 1, 4]`` box (TF1's signature).

    TF's rejection sampler: up to ``max_attempts`` times, an aspect ratio in ``aspect_ratio_range`` and an area in
    ``area_range`` (fractions of the image) are drawn and the crop is kept if it covers enough of a box; else the
    whole image. ``seed``/``seed2`` seed the op as TF1's do (unseeded, each session draws differently).

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     begin, size, box = tf.image.sample_distorted_bounding_box(
        ...         [40, 60, 3], [[[0.1, 0.1, 0.9, 0.9]]], seed=1, seed2=2, min_object_covered=0.5)
        ...     b, s = sess.run([begin, size])
        >>> bool(0 <= b[0] and b[0] + s[0] <= 40 and 0 <= b[1] and b[1] + s[1] <= 60), int(s[2])
        (True, -1)
    """
    with name_scope(name, "sample_distorted_bounding_box"):
        size_t = convert_to_tensor(image_size, name="image_size")
        check_dtype(size_t, (dtypes.uint8, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64), "Sample", "T")
        boxes_t = convert_to_tensor(bounding_boxes, dtype=dtypes.float32, name="bounding_boxes")
        covered_t = convert_to_tensor(min_object_covered, dtype=dtypes.float32, name="min_object_covered")
        attrs = {
            "T": size_t.dtype,
            "seed": int(seed or 0),
            "seed2": int(seed2 or 0),
            "aspect_ratio_range": [float(v) for v in (aspect_ratio_range or (0.75, 1.33))],
            "area_range": [float(v) for v in (area_range or (0.05, 1.0))],
            "max_attempts": int(max_attempts or 100),
            "use_image_if_no_bounding_boxes": bool(use_image_if_no_bounding_boxes),
        }
        op = make_op("SampleDistortedBoundingBoxV2", [size_t, boxes_t, covered_t], attrs)
        return tuple(op.outputs)
