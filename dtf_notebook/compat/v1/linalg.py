"""``tf.linalg``: TF1's linear algebra under its ``tf.linalg.*`` names (many are also top-level names).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.linalg.det([[1.0, 2.0], [3.0, 4.0]])))
    -2.0
"""

from dtf_notebook.ops.array.array_extras import matrix_transpose
from dtf_notebook.ops.array.array_extras import matrix_transpose as transpose
from dtf_notebook.ops.array.matrix_diag import diag as tensor_diag
from dtf_notebook.ops.array.matrix_diag import diag_part as tensor_diag_part
from dtf_notebook.ops.array.matrix_diag import eye
from dtf_notebook.ops.array.matrix_diag import matrix_band_part as band_part
from dtf_notebook.ops.array.matrix_diag import matrix_diag as diag
from dtf_notebook.ops.array.matrix_diag import matrix_diag_part as diag_part
from dtf_notebook.ops.array.matrix_diag import matrix_set_diag as set_diag
from dtf_notebook.ops.linalg.composites import (
    adjoint,
    cholesky_solve,
    logdet,
    lu_matrix_inverse,
    lu_reconstruct,
    lu_solve,
    matrix_rank,
    matvec,
    norm,
    normalize,
    pinv,
    trace,
)
from dtf_notebook.ops.linalg.composites import matrix_solve_ls as lstsq
from dtf_notebook.ops.linalg.decompositions import cholesky, expm, lu, qr, svd
from dtf_notebook.ops.linalg.decompositions import matrix_square_root as sqrtm
from dtf_notebook.ops.linalg.decompositions import self_adjoint_eig as eigh
from dtf_notebook.ops.linalg.decompositions import self_adjoint_eigvals as eigvalsh
from dtf_notebook.ops.linalg.solvers import cross, slogdet
from dtf_notebook.ops.linalg.solvers import matrix_determinant as det
from dtf_notebook.ops.linalg.solvers import matrix_inverse as inv
from dtf_notebook.ops.linalg.solvers import matrix_solve as solve
from dtf_notebook.ops.linalg.solvers import matrix_triangular_solve as triangular_solve
from dtf_notebook.ops.math.clip_norm import global_norm
from dtf_notebook.ops.math.einsum import einsum, tensordot
from dtf_notebook.ops.math.reductions import l2_normalize
from dtf_notebook.ops.math_ops import matmul
