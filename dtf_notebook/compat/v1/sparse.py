"""``tf.sparse``: TF1's sparse-tensor namespace (``tf.sparse.to_dense``, ``tf.sparse.reduce_sum``, ...), the same
functions as the top-level ``tf.sparse_*`` names plus ``from_dense``, ``eye`` and ``expand_dims``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     sp = tf.sparse.from_dense([[0, 3], [4, 0]])
    ...     print(sess.run(tf.sparse.reduce_sum(sp, 1)))
    [3 4]
"""

from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.ops.data_flow_ops import SparseConditionalAccumulator
from dtf_notebook.ops.placeholder_ops import sparse_placeholder as placeholder
from dtf_notebook.ops.sparse.elementwise import sparse_add as add
from dtf_notebook.ops.sparse.elementwise import sparse_mask as mask
from dtf_notebook.ops.sparse.elementwise import sparse_maximum as maximum
from dtf_notebook.ops.sparse.elementwise import sparse_minimum as minimum
from dtf_notebook.ops.sparse.elementwise import sparse_retain as retain
from dtf_notebook.ops.sparse.elementwise import sparse_softmax as softmax
from dtf_notebook.ops.sparse.reductions import sparse_merge as merge
from dtf_notebook.ops.sparse.reductions import sparse_reduce_max as reduce_max
from dtf_notebook.ops.sparse.reductions import sparse_reduce_max_sparse as reduce_max_sparse
from dtf_notebook.ops.sparse.reductions import sparse_reduce_sum as reduce_sum
from dtf_notebook.ops.sparse.reductions import sparse_reduce_sum_sparse as reduce_sum_sparse
from dtf_notebook.ops.sparse.reductions import sparse_tensor_dense_matmul as matmul
from dtf_notebook.ops.sparse.reductions import sparse_tensor_dense_matmul as sparse_dense_matmul
from dtf_notebook.ops.sparse.reductions import sparse_tensor_to_dense as to_dense
from dtf_notebook.ops.sparse.reductions import sparse_to_indicator as to_indicator
from dtf_notebook.ops.sparse.segments import sparse_segment_mean as segment_mean
from dtf_notebook.ops.sparse.segments import sparse_segment_sqrt_n as segment_sqrt_n
from dtf_notebook.ops.sparse.segments import sparse_segment_sum as segment_sum
from dtf_notebook.ops.sparse.structure import from_dense
from dtf_notebook.ops.sparse.structure import sparse_concat as concat
from dtf_notebook.ops.sparse.structure import sparse_expand_dims as expand_dims
from dtf_notebook.ops.sparse.structure import sparse_eye as eye
from dtf_notebook.ops.sparse.structure import sparse_fill_empty_rows as fill_empty_rows
from dtf_notebook.ops.sparse.structure import sparse_reorder as reorder
from dtf_notebook.ops.sparse.structure import sparse_reset_shape as reset_shape
from dtf_notebook.ops.sparse.structure import sparse_reshape as reshape
from dtf_notebook.ops.sparse.structure import sparse_slice as slice  # noqa: A004 - TF's name
from dtf_notebook.ops.sparse.structure import sparse_split as split
from dtf_notebook.ops.sparse.structure import sparse_transpose as transpose
