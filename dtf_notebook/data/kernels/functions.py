"""Dataset functions at run time: a traced function's graph def compiled into a Plan on the iterator's device.

A function is compiled once per kernel (when the op that owns the pipeline is compiled), not once per element or
per iterator: :class:`CompiledFunction` imports its graph def, places every node on the iterator's device and
builds a :class:`~dtf_notebook.runtime.executor.Plan` fed with the arguments and the captured values. Running it
for one element is one ``Plan.run`` (a loop over the kernels' closures). Random ops in the function keep their
generators in a state of the function's own, so that names inside the function never meet the outer graph's.

Example:
    >>> import torch
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.data.function import trace
    >>> from dtf_notebook.data.structure import TensorSpec
    >>> from dtf_notebook.runtime.devices import LocalDevice
    >>> with tf.Graph().as_default():
    ...     spec = trace(lambda x: x * 2, TensorSpec(tf.int64, []), "map").to_spec()
    >>> cpu = LocalDevice("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 0, torch.device("cpu"))
    >>> CompiledFunction(spec, cpu, None).bind([])((torch.tensor(21),))
    [tensor(42)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dtf_notebook.framework.graph_import import import_graph_def
from dtf_notebook.runtime.devices import LocalDevice
from dtf_notebook.runtime.executor import ExecutionState, Plan

__all__ = ["CompiledFunction"]


class CompiledFunction:
    """A dataset function compiled for one device.

    Args:
        spec: The function as plain data (``graph``, ``args``, ``captures``, ``outputs``; see
            :class:`~dtf_notebook.data.function.TracedFunction`).
        device: Where its ops run (the iterator's device).
        state: The kernels' execution state (resources and file roots are shared; random generators are not).

    Example:
        >>> CompiledFunction.__name__
        'CompiledFunction'
    """

    def __init__(self, spec: dict[str, Any], device: LocalDevice, state: ExecutionState | None) -> None:
        graph = import_graph_def(spec["graph"])
        self.graph = graph
        self.num_args = len(spec["args"])
        feeds = [graph.get_tensor_by_name(n) for n in [*spec["args"], *spec["captures"]]]
        fetches = [graph.get_tensor_by_name(n) for n in spec["outputs"]]
        base = state if state is not None else ExecutionState()
        own = ExecutionState(resources=base.resources, files=base.files, session=base.session)
        placement = {op.name: device for op in graph.get_operations()}
        self.plan = Plan(fetches, [], feeds, placement, own, inter_op_threads=1)
        self.stateful = any(op.op_def.stateful for op in graph.get_operations() if op.type != "Placeholder")

    def bind(self, captured: Sequence[Any]) -> Callable[[Sequence[Any]], list[Any]]:
        """A function of one element's components giving the outputs, with the captured values bound."""
        run = self.plan.run
        captured = list(captured)
        if not captured:
            return lambda args: run(args)
        return lambda args: run([*args, *captured])
