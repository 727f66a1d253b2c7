"""Small ops input pipelines are built from: ``tf.count_up_to`` (``CountUpTo``, how ``num_epochs`` ends an input
with ``OutOfRangeError``) and ``tf.matching_files`` (``MatchingFiles``, the files ``match_filenames_once`` names).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     epochs = tf.Variable(0, name="epochs")
    ...     step = count_up_to(epochs, 2)
    ...     with tf.Session() as sess:
    ...         sess.run(epochs.initializer)
    ...         print(sess.run(step), sess.run(step))
    ...         try:
    ...             sess.run(step)
    ...         except tf.errors.OutOfRangeError as e:
    ...             print(e.message.splitlines()[0])
    0 1
    Reached limit of 2
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape, scalar
from dtf_notebook.lib.io.matching_paths import glob
from dtf_notebook.ops.op_helpers import make_op

__all__ = ["count_up_to", "matching_files"]


# ---- CountUpTo ---------------------------------------------------------------------------------------
def _count_infer(op: Operation) -> list:
    ref = op.inputs[0]
    if ref.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"CountUpTo needs an int32 or int64 variable, got {ref.dtype.base_dtype.name} ({op.name})")
    ref.shape.assert_is_compatible_with(scalar())
    return [(ref.dtype.base_dtype, scalar())]


def _count_kernel(op: Operation, ctx: Any) -> Any:
    limit = int(op.get_attr("limit"))

    def run(resource: Any) -> Any:
        with resource.lock:  # the read, the check and the increment are one step, as TF's kernel holds its lock
            current = resource.read()
            if int(current) >= limit:
                raise errors.OutOfRangeError(None, op, f"Reached limit of {limit}")
            before = current.clone()
            current.add_(1)
        return before

    return run


op_registry.register_op(
    "CountUpTo",
    infer=_count_infer,
    kernel=_count_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    ref_inputs=(0,),
    stateful=True,
)


def count_up_to(ref: Any, limit: int, name: str | None = None) -> Tensor:
    """Increments the int variable ``ref`` until it reaches ``limit`` (TF1's ``tf.count_up_to``).

    Returns:
        The value before the increment; once it has reached ``limit``, running the op is an ``OutOfRangeError``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     count_up_to(tf.Variable(0, name="n"), 3).op.type
        'CountUpTo'
    """
    ref_t = ref._ref() if hasattr(ref, "_ref") else ref
    if not getattr(ref_t, "is_ref", False):
        raise TypeError(f"count_up_to needs a variable, got {ref!r}")
    return make_op("CountUpTo", [ref_t], {"limit": int(limit)}, name=name or "CountUpTo").outputs[0]


# ---- MatchingFiles -----------------------------------------------------------------------------------
def _matching_kernel(op: Operation, ctx: Any) -> Any:
    files = ctx.state.files

    def run(pattern: Any) -> np.ndarray:
        patterns = [bytes(p).decode("utf-8") for p in np.asarray(pattern, dtype=object).reshape(-1)]
        found = sorted({match for p in patterns for match in glob(files.check(p, "read"))})
        out = np.empty(len(found), dtype=object)
        out[:] = [f.encode("utf-8") for f in found]
        return out

    return run


def _matching_infer(op: Operation) -> list:
    if op.inputs[0].shape.ndims not in (None, 0, 1):
        raise ValueError(f"MatchingFiles takes a scalar or vector of patterns, got shape {op.inputs[0].shape}")
    return [(dtypes.string, TensorShape([None]))]


op_registry.register_op(
    "MatchingFiles",
    infer=_matching_infer,
    kernel=_matching_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    stateful=True,
    cpu_only=True,
)


def matching_files(pattern: Any, name: str | None = None) -> Tensor:
    """The sorted file names matching a glob ``pattern`` (or any of a vector of patterns), read when it runs
    (TF1's ``tf.matching_files``); local paths and fsspec URLs.

    Example:
        >>> import dtf_notebook as tf
        >>> from dtf_notebook.lib.io import file_io
        >>> for part in ("b", "a"):
        ...     file_io.write_string_to_file(f"memory://matching_doc/part-{part}.csv", "")
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(matching_files("memory://matching_doc/part-*.csv")))
        [b'memory://matching_doc/part-a.csv' b'memory://matching_doc/part-b.csv']
    """
    pattern_t = convert_to_tensor(pattern, dtype=dtypes.string, name="pattern")
    return make_op("MatchingFiles", [pattern_t], {}, name=name or "MatchingFiles").outputs[0]
