"""dtf_notebook: TensorFlow 1.x's graph API and distributed runtime, executed by PyTorch.

``import dtf_notebook as dtf`` gives the same names as ``import dtf_notebook.compat.v1 as tf``. The package's
root loads that namespace on the first name asked of it, so a process that imports only a part of the package
(a task forked from a local cluster's template, the ``dtf-cluster`` command, the Jupyter server extension) does
not pay for the rest.

Example:
    >>> import dtf_notebook as dtf
    >>> with dtf.Graph().as_default():
    ...     with dtf.Session() as sess:
    ...         sess.run(dtf.constant(1.5))
    np.float32(1.5)
"""

import importlib as _importlib
import importlib.util as _importlib_util
import sys as _sys
import types as _types

__version__ = "0.1.0"

# Names that are both a subpackage here and a TF1 module of another shape: ``dtf_notebook.data`` answers
# ``tf.data`` (compat.v1's), whichever was imported first. ``train`` and ``summary`` stay the packages, which
# answer the same tf.train / tf.summary names.
_COMPAT_FIRST = frozenset({"data", "estimator", "feature_column", "layers"})


def _compat_v1() -> _types.ModuleType:
    return _importlib.import_module("dtf_notebook.compat.v1")


class _PackageRoot(_types.ModuleType):
    """The package's module: TF1's names load on first use (PEP 562's ``__getattr__``, on a module class so
    that the import system's binding of a subpackage cannot shadow a compat.v1 module of the same name)."""

    def __setattr__(self, name: str, value: object) -> None:
        if name in _COMPAT_FIRST and isinstance(value, _types.ModuleType) and value.__name__ == f"{__name__}.{name}":
            return  # the import system binding the subpackage: tf.<name> stays compat.v1's module
        super().__setattr__(name, value)

    def __getattr__(self, name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        if name not in _COMPAT_FIRST and _importlib_util.find_spec(f"{__name__}.{name}") is not None:
            value: object = _importlib.import_module(f"{__name__}.{name}")  # binds itself on the package
        else:
            try:
                value = getattr(_compat_v1(), name)
            except AttributeError:
                raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
        super().__setattr__(name, value)
        return value

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {n for n in dir(_compat_v1()) if not n.startswith("_")})


_sys.modules[__name__].__class__ = _PackageRoot

# Every op registers its builder, kernel and gradient on import, so that any graph (imported from a file, or sent to
# a task) finds them, whatever part of the package a process imported.
_importlib.import_module("dtf_notebook.ops")


def _cluster_file_key(address: str) -> object:
    """The key of this user's local cluster with a task at ``address`` (its cluster file says), or None."""
    from dtf_notebook.notebook.cluster_files import key_for_address

    return key_for_address(address)


# A client of a notebook's locked local cluster, in any process of the same user, finds its key by address.
_importlib.import_module("dtf_notebook.distributed.keyring").add_source(_cluster_file_key)


def _kernel_progress_bar(**tqdm_kwargs: object) -> object:
    """A training progress bar in a Jupyter kernel: the notebook layer's widget with its static copy."""
    from dtf_notebook.notebook.progress_bar import progress_bar

    return progress_bar(**tqdm_kwargs)


# Training (a lower layer) draws its bars in a kernel with the notebook layer's, imported only when one is made.
_importlib.import_module("dtf_notebook.frontend").register_kernel_progress_bar(_kernel_progress_bar)


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext dtf_notebook``: registers the ``%dtf_cluster`` magic (IPython is imported only now).

    Example:
        >>> from IPython.core.interactiveshell import InteractiveShell
        >>> load_ipython_extension(InteractiveShell.instance())
    """
    from dtf_notebook.notebook.extension import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: object) -> None:
    """``%unload_ext dtf_notebook``: removes the ``%dtf_cluster`` magic; running clusters keep running.

    Example:
        >>> from IPython.core.interactiveshell import InteractiveShell
        >>> unload_ipython_extension(InteractiveShell.instance())
    """
    from dtf_notebook.notebook.extension import unload_ipython_extension as unload

    unload(ipython)
