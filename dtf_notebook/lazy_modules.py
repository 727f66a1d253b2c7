"""torch, ZeroMQ and safetensors as modules that import themselves on first use.

Building a graph, or talking to a cluster from a client, is plain Python: neither needs torch (about a second to
import), ZeroMQ or safetensors. Modules that use them only inside kernels, sockets or checkpoint files import them
from here instead (``from dtf_notebook.lazy_modules import torch``), so ``import dtf_notebook.compat.v1`` loads
none of them, and the first kernel a session builds does. This is TF's ``LazyLoader`` (tensorflow/python/util/
lazy_loader.py) without its per-access cost: once the real module is loaded, a :class:`LazyModule` takes over its
attributes and becomes a plain module object, so ``torch.add`` in a kernel is a dict lookup, as after
``import torch``.

A module that uses one of these at its own top level (``torch.float32`` in a table) would import it there:
such tables are built on first use instead (``functools.cache``).

Example:
    >>> lazy = LazyModule("json")
    >>> type(lazy).__name__, lazy.dumps([1]), type(lazy).__name__
    ('LazyModule', '[1]', 'module')
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

__all__ = ["LazyModule", "F", "load", "loaded", "safetensors", "safetensors_torch", "torch", "zmq"]


class LazyModule(types.ModuleType):
    """A stand-in for the module ``name`` that imports it on first attribute access and then becomes it.

    After the import the stand-in holds the real module's attributes and is a plain ``types.ModuleType`` (an
    attribute the real module gains later, or answers through its own ``__getattr__``, is looked up there).

    Args:
        name: The module's dotted name, e.g. ``"torch.nn.functional"``.

    Example:
        >>> fractions = LazyModule("fractions")
        >>> fractions.Fraction(1, 2) + fractions.Fraction(1, 3)
        Fraction(5, 6)
    """

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__dict__["_lazy_name"] = name

    def __getattr__(self, attr: str) -> Any:
        real = importlib.import_module(self.__dict__["_lazy_name"])
        namespace = self.__dict__
        namespace.update(real.__dict__)
        # PEP 562: a miss on the plain module asks the real one (submodules imported later, its own __getattr__).
        namespace["__getattr__"] = lambda name: getattr(real, name)
        self.__class__ = types.ModuleType
        return getattr(real, attr)


def load(*modules: Any) -> None:
    """Imports the real modules behind these stand-ins now (those already imported are left as they are).

    A process that forks workers (the local cluster's task template) imports them once, before forking.

    Example:
        >>> colorsys = LazyModule("colorsys")
        >>> load(colorsys)
        >>> type(colorsys).__name__, colorsys.rgb_to_hsv(1.0, 0.0, 0.0)
        ('module', (0.0, 1.0, 1.0))
    """
    for module in modules:
        if type(module) is LazyModule:
            module.__getattr__("__name__")


def loaded(name: str) -> bool:
    """Whether the real module ``name`` has been imported in this process (by anyone).

    Example:
        >>> loaded("sys"), loaded("no_such_module_here")
        (True, False)
    """
    return name in sys.modules


torch: Any = LazyModule("torch")
#: ``torch.nn.functional``, the ``F`` of torch code.
F: Any = LazyModule("torch.nn.functional")
zmq: Any = LazyModule("zmq")
safetensors: Any = LazyModule("safetensors")
#: ``safetensors.torch`` (which imports torch).
safetensors_torch: Any = LazyModule("safetensors.torch")
