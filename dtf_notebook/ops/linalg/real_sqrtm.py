"""The real square root of a real matrix as TF's ``MatrixSquareRoot`` computes it (Eigen's ``MatrixBase::sqrt``).

Higham's method ("Computing real square roots of a real matrix", 1987): the real Schur form ``A = U T U^T``, the
square root of the quasi-triangular ``T`` block by block (1x1 blocks by ``sqrt``, 2x2 blocks of complex eigenvalue
pairs through their eigenvectors, the blocks above the diagonal by small Sylvester equations, column by column),
then ``U sqrt(T) U^T``. A matrix with a negative real eigenvalue has no real square root: its 1x1 block's ``sqrt``
is NaN, which the last products spread over the whole result, as in TF (scipy's ``sqrtm`` would give a complex
root instead). A singular matrix without a square root gives the same infinities and NaNs as TF's products.

Example:
    >>> import numpy as np
    >>> print(real_sqrtm(np.array([[4.0, 0.0], [0.0, 9.0]])))
    [[2. 0.]
     [0. 3.]]
    >>> bool(np.isnan(real_sqrtm(np.array([[-1.0, 0.0], [0.0, 4.0]]))).all())
    True
"""

from __future__ import annotations

import numpy as np

__all__ = ["real_sqrtm"]


def _two_by_two_root(block: np.ndarray) -> np.ndarray:
    """The principal root of a 2x2 block with a complex conjugate pair of eigenvalues (Eigen's EigenSolver path)."""
    values, vectors = np.linalg.eig(block)
    return (vectors @ np.diag(np.sqrt(values)) @ np.linalg.inv(vectors)).real


def _sylvester(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``X`` with ``a X + X b = c`` for blocks of at most 2x2 (vectorised: ``(I kron a + b^T kron I) vec X``)."""
    m, n = c.shape
    system = np.kron(np.eye(n), a) + np.kron(b.T, np.eye(m))
    with np.errstate(all="ignore"):
        try:
            x = np.linalg.solve(system, c.reshape(-1, order="F"))
        except np.linalg.LinAlgError:  # a singular system: Eigen's full-pivot LU divides by zero
            x = np.full(m * n, np.inf) * np.sign(c.reshape(-1, order="F") + 0.0)
    return x.reshape((m, n), order="F")


def _quasi_triangular_root(t: np.ndarray) -> np.ndarray:
    n = t.shape[0]
    root = np.zeros_like(t)
    starts, i = [], 0
    while i < n:  # the diagonal blocks: 1x1 or 2x2 (a nonzero subdiagonal entry)
        size = 2 if i < n - 1 and t[i + 1, i] != 0 else 1
        starts.append((i, size))
        if size == 1:
            root[i, i] = np.sqrt(t[i, i])  # NaN for a negative eigenvalue, as Eigen's
        else:
            root[i : i + 2, i : i + 2] = _two_by_two_root(t[i : i + 2, i : i + 2])
        i += size
    # Above the diagonal: block column by block column, each column from the diagonal up (Eigen's order).
    for jb, (j, sj) in enumerate(starts):
        for i, si in reversed(starts[:jb]):
            rhs = t[i : i + si, j : j + sj].copy()
            inner = slice(i + si, j)
            if j > i + si:
                rhs -= root[i : i + si, inner] @ root[inner, j : j + sj]
            if si == 1 and sj == 1:
                root[i, j] = rhs[0, 0] / (root[i, i] + root[j, j])
            else:
                root[i : i + si, j : j + sj] = _sylvester(
                    root[i : i + si, i : i + si], root[j : j + sj, j : j + sj], rhs
                )
    return root


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` with IEEE semantics for infinities (BLAS may skip zero factors, so ``inf * 0`` would not be NaN)."""
    if np.isfinite(a).all() and np.isfinite(b).all():
        return a @ b
    return (a[:, :, None] * b[None, :, :]).sum(axis=1)


def real_sqrtm(matrix: np.ndarray) -> np.ndarray:
    """The real square root of one real square matrix, NaN where it has none (see the module docstring).

    Args:
        matrix: A real ``[n, n]`` array.

    Returns:
        A float64 ``[n, n]`` array ``R`` with ``R @ R = matrix`` where a real root exists.

    Example:
        >>> import numpy as np
        >>> r = real_sqrtm(np.array([[0.0, -1.0], [1.0, 0.0]]))  # a rotation by 90 degrees: the root turns by 45
        >>> np.round(r, 4).tolist()
        [[0.7071, -0.7071], [0.7071, 0.7071]]
    """
    from scipy import linalg  # a dependency of scikit-learn; imported only when a MatrixSquareRoot runs

    a = np.asarray(matrix, dtype=np.float64)
    if a.size == 0:
        return a.copy()
    if not np.isfinite(a).all():
        return np.full_like(a, np.nan)
    t, u = linalg.schur(a, output="real")
    with np.errstate(all="ignore"):
        root = _quasi_triangular_root(t)
        return _product(_product(u, root), u.T)
