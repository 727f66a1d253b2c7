"""The IPython extension: ``%load_ext dtf_notebook`` (or ``%load_ext dtf_notebook.notebook.extension``).

Loading registers the ``%dtf_cluster`` magic (see :mod:`~dtf_notebook.notebook.magics`) and starts no
process: the task template starts with the first cluster this kernel starts (or with
:func:`~dtf_notebook.notebook.local_cluster.prewarm`), so a kernel that only connects to another's cluster
never pays for one. (Training shows progress bars in any kernel, loaded or not: see
:mod:`~dtf_notebook.train.progress_hook`.) Unloading removes the magic and stops its refreshing
tables; clusters keep running (they stop when the kernel exits, or with ``%dtf_cluster stop``).

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

from typing import Any

__all__ = ["load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython: Any) -> None:
    """Registers ``%dtf_cluster`` on ``ipython`` (and starts nothing).

    Example:
        >>> from IPython.core.interactiveshell import InteractiveShell
        >>> load_ipython_extension(InteractiveShell.instance())
    """
    from dtf_notebook.notebook.magics import ClusterMagics

    ipython.register_magics(ClusterMagics(ipython))


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
