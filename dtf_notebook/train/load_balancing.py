"""Strategies choosing a ps task for each variable (``tf.contrib.training``'s placement strategies).

A strategy is any callable ``strategy(op) -> task index``, passed as ``ps_strategy`` to
``tf.train.replica_device_setter``; it is called once per ps op (variable) in creation order.
:class:`GreedyLoadBalancingStrategy` puts each variable on the least-loaded ps task so far (load
measured by ``load_fn``, e.g. :func:`byte_size_load_fn`); :class:`RandomStrategy` hashes the op name.
Behaviour follows TF1's ``tensorflow/contrib/training/python/training/device_setter.py``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> greedy = GreedyLoadBalancingStrategy(2, byte_size_load_fn)
    >>> with tf.Graph().as_default():
    ...     with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=greedy)):
    ...         big = tf.get_variable("big", [1000, 10])
    ...         small = [tf.get_variable(f"small{i}", [10]) for i in range(3)]
    >>> big.device, [v.device for v in small]
    ('/job:ps/task:0', ['/job:ps/task:1', '/job:ps/task:1', '/job:ps/task:1'])
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from dtf_notebook.framework.tensor_shape import TensorShape

__all__ = ["GreedyLoadBalancingStrategy", "RandomStrategy", "byte_size_load_fn"]


class RandomStrategy:
    """Places each ps op on a task picked by hashing its name (MD5, so every process agrees).

    This can spread many variables more evenly than round-robin, which puts every variable of one kind
    on the same task when layers repeat with a period that divides the number of tasks.

    Args:
        num_ps_tasks: Number of ps tasks to choose among.
        seed: Mixed into the hash; try another seed if the spread is uneven.

    Example:
        >>> class Op:
        ...     name = "weights_1"
        >>> RandomStrategy(3)(Op()) == RandomStrategy(3)(Op())
        True
        >>> 0 <= RandomStrategy(3, seed=7)(Op()) < 3
        True
    """

    def __init__(self, num_ps_tasks: int, seed: int = 0) -> None:
        self._num_tasks = num_ps_tasks
        self._seed = seed

    def __call__(self, op: Any) -> int:
        """The task index for ``op``."""
        key = f"{op.name}_{int(self._seed)}".encode()
        return int(hashlib.md5(key).hexdigest(), 16) % self._num_tasks


class GreedyLoadBalancingStrategy:
    """Places each ps op on the least-loaded ps task so far, then adds the op's load to that task.

    The result depends on the order in which variables are created. Ties go to the lowest task index.

    Args:
        num_tasks: Number of ps tasks to choose among.
        load_fn: ``load_fn(op) -> number``, the load an op adds to its task (unitless; e.g.
            :func:`byte_size_load_fn`).

    Example:
        >>> class Op:
        ...     def __init__(self, load):
        ...         self.load = load
        >>> greedy = GreedyLoadBalancingStrategy(2, lambda op: op.load)
        >>> [greedy(Op(load)) for load in (10, 3, 4, 5)]
        [0, 1, 1, 1]
    """

    def __init__(self, num_tasks: int, load_fn: Callable[[Any], float]) -> None:
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._ps_loads = [0.0] * num_tasks

    def __call__(self, op: Any) -> int:
        """The task index for ``op`` (the least-loaded one), now charged with ``load_fn(op)``."""
        task = min(range(self._num_tasks), key=self._ps_loads.__getitem__)
        self._ps_loads[task] += self._load_fn(op)
        return task


def byte_size_load_fn(op: Any) -> int:
    """The load of a single-output op (typically a variable): the bytes of its output.

    Args:
        op: An op with one output whose shape is fully known (or a ``shape`` attr giving it).

    Returns:
        ``num_elements * dtype.size`` of the output.

    Raises:
        ValueError: the op does not have exactly one output, or its shape is not fully known.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default():
        ...     w = tf.get_variable("w", [784, 100])
        ...     byte_size_load_fn(w.op)
        313600
    """
    if len(op.outputs) != 1:
        raise ValueError(f"Op {op.name!r} must have a single output to measure its byte size, it has {len(op.outputs)}")
    output = op.outputs[0]
    shape = output.get_shape()
    if not shape.is_fully_defined() and "shape" in op.attrs:
        # A variable created with validate_shape=False still declares its shape in an attr.
        shape = TensorShape(op.get_attr("shape"))
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of the output of op {op.name!r} is not fully defined: {shape}")
    return shape.num_elements() * output.dtype.size
