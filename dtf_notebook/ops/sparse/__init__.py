"""TF1's sparse ops: ``tf.sparse_*`` and the ``tf.sparse`` namespace, over ``SparseTensor`` (indices, values,
dense shape).

* :mod:`.structure`: reorder, reshape, transpose, slice, split, concat, fill empty rows, reset shape, expand dims,
  eye, from dense.
* :mod:`.elementwise`: add (sparse + sparse, sparse + dense), maximum/minimum, softmax, retain, mask.
* :mod:`.reductions`: reduce sum/max, sparse x dense matmul, to dense, to indicator, merge, ``sparse_matmul``.
* :mod:`.segments`: ``sparse_segment_sum``/``mean``/``sqrt_n``.
* :mod:`.serialize`: serialize (one or many) and deserialize many.
* :mod:`.edit_distance`: ``tf.edit_distance``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     sp = tf.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2])
    ...     print(sess.run(tf.sparse.to_dense(tf.sparse.transpose(sp))))
    [[0. 2.]
     [1. 0.]]
"""

from dtf_notebook.ops.sparse.edit_distance import *  # noqa: F403
from dtf_notebook.ops.sparse.edit_distance import __all__ as _edit_distance
from dtf_notebook.ops.sparse.elementwise import *  # noqa: F403
from dtf_notebook.ops.sparse.elementwise import __all__ as _elementwise
from dtf_notebook.ops.sparse.reductions import *  # noqa: F403
from dtf_notebook.ops.sparse.reductions import __all__ as _reductions
from dtf_notebook.ops.sparse.segments import *  # noqa: F403
from dtf_notebook.ops.sparse.segments import __all__ as _segments
from dtf_notebook.ops.sparse.serialize import *  # noqa: F403
from dtf_notebook.ops.sparse.serialize import __all__ as _serialize
from dtf_notebook.ops.sparse.structure import *  # noqa: F403
from dtf_notebook.ops.sparse.structure import __all__ as _structure

# The top-level names (``tf.sparse_add``, ...); ``tf.sparse``'s own names are in compat/v1/sparse.py.
_NOT_TOP_LEVEL = {"KeywordRequired", "from_dense", "sparse_concat_v2", "sparse_expand_dims", "sparse_eye"}
__all__ = [
    n
    for n in (*_edit_distance, *_elementwise, *_reductions, *_segments, *_serialize, *_structure)
    if n not in _NOT_TOP_LEVEL
]
