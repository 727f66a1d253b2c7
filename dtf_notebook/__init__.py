"""dtf_notebook: TensorFlow 1.x's graph API and distributed runtime, executed by PyTorch.

``import dtf_notebook as dtf`` gives the same names as ``import dtf_notebook.compat.v1 as tf``.

Example:
    >>> import dtf_notebook as dtf
    >>> with dtf.Graph().as_default():
    ...     with dtf.Session() as sess:
    ...         sess.run(dtf.constant(1.5))
    np.float32(1.5)
"""

import importlib as _importlib

from dtf_notebook import distributed as _distributed  # noqa: F401 - registers the zmq:// and grpc:// sessions
from dtf_notebook import ops as _ops  # noqa: F401 - registers every op (and the builders lower layers call)
from dtf_notebook.compat.v1 import *  # noqa: F403
from dtf_notebook.compat.v1 import errors, nn

# The star import bound the compat modules ``train`` and ``summary`` over this package's own subpackages of
# those names; put the packages back (they answer the same tf.train / tf.summary names), so that
# ``import dtf_notebook.train.saver`` and ``import dtf_notebook.summary.writer`` keep working.
train = _importlib.import_module("dtf_notebook.train")
summary = _importlib.import_module("dtf_notebook.summary")

__version__ = "0.1.0"


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
_importlib.import_module("dtf_notebook.train.progress_hook").register_kernel_progress_bar(_kernel_progress_bar)


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
