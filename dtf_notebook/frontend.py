"""Which front end this process serves: whether it runs in a Jupyter kernel.

Both the training layer (a progress bar where someone watches) and the notebook layer (widgets or their
HTML/text fallbacks) ask; neither imports IPython for it.

Example:
    >>> jupyter_kernel()  # the doctests run in no kernel
    False
"""

from __future__ import annotations

import sys

__all__ = ["jupyter_kernel"]


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
