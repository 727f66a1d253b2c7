"""The IPython extension: ``%load_ext dtf_notebook`` (or ``%load_ext dtf_notebook.notebook.extension``).

Loading registers the ``%dtf_cluster`` magic (see :mod:`~dtf_notebook.notebook.magics`), starts the task
template in the background so the first ``%dtf_cluster start`` is fast (see
:func:`~dtf_notebook.notebook.local_cluster.prewarm`), and turns on the notebook progress bars where that
module is present. Unloading removes the magic and stops its refreshing tables; clusters keep running
(they stop when the kernel exits, or with ``%dtf_cluster stop``).

Example:
    >>> from IPython.core.interactiveshell import InteractiveShell
    >>> shell = InteractiveShell.instance()
    >>> load_ipython_extension(shell)
    >>> "dtf_cluster" in shell.magics_manager.magics["line"]
    True
    >>> unload_ipython_extension(shell)
    >>> "dtf_cluster" in shell.magics_manager.magics["line"]
    False
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

__all__ = ["load_ipython_extension", "unload_ipython_extension"]

_PROGRESS = "dtf_notebook.notebook.progress"


def _prewarm() -> None:
    from dtf_notebook.notebook.local_cluster import prewarm

    prewarm()


def _enable_progress_bars() -> None:
    try:
        progress = importlib.import_module(_PROGRESS)
    except ModuleNotFoundError as e:
        if e.name != _PROGRESS:
            raise  # the module is there but something it needs is not: say so
        return
    enable = getattr(progress, "enable_progress_bars", None)
    if enable is not None:
        enable()


def load_ipython_extension(ipython: Any) -> None:
    """Registers ``%dtf_cluster`` on ``ipython`` and prepares for a fast first cluster start.

    Example:
        >>> from IPython.core.interactiveshell import InteractiveShell
        >>> load_ipython_extension(InteractiveShell.instance())
    """
    from dtf_notebook.notebook.magics import ClusterMagics

    ipython.register_magics(ClusterMagics(ipython))
    # The template imports torch in its own process; starting it must not hold up the cell either.
    threading.Thread(target=_prewarm, name="dtf-prewarm", daemon=True).start()
    _enable_progress_bars()


def unload_ipython_extension(ipython: Any) -> None:
    """Removes ``%dtf_cluster`` from ``ipython`` and stops its refreshing tables (clusters keep running).

    Example:
        >>> from IPython.core.interactiveshell import InteractiveShell
        >>> unload_ipython_extension(InteractiveShell.instance())
    """
    from dtf_notebook.notebook.magics import ClusterMagics

    manager = ipython.magics_manager
    magics = manager.registry.pop(ClusterMagics.__name__, None)
    if magics is not None:
        magics.close()
    manager.magics["line"].pop("dtf_cluster", None)
