"""Array ops: shapes, reshaping, slicing, joining, gathering, padding and filling tensors.

Every op here follows TF1's op type, attrs, default names and static shape
inference, and runs as torch tensor views/copies (numpy object arrays for
strings: ``shape``, ``reshape``, ``stack``, ``concat``, ``gather``,
``boolean_mask``, ``expand_dims`` and most others accept string tensors).
``Tensor.__getitem__`` is installed here and maps Python indexing onto
``StridedSlice`` exactly as TF's ``_slice_helper`` does.

The ops live in the :mod:`dtf_notebook.ops.array` package, one module per family; this module
re-exports the public builders (importing it registers every array op).

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.constant([[0, 1, 2], [3, 4, 5]])
    ...     y = tf.concat([x[:, ::-1], tf.zeros_like(x)], axis=1)
    ...     with tf.Session() as sess:
    ...         print(sess.run(y))
    [[2 1 0 0 0 0]
     [5 4 3 0 0 0]]
"""

from __future__ import annotations

from dtf_notebook.ops.array.concat_split import concat, split
from dtf_notebook.ops.array.fill import fill, one_hot, ones, ones_like, zeros, zeros_like
from dtf_notebook.ops.array.gather import boolean_mask, gather, unique
from dtf_notebook.ops.array.getitem import newaxis
from dtf_notebook.ops.array.pack import stack, unstack
from dtf_notebook.ops.array.pad_tile import pad, tile
from dtf_notebook.ops.array.partition_stitch import dynamic_partition, dynamic_stitch
from dtf_notebook.ops.array.reshape import broadcast_to, expand_dims, reshape, squeeze
from dtf_notebook.ops.array.shape_ops import rank, shape, size
from dtf_notebook.ops.array.slicing import slice, strided_slice
from dtf_notebook.ops.array.transpose import invert_permutation, transpose

__all__ = [
    "newaxis",
    "reshape",
    "transpose",
    "invert_permutation",
    "concat",
    "stack",
    "unstack",
    "split",
    "slice",
    "strided_slice",
    "gather",
    "expand_dims",
    "squeeze",
    "tile",
    "pad",
    "shape",
    "size",
    "rank",
    "zeros_like",
    "ones_like",
    "zeros",
    "ones",
    "fill",
    "one_hot",
    "boolean_mask",
    "broadcast_to",
    "unique",
    "dynamic_partition",
    "dynamic_stitch",
]
