"""Resource containers: where variables (and later queues, accumulators) live.

A :class:`ResourceMgr` maps ``(container, name)`` to a resource. Ops name the
default container ``""``; as in TF1 it is called after the task's job
(``localhost`` in a local session), and that is the name that clears it:
``Session.reset(target, ["worker"])`` clears the default container of the
worker tasks, while ``[""]`` names no container. A local ``Session`` owns one
manager; a cluster task owns one that every session on the cluster shares,
which is how two clients see the same variable ``x``.

Example:
    >>> mgr = ResourceMgr("worker")
    >>> v = mgr.lookup_or_create("", "x", lambda: VariableResource("x", None, None))
    >>> mgr.lookup_or_create("", "x", lambda: None) is v
    True
    >>> mgr.cleanup(""), mgr.cleanup("worker")
    ([], ['x'])
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from dtf_notebook import errors


class VariableResource:
    """A variable's storage: a torch tensor (None until initialised) and a lock for ``use_locking``.

    Args:
        name: The variable's shared name.
        dtype: Its DType.
        shape: Its declared static shape (a TensorShape, possibly partial).

    Example:
        >>> v = VariableResource("x", None, None)
        >>> v.is_initialized
        False
    """

    __slots__ = ("name", "dtype", "shape", "value", "lock", "device", "container")

    def __init__(self, name: str, dtype: Any, shape: Any, device: str = "", container: str = "") -> None:
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.value: Any = None
        self.lock = threading.Lock()
        self.device = device
        self.container = container

    @property
    def is_initialized(self) -> bool:
        return self.value is not None

    def read(self) -> Any:
        """The current value.

        Raises:
            FailedPreconditionError: the variable has not been initialised.
        """
        value = self.value
        if value is None:
            raise errors.FailedPreconditionError(None, None, f"Attempting to use uninitialized value {self.name}")
        return value

    def __repr__(self) -> str:
        state = "uninitialized" if self.value is None else f"shape={tuple(self.value.shape)}"
        return f"<VariableResource {self.container}/{self.name} {state}>"


class ResourceMgr:
    """Thread-safe containers of named resources.

    Example:
        >>> mgr = ResourceMgr()
        >>> _ = mgr.lookup_or_create("c1", "v", lambda: object())
        >>> mgr.containers()
        ['c1']
    """

    def __init__(self, default_container: str = "localhost") -> None:
        #: What the default container (``""`` in ops) is called: the task's job.
        self.default_container = default_container
        self._lock = threading.Lock()
        self._containers: dict[str, dict[str, Any]] = {}
        #: Grows whenever a container is cleared, so cached lookups can tell they are stale.
        self.generation = 0

    def lookup_or_create(self, container: str, name: str, create: Callable[[], Any]) -> Any:
        """Returns resource ``name`` in ``container``, creating it with ``create()`` if absent."""
        items = self._containers.get(container)
        if items is not None:
            found = items.get(name)
            if found is not None:
                return found
        with self._lock:
            items = self._containers.setdefault(container, {})
            found = items.get(name)
            if found is None:
                found = items[name] = create()
            return found

    def lookup(self, container: str, name: str) -> Any:
        """Returns resource ``name`` in ``container``.

        Raises:
            NotFoundError: there is no such resource.
        """
        try:
            return self._containers[container][name]
        except KeyError:
            label = container or self.default_container
            raise errors.NotFoundError(None, None, f"Resource {label}/{name} does not exist.") from None

    def items(self, container: str | None = None) -> list[tuple[str, str, Any]]:
        """``(container, name, resource)`` for every resource (in one container when given)."""
        with self._lock:
            return [
                (c, n, r)
                for c, entries in self._containers.items()
                if container is None or c == container
                for n, r in entries.items()
            ]

    def containers(self) -> list[str]:
        """Names of the containers that hold at least one resource."""
        with self._lock:
            return sorted(c for c, entries in self._containers.items() if entries)

    def cleanup(self, container: str) -> list[str]:
        """Drops every resource of ``container`` (the default one by its name, :attr:`default_container`); returns
        their names. ``""`` names no container, as in TF1."""
        if not container:
            return []
        key = "" if container == self.default_container else container
        with self._lock:
            dropped = self._containers.pop(key, {})
            self.generation += 1
        return sorted(dropped)

    def clear(self) -> None:
        """Drops every resource of every container."""
        with self._lock:
            self._containers.clear()
            self.generation += 1
