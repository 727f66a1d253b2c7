"""The notebook layer: local clusters for notebooks (and, with IPython installed, magics and widgets).

Importing this package imports nothing heavy: each name loads its module on first use, so
``python -m dtf_notebook.notebook.task_template`` and the ``dtf-cluster`` command stay light, and IPython
is imported only by the parts that need it.

Example:
    >>> from dtf_notebook.notebook import LocalCluster
    >>> LocalCluster.__module__
    'dtf_notebook.notebook.local_cluster'
"""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "LocalCluster": "dtf_notebook.notebook.local_cluster",
    "ClusterStartError": "dtf_notebook.notebook.local_cluster",
    "prewarm": "dtf_notebook.notebook.local_cluster",
    "running_clusters": "dtf_notebook.notebook.local_cluster",
    "list_clusters": "dtf_notebook.notebook.cluster_files",
    "ClusterWidget": "dtf_notebook.notebook.cluster_widget",
    "show_placement": "dtf_notebook.notebook.placement_graph",
    "VariableWatcher": "dtf_notebook.notebook.variable_watcher",
    "ProgressBarHook": "dtf_notebook.train.progress_hook",
    "enable_progress_bars": "dtf_notebook.train.progress_hook",
    "disable_progress_bars": "dtf_notebook.train.progress_hook",
    "ClusterMagics": "dtf_notebook.notebook.magics",
    "load_ipython_extension": "dtf_notebook.notebook.extension",
    "unload_ipython_extension": "dtf_notebook.notebook.extension",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
