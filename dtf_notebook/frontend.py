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
from collections.abc import Callable
from typing import Any

__all__ = ["ipython_shell", "jupyter_kernel", "kernel_progress_bar", "register_kernel_progress_bar"]

BarFactory = Callable[..., Any]
_kernel_bar: BarFactory | None = None  # what draws a training bar in a kernel (registered by the notebook layer)


def register_kernel_progress_bar(factory: BarFactory | None) -> BarFactory | None:
    """Makes ``factory(**tqdm_kwargs)`` draw the default training bars in a Jupyter kernel (None: ``tqdm.auto``'s);
    returns the factory it replaces.

    The notebook layer registers its bar this way (``import dtf_notebook`` does), so that the training layer never
    imports it.

    Example:
        >>> previous = register_kernel_progress_bar(None)
        >>> register_kernel_progress_bar(previous) is None
        True
    """
    global _kernel_bar
    previous, _kernel_bar = _kernel_bar, factory
    return previous


def kernel_progress_bar() -> BarFactory | None:
    """The factory :func:`register_kernel_progress_bar` registered, or None.

    Example:
        >>> import dtf_notebook
        >>> kernel_progress_bar() is dtf_notebook._kernel_progress_bar
        True
    """
    return _kernel_bar


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
