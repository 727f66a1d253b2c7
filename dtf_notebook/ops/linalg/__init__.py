"""Linear algebra on (batches of) matrices, TF1's ``tf.linalg`` ops; ``dtf_notebook.compat.v1.linalg`` gathers them.

Modules, from the bottom up: ``common`` (shape checks and the mapping of torch's linear-algebra failures to TF's
errors), ``solvers`` (``MatrixInverse``, ``MatrixDeterminant``, ``LogMatrixDeterminant``, ``MatrixSolve``,
``MatrixTriangularSolve``, ``Cross``), ``decompositions`` (``Cholesky``, ``Qr``, ``Svd``, ``SelfAdjointEigV2``,
``MatrixSquareRoot``, ``MatrixExponential``, ``Lu``) and ``composites`` (TF's Python-level functions built from those:
``trace``, ``logdet``, ``cholesky_solve``, ``matrix_solve_ls``, ``norm``, ``pinv``, ...). Importing a module
registers its ops; each op's gradient is TF's.
"""

from dtf_notebook.ops.linalg import common, composites, decompositions, solvers  # noqa: F401 - registrations
