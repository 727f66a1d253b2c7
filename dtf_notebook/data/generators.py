"""The Python generators of ``Dataset.from_generator``, registered by token in this process.

A generator is Python code, and code never crosses a process boundary here: the dataset's graph holds only a
token, and the iterator finds the generator under that token in the registry of the process that runs the
iterator's op. So ``from_generator`` works where the iterator runs in the process that built the dataset (a local
``Session``, or a cluster task whose process built the graph); an iterator placed on another task fails with
``FailedPreconditionError`` naming the generator. TF has the same limit: its generator runs through ``py_func`` in
the Python process that created it.

Example:
    >>> token = register(lambda: iter([1, 2]), "numbers")
    >>> list(lookup(token)())
    [1, 2]
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable
from typing import Any

from dtf_notebook import errors

__all__ = ["register", "lookup"]

_lock = threading.Lock()
_generators: dict[str, tuple[Callable[..., Any], str]] = {}
_ids = itertools.count(1)


def register(generator: Callable[..., Any], label: str) -> str:
    """Registers ``generator`` in this process; returns its token.

    Example:
        >>> register(lambda: iter([]), "empty").startswith("pid")
        True
    """
    with _lock:
        token = f"pid{os.getpid()}-gen{next(_ids)}"
        _generators[token] = (generator, label)
    return token


def lookup(token: str) -> Callable[..., Any]:
    """The generator registered under ``token`` in this process.

    Raises:
        FailedPreconditionError: it was registered in another process (or not at all).

    Example:
        >>> lookup("pid0-gen0")
        Traceback (most recent call last):
        ...
        dtf_notebook.errors.FailedPreconditionError: The generator of Dataset.from_generator (token pid0-gen0) \
is not in this process: a generator runs in the Python process that built the dataset, so its iterator must run \
there too (here: a local session, or a task of the process that built the graph)
    """
    found = _generators.get(token)
    if found is None:
        raise errors.FailedPreconditionError(
            None,
            None,
            f"The generator of Dataset.from_generator (token {token}) is not in this process: a generator runs in "
            "the Python process that built the dataset, so its iterator must run there too (here: a local session, "
            "or a task of the process that built the graph)",
        )
    return found[0]
