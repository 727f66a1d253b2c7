"""A serialized pipeline compiled for one device, and instantiated into runtime datasets from input values.

A pipeline (see :mod:`dtf_notebook.data.pipeline_spec`) is a list of nodes in dependency order; each names its
transformation (``"MapDataset"``, ...), its input values (indices into the pipeline's inputs), its child nodes and
its functions. :class:`CompiledPipeline` compiles every function once (nested pipelines of ``flat_map`` and
``interleave`` functions too); :meth:`CompiledPipeline.instantiate` binds one set of input values, which is what
initialising an iterator does.

Example:
    >>> import torch
    >>> from dtf_notebook.data.kernels.common import Env
    >>> spec = {"nodes": [{"op": "RangeDataset", "inputs": [0, 1, 2], "children": [], "attrs": {"output_type": 9},
    ...                    "functions": {}}], "output": 0}
    >>> ds = CompiledPipeline(spec, None, None).instantiate([torch.tensor(0), torch.tensor(2), torch.tensor(1)], Env())
    >>> it = ds.iterator(); it.next(None), it.next(None), it.next(None)
    ((tensor(0),), (tensor(1),), None)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.data.kernels import buffering, sources, transforms
from dtf_notebook.data.kernels.common import Env, RtDataset, scalar_bool, scalar_int, string_list
from dtf_notebook.data.kernels.functions import CompiledFunction
from dtf_notebook.framework import dtypes
from dtf_notebook.lazy_modules import torch
from dtf_notebook.lib.io.matching_paths import glob
from dtf_notebook.runtime import values
from dtf_notebook.runtime.devices import LocalDevice
from dtf_notebook.runtime.executor import ExecutionState

__all__ = ["CompiledPipeline"]

Builder = Callable[[dict, list, list, dict, Env], RtDataset]


class _Function:
    """A compiled function of one node, and the nested pipeline when it returns a dataset."""

    def __init__(self, spec: dict[str, Any], device: LocalDevice, state: ExecutionState | None) -> None:
        self.compiled = CompiledFunction(spec, device, state)
        self.captures = list(spec.get("capture_inputs", ()))
        inner = spec.get("dataset")
        self.inner = None if inner is None else CompiledPipeline(inner, device, state)

    def bind(self, inputs: Sequence[Any], env: Env) -> Any:
        call = self.compiled.bind([inputs[k] for k in self.captures])
        inner = self.inner
        if inner is None:
            return call
        return lambda element: inner.instantiate(call(element), env)


class CompiledPipeline:
    """The compiled nodes of a pipeline; :meth:`instantiate` makes its runtime dataset.

    Args:
        pipeline: ``{"nodes": [...], "output": index}`` as plain data.
        device: The iterator's device (where the functions run); None for the CPU.
        state: The kernels' execution state.

    Raises:
        InvalidArgumentError: a node names an unknown transformation.

    Example:
        >>> spec = {"nodes": [{"op": "TensorDataset", "inputs": [0], "children": [], "attrs": {}}], "output": 0}
        >>> CompiledPipeline(spec, None, None).instantiate([torch.tensor(7)], Env()).iterator().next(None)
        (tensor(7),)
    """

    def __init__(self, pipeline: dict[str, Any], device: LocalDevice | None, state: ExecutionState | None) -> None:
        if device is None:
            device = LocalDevice("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 0, torch.device("cpu"))
        self.nodes: list[dict[str, Any]] = list(pipeline["nodes"])
        self.output = int(pipeline["output"])
        for node in self.nodes:
            if node["op"] not in _BUILDERS:
                raise errors.InvalidArgumentError(None, None, f"Unknown dataset transformation {node['op']!r}")
        self.functions = [
            {name: _Function(spec, device, state) for name, spec in node.get("functions", {}).items()}
            for node in self.nodes
        ]

    def instantiate(self, inputs: Sequence[Any], env: Env) -> RtDataset:
        """The runtime dataset for one set of input values (one iterator initialisation)."""
        built: list[RtDataset] = []
        for node, functions in zip(self.nodes, self.functions):
            node_inputs = [inputs[k] for k in node["inputs"]]
            children = [built[k] for k in node["children"]]
            bound = {name: fn.bind(inputs, env) for name, fn in functions.items()}
            built.append(_BUILDERS[node["op"]](node, node_inputs, children, bound, env))
        return built[self.output]


def _torch_type(enum_or_dtype: Any) -> Any:
    return values.torch_dtype(dtypes.as_dtype(enum_or_dtype))


def _map(node: dict, ins: list, kids: list, fns: dict, env: Env) -> RtDataset:
    width = int(node["attrs"].get("num_parallel_calls", 1))
    if width == 1 or width == 0:
        return transforms.MapDataset(kids[0], fns["f"])
    return buffering.ParallelMapDataset(kids[0], fns["f"], width, env)


def _padded_batch(node: dict, ins: list, kids: list, fns: dict, env: Env) -> RtDataset:
    n = int(node["attrs"]["num_components"])
    shapes = [[int(d) for d in values.to_numpy(v).reshape(-1)] for v in ins[2 : 2 + n]]
    return transforms.PaddedBatchDataset(
        kids[0], scalar_int(ins[0]), shapes, ins[2 + n : 2 + 2 * n], scalar_bool(ins[1])
    )


def _map_and_batch(node: dict, ins: list, kids: list, fns: dict, env: Env) -> RtDataset:
    attrs = node["attrs"]
    return transforms.MapAndBatchDataset(
        kids[0],
        fns["f"],
        fns.get("batched"),
        attrs.get("batched_outputs", ()),
        scalar_int(ins[0]),
        scalar_bool(ins[1]),
        attrs.get("sparse", ()),
    )


def _list_files(node: dict, ins: list, kids: list, fns: dict, env: Env) -> RtDataset:
    names: list[bytes] = []
    for pattern in string_list(ins[0]):
        text = pattern.decode()
        env.files.check(text, "read")
        found = glob(text)
        if not found:
            raise errors.InvalidArgumentError(None, None, f"No files matched pattern: {text}")
        names.extend(f.encode() for f in found)
    files = sources.TensorSlicesDataset([np.array(names, dtype=object)])
    attrs = node["attrs"]
    if not attrs.get("shuffle", True):
        return files
    return transforms.ShuffleDataset(files, len(names), int(attrs["seed"]), int(attrs["seed2"]), True)


def _string(value: Any) -> bytes:
    names = string_list(value)
    return names[0] if names else b""


_BUILDERS: dict[str, Builder] = {
    "TensorDataset": lambda node, ins, kids, fns, env: sources.TensorsDataset(ins),
    "TensorSliceDataset": lambda node, ins, kids, fns, env: sources.TensorSlicesDataset(
        ins, node["attrs"].get("sparse", ())
    ),
    "RangeDataset": lambda node, ins, kids, fns, env: sources.RangeDataset(
        scalar_int(ins[0]), scalar_int(ins[1]), scalar_int(ins[2]), _torch_type(node["attrs"]["output_type"])
    ),
    "ZipDataset": lambda node, ins, kids, fns, env: sources.ZipDataset(kids),
    "ConcatenateDataset": lambda node, ins, kids, fns, env: sources.ConcatenateDataset(kids[0], kids[1]),
    "GeneratorDataset": lambda node, ins, kids, fns, env: sources.GeneratorDataset(
        node["attrs"]["token"], ins, node["attrs"]["types"], node["attrs"]["structure"], node["attrs"]["shapes"]
    ),
    "TextLineDataset": lambda node, ins, kids, fns, env: sources.TextLineDataset(
        string_list(ins[0]), _string(ins[1]), scalar_int(ins[2]), env
    ),
    "TFRecordDataset": lambda node, ins, kids, fns, env: sources.TFRecordDataset(
        string_list(ins[0]), _string(ins[1]), scalar_int(ins[2]), env
    ),
    "FixedLengthRecordDataset": lambda node, ins, kids, fns, env: sources.FixedLengthRecordDataset(
        string_list(ins[0]), *(scalar_int(v) for v in ins[1:5]), _string(ins[5]), env
    ),
    "MapDataset": _map,
    "FilterDataset": lambda node, ins, kids, fns, env: transforms.FilterDataset(kids[0], fns["predicate"]),
    "FlatMapDataset": lambda node, ins, kids, fns, env: transforms.FlatMapDataset(kids[0], fns["f"]),
    "InterleaveDataset": lambda node, ins, kids, fns, env: transforms.InterleaveDataset(
        kids[0], fns["f"], scalar_int(ins[0]), scalar_int(ins[1])
    ),
    "BatchDataset": lambda node, ins, kids, fns, env: transforms.BatchDataset(
        kids[0], scalar_int(ins[0]), scalar_bool(ins[1]), node["attrs"].get("sparse", ())
    ),
    "PaddedBatchDataset": _padded_batch,
    "MapAndBatchDataset": _map_and_batch,
    "ShuffleDataset": lambda node, ins, kids, fns, env: transforms.ShuffleDataset(
        kids[0], scalar_int(ins[0]), scalar_int(ins[1]), scalar_int(ins[2]), bool(node["attrs"]["reshuffle"])
    ),
    "RepeatDataset": lambda node, ins, kids, fns, env: transforms.RepeatDataset(kids[0], scalar_int(ins[0])),
    "PrefetchDataset": lambda node, ins, kids, fns, env: buffering.PrefetchDataset(kids[0], scalar_int(ins[0]), env),
    "CacheDataset": lambda node, ins, kids, fns, env: buffering.CacheDataset(
        kids[0], buffering.check_cache_name(ins[0]), env
    ),
    "TakeDataset": lambda node, ins, kids, fns, env: transforms.TakeDataset(kids[0], scalar_int(ins[0])),
    "SkipDataset": lambda node, ins, kids, fns, env: transforms.SkipDataset(kids[0], scalar_int(ins[0])),
    "ListFilesDataset": _list_files,
    "IgnoreErrorsDataset": lambda node, ins, kids, fns, env: transforms.IgnoreErrorsDataset(kids[0]),
    "ShardDataset": lambda node, ins, kids, fns, env: transforms.ShardDataset(
        kids[0], scalar_int(ins[0]), scalar_int(ins[1])
    ),
}
