"""Which front end this process serves: whether it runs in a Jupyter kernel.

Both the training layer (a progress bar where someone watches) and the notebook layer (widgets or their
HTML/text fallbacks) ask, and error messages add a hint for code re-run cell by cell; none imports IPython
for it.

Example:
    >>> jupyter_kernel()  # the doctests run in no kernel
    False
"""

from __future__ import annotations

import sys

__all__ = ["ipython_shell", "jupyter_kernel"]


def jupyter_kernel() -> bool:
    """True when this code runs in a Jupyter kernel (not a script, nor a plain IPython terminal).

    Never imports IPython: a kernel has imported it already.

    Example:
        >>> jupyter_kernel()  # the doctests run in no kernel
        False
    """
    if "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    shell = get_ipython()
    # Only a kernel's shell has a `kernel` (ipykernel's ZMQInteractiveShell); a terminal's has none.
    return shell is not None and getattr(shell, "kernel", None) is not None


def ipython_shell() -> bool:
    """True when this code runs under IPython (a Jupyter kernel or IPython's terminal): code re-run by cell.

    Never imports IPython.

    Example:
        >>> ipython_shell() >= jupyter_kernel()  # every kernel runs IPython; IPython's terminal is no kernel
        True
    """
    if "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    return get_ipython() is not None
