"""Resources that need initialising (TF's ``tensorflow/python/ops/resources.py``): registered, initialised, reported.

A resource (a table, a tree ensemble, ...) is registered with its handle, the op that creates it and a boolean
tensor saying whether it exists, in ``GraphKeys.RESOURCES`` (shared, initialised once by the chief) or
``GraphKeys.LOCAL_RESOURCES`` (per session). ``tf.train.Scaffold``'s default init, ready and local-init ops include
them, as TF's do.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     v = tf.Variable(1.0, name="table_like")
    ...     register_resource(v, v.initializer, tf.is_variable_initialized(v))
    ...     with tf.Session() as sess:
    ...         print(sess.run(report_uninitialized_resources()))
    ...         _ = sess.run(initialize_resources(shared_resources()))
    ...         print(sess.run(report_uninitialized_resources()))
    [b'table_like:0']
    []
"""

from __future__ import annotations

import collections
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.graph import GraphKeys, add_to_collection, device, get_collection, name_scope
from dtf_notebook.ops import identity_ops
from dtf_notebook.ops.array.gather import boolean_mask
from dtf_notebook.ops.array.pack import stack
from dtf_notebook.ops.constant_op import constant
from dtf_notebook.ops.math.compare import logical_not

__all__ = [
    "initialize_resources",
    "local_resources",
    "register_resource",
    "report_uninitialized_resources",
    "shared_resources",
]

Resource = collections.namedtuple("Resource", ["handle", "create", "is_initialized"])


def register_resource(handle: Any, create_op: Any, is_initialized_op: Any, is_shared: bool = True) -> None:
    """Registers a resource in ``GraphKeys.RESOURCES`` (shared) or ``GraphKeys.LOCAL_RESOURCES``.

    Args:
        handle: The resource's handle (its name names it in reports).
        create_op: The op that creates (initialises) it.
        is_initialized_op: A boolean tensor, true once it exists.
        is_shared: Shared across sessions (initialised by the chief) or local to each session.
    """
    resource = Resource(handle, create_op, is_initialized_op)
    add_to_collection(GraphKeys.RESOURCES if is_shared else GraphKeys.LOCAL_RESOURCES, resource)


def shared_resources() -> list[Any]:
    """The registered shared resources."""
    return get_collection(GraphKeys.RESOURCES)


def local_resources() -> list[Any]:
    """The registered session-local resources."""
    return get_collection(GraphKeys.LOCAL_RESOURCES)


def report_uninitialized_resources(
    resource_list: list[Any] | None = None, name: str = "report_uninitialized_resources"
) -> Any:
    """A 1-D string tensor naming the resources (default: all registered) not yet initialised; empty when none.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sess.run(report_uninitialized_resources()).shape
        (0,)
    """
    if resource_list is None:
        resource_list = shared_resources() + local_resources()
    with name_scope(name), device("/cpu:0"):
        if not resource_list:
            return constant([], dtype=dtypes.string)
        missing = logical_not(stack([r.is_initialized for r in resource_list]))
        names = constant([r.handle.name for r in resource_list])
        return boolean_mask(names, missing)


def initialize_resources(resource_list: list[Any], name: str = "init") -> Any:
    """An op creating every resource of ``resource_list`` (a ``NoOp`` for an empty list)."""
    if resource_list:
        return identity_ops.group(*[r.create for r in resource_list], name=name)
    return identity_ops.no_op(name=name)
