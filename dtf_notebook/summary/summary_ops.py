"""Summary ops: each outputs a serialized ``Summary`` protobuf as a scalar string tensor.

``ScalarSummary``, ``HistogramSummary``, ``TensorSummaryV2`` and ``MergeSummary`` are registered
here with their kernels; :func:`scalar`, :func:`histogram`, :func:`tensor_summary`, :func:`text`,
:func:`merge` and :func:`merge_all` are ``tf.summary``'s TF1 builders. Tags follow TF1: the name
scope the summary is created in prefixes its name (``family`` adds a TensorBoard tab), and every
summary joins the ``SUMMARIES`` collection unless ``collections`` says otherwise.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     with tf.name_scope("train"):
    ...         s = scalar("loss", tf.constant(0.5))
    ...     with tf.Session() as sess:
    ...         print(Summary.FromString(sess.run(merge_all())), end="")
    value {
      tag: "train/loss"
      simple_value: 0.5
    }
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import GraphKeys, add_to_collection, get_collection, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_proto import make_tensor_proto
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.op_helpers import check_dtype, make_op
from dtf_notebook.summary.histogram import histogram_proto
from dtf_notebook.summary.messages import Summary, SummaryMetadata

_log = logging.getLogger(__name__)

_REAL_TYPES = (
    dtypes.float32,
    dtypes.float64,
    dtypes.float16,
    dtypes.bfloat16,
    dtypes.int32,
    dtypes.int64,
    dtypes.int16,
    dtypes.int8,
    dtypes.uint8,
)
_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


# ---- kernels ------------------------------------------------------------------------------------
def _scalar_string(data: bytes) -> np.ndarray:
    return np.array(data, dtype=object)


def _numpy(value: Any) -> np.ndarray:
    """A kernel input as a float64 numpy array (summaries are computed on the host)."""
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", torch.float64).numpy()
    return np.asarray(value, dtype=np.float64)


def _shape_text(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _tag(tags: np.ndarray, what: str) -> str:
    if tags.shape != ():
        raise errors.InvalidArgumentError(None, None, f"{what} must be scalar, got shape {_shape_text(tags.shape)}")
    return _text(tags[()])


def _text(value: Any) -> str:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)


def _scalar_summary_kernel(op: Any, ctx: Any):
    def run(tags: np.ndarray, values: Any) -> np.ndarray:
        numbers = _numpy(values)
        if tags.shape != numbers.shape:
            single = f" (tag '{_text(tags[()])}')" if tags.shape == () else ""
            raise errors.InvalidArgumentError(
                None,
                None,
                f"tags and values not the same shape: {_shape_text(tags.shape)} != "
                f"{_shape_text(numbers.shape)}{single}",
            )
        summary = Summary()
        for tag, number in zip(tags.reshape(-1), numbers.reshape(-1)):
            summary.value.add(tag=_text(tag), simple_value=float(number))
        return _scalar_string(summary.SerializeToString())

    return run


def _histogram_summary_kernel(op: Any, ctx: Any):
    def run(tag: np.ndarray, values: Any) -> np.ndarray:
        numbers = _numpy(values)
        if np.isnan(numbers).any():
            raise errors.InvalidArgumentError(None, None, f"Nan in summary histogram for: {op.name}")
        if np.isinf(numbers).any():
            raise errors.InvalidArgumentError(None, None, f"Infinity in summary histogram for: {op.name}")
        summary = Summary(value=[Summary.Value(tag=_tag(tag, "tags"), histo=histogram_proto(numbers))])
        return _scalar_string(summary.SerializeToString())

    return run


def _tensor_summary_kernel(op: Any, ctx: Any):
    def run(tag: np.ndarray, tensor: Any, serialized_metadata: np.ndarray) -> np.ndarray:
        if isinstance(tensor, torch.Tensor):
            array = tensor.detach().cpu()
            array = (
                array.float().numpy().astype(dtypes.bfloat16.np_dtype)
                if array.dtype is torch.bfloat16
                else array.numpy()
            )
        else:
            array = np.asarray(tensor)
        value = Summary.Value(tag=_tag(tag, "tag"), tensor=make_tensor_proto(array))
        value.metadata.ParseFromString(serialized_metadata[()])
        return _scalar_string(Summary(value=[value]).SerializeToString())

    return run


def _merge_summary_kernel(op: Any, ctx: Any):
    def run(*inputs: np.ndarray) -> np.ndarray:
        merged = Summary()
        seen: set[str] = set()
        for serialized in inputs:
            for data in np.asarray(serialized, dtype=object).reshape(-1):
                try:
                    summary = Summary.FromString(data)
                except ValueError:
                    raise errors.InvalidArgumentError(None, None, "Could not parse one of the summary inputs") from None
                for value in summary.value:
                    # Tensor summaries may leave the tag empty; only named values must be unique.
                    if value.tag and value.tag in seen:
                        raise errors.InvalidArgumentError(
                            None, None, f"Duplicate tag {value.tag} found in summary inputs"
                        )
                    seen.add(value.tag)
                    merged.value.append(value)
        return _scalar_string(merged.SerializeToString())

    return run


def _scalar_string_output(op: Any) -> list[tuple[dtypes.DType, TensorShape]]:
    return [(dtypes.string, TensorShape([]))]


for _type, _kernel in (
    ("ScalarSummary", _scalar_summary_kernel),
    ("HistogramSummary", _histogram_summary_kernel),
    ("TensorSummaryV2", _tensor_summary_kernel),
    ("MergeSummary", _merge_summary_kernel),
):
    op_registry.register_op(
        _type, infer=_scalar_string_output, kernel=_kernel, grad=op_registry.NOT_DIFFERENTIABLE, cpu_only=True
    )


# ---- builders -----------------------------------------------------------------------------------
def clean_tag(name: str | None) -> str | None:
    """Replaces characters TensorBoard does not allow in tags by ``_`` and drops leading slashes.

    Example:
        >>> clean_tag("/loss (avg)")
        'loss__avg_'
    """
    if name is None:
        return None
    new_name = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
    if new_name != name:
        _log.info("Summary name %s is illegal; using %s instead.", name, new_name)
    return new_name


@contextlib.contextmanager
def summary_scope(
    name: str, family: str | None = None, default_name: str | None = None, values: Any = None
) -> Iterator[tuple[str, str]]:
    """Opens the name scope of a summary op and yields ``(tag, scope)`` (TF1's ``summary_scope``).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with summary_scope("acc", family="eval") as (tag, scope):
        ...         pass
        >>> tag, scope
        ('eval/eval/acc', 'eval/acc/')
    """
    name = clean_tag(name)
    family = clean_tag(family)
    base = name if family is None else f"{family}/{name}"
    with name_scope(base, default_name, values) as scope:
        tag = scope.rstrip("/") if family is None else f"{family}/{scope.rstrip('/')}"
        yield tag, scope


def _collect(value: Tensor, collections: Sequence[str] | None, default: Sequence[str]) -> None:
    for key in default if collections is None else collections:
        add_to_collection(key, value)


def scalar(name: str, tensor: Any, collections: Sequence[str] | None = None, family: str | None = None) -> Tensor:
    """A summary holding one real number (``tf.summary.scalar``).

    Args:
        name: The summary's name; with the enclosing name scope it makes the tag.
        tensor: A real numeric scalar tensor (or value).
        collections: Collections to add the summary to (default ``[GraphKeys.SUMMARIES]``).
        family: Optional tag prefix, shown as a TensorBoard tab.

    Returns:
        A scalar string tensor: the serialized ``Summary``.

    Raises:
        TypeError: ``tensor`` is not of a real numeric type.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     s = scalar("lr", 0.1, family="opt")
        ...     with tf.Session() as sess:
        ...         print(Summary.FromString(sess.run(s)).value[0].tag)
        opt/opt/lr
    """
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        values = convert_to_tensor(tensor, name="values")
        check_dtype(values, _REAL_TYPES, "ScalarSummary", "values")
        tags = constant(tag, dtype=dtypes.string, name="tags")
        value = make_op("ScalarSummary", [tags, values], name=scope).outputs[0]
    _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


def histogram(name: str, values: Any, collections: Sequence[str] | None = None, family: str | None = None) -> Tensor:
    """A summary holding a histogram of ``values`` over TF's default buckets (``tf.summary.histogram``).

    Running it fails with ``InvalidArgumentError`` when ``values`` holds NaN or infinity.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     h = histogram("weights", tf.constant([1.0, 2.0, 2.0]))
        ...     with tf.Session() as sess:
        ...         print(Summary.FromString(sess.run(h)).value[0].histo.num)
        3.0
    """
    with summary_scope(name, family, default_name="HistogramSummary", values=[values]) as (tag, scope):
        values = convert_to_tensor(values, name="values")
        check_dtype(values, _REAL_TYPES, "HistogramSummary", "values")
        tag_tensor = constant(tag, dtype=dtypes.string, name="tag")
        value = make_op("HistogramSummary", [tag_tensor, values], name=scope).outputs[0]
    _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


def tensor_summary(
    name: str,
    tensor: Any,
    summary_description: str | None = None,
    collections: Sequence[str] | None = None,
    summary_metadata: SummaryMetadata | None = None,
    family: str | None = None,
    display_name: str | None = None,
) -> Tensor:
    """A summary holding a whole tensor as a ``TensorProto`` (``tf.summary.tensor_summary``).

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.framework.tensor_proto import make_ndarray
        >>> with tf.Graph().as_default():
        ...     t = tensor_summary("m", tf.constant([[1, 2]]), display_name="matrix")
        ...     with tf.Session() as sess:
        ...         value = Summary.FromString(sess.run(t)).value[0]
        >>> value.metadata.display_name, make_ndarray(value.tensor)
        ('matrix', array([[1, 2]], dtype=int32))
    """
    metadata = (
        SummaryMetadata()
        if summary_metadata is None
        else SummaryMetadata.FromString(summary_metadata.SerializeToString())
    )
    if summary_description is not None:
        metadata.summary_description = summary_description
    if display_name is not None:
        metadata.display_name = display_name
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        tensor = convert_to_tensor(tensor, name="tensor")
        tag_tensor = constant(tag, dtype=dtypes.string, name="tag")
        meta = constant(metadata.SerializeToString(), dtype=dtypes.string, name="serialized_summary_metadata")
        value = make_op("TensorSummaryV2", [tag_tensor, tensor, meta], name=scope).outputs[0]
    _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


def text(name: str, tensor: Any, collections: Sequence[str] | None = None) -> Tensor:
    """A summary of a string tensor shown by TensorBoard's text dashboard (``tf.summary.text``).

    Raises:
        ValueError: ``tensor`` is not a string tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     t = text("notes", tf.constant("hello"))
        ...     with tf.Session() as sess:
        ...         value = Summary.FromString(sess.run(t)).value[0]
        >>> value.metadata.plugin_data.plugin_name, value.tensor.string_val[0]
        ('text', b'hello')
    """
    tensor = convert_to_tensor(tensor)
    if tensor.dtype is not dtypes.string:
        raise ValueError(f"Expected tensor {tensor.name} to have dtype string, got {tensor.dtype}")
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name, tensor, summary_metadata=metadata, collections=collections)


def merge(inputs: Sequence[Any], collections: Sequence[str] | None = None, name: str | None = None) -> Tensor:
    """One summary holding the values of all ``inputs`` (``tf.summary.merge``).

    Running it fails with ``InvalidArgumentError`` when two inputs use the same tag.

    Raises:
        ValueError: ``inputs`` is empty.
        TypeError: an input is not a string tensor.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     m = merge([scalar("a", 1.0), scalar("b", 2.0)])
        ...     with tf.Session() as sess:
        ...         print([v.tag for v in Summary.FromString(sess.run(m)).value])
        ['a', 'b']
    """
    inputs = list(inputs)
    if not inputs:
        raise ValueError("List argument 'inputs' to 'MergeSummary' Op with length 0 shorter than minimum length 1.")
    with name_scope(name, "Merge", inputs):
        tensors = [convert_to_tensor(t) for t in inputs]
        for t in tensors:
            if t.dtype is not dtypes.string:
                raise TypeError(
                    f"Input to MergeSummary must be serialized summaries (strings), got {t.name} of {t.dtype}"
                )
        value = make_op("MergeSummary", tensors, name=name or "MergeSummary").outputs[0]
    _collect(value, collections, [])
    return value


def merge_all(key: str = GraphKeys.SUMMARIES, scope: str | None = None, name: str | None = None) -> Tensor | None:
    """Merges every summary in collection ``key`` (filtered by ``scope``); None when there is none.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     print(merge_all())
        ...     _ = scalar("x", 1.0)
        ...     print(merge_all().op.type)
        None
        MergeSummary
    """
    summaries = get_collection(key, scope=scope)
    if not summaries:
        return None
    return merge(summaries, name=name)


__all__ = ["clean_tag", "histogram", "merge", "merge_all", "scalar", "summary_scope", "tensor_summary", "text"]
