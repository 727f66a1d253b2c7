"""Printing while a graph runs: ``tf.Print`` (an identity that prints) and ``tf.print`` (a ``PrintV2`` op).

Both print when the op runs, in the process that runs it (a cluster task prints to its own stderr),
with the text TF's kernels write (see :mod:`dtf_notebook.ops.tensor_summary`). ``tf.print`` builds a
``StringFormat`` op that fills a template and a ``PrintV2`` op with no outputs: as in TF1 graph mode it
prints only when run, e.g. as a fetch or a control dependency.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.constant([1.0, 2.5])
    ...     show = tf.print("x:", x, output_stream=sys.stdout)
    ...     with tf.control_dependencies([show]):
    ...         y = x * 2.0
    ...     with tf.Session() as sess:
    ...         _ = sess.run(y)
    x: [1 2.5]
"""

from __future__ import annotations

import collections
import os
import pprint
import random
import sys
import threading
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import name_scope
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.sparse_tensor import SparseTensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.ops.op_helpers import graph_of, make_op, no_outputs, same_as_input
from dtf_notebook.ops.tensor_summary import summarize as summarize_value

__all__ = ["Print", "print"]


def host_value(value: Any) -> np.ndarray:
    """A runtime value (torch tensor or numpy string array) as a numpy array on the host.

    Example:
        >>> host_value(torch.tensor([1, 2])).tolist()
        [1, 2]
    """
    if isinstance(value, torch.Tensor):
        t = value.detach()
        return (t.float() if t.dtype is torch.bfloat16 else t).cpu().numpy()
    return np.asarray(value)


def _data_tensors(data: Any) -> list[Tensor]:
    return [convert_to_tensor(d, name=f"data_{i}") for i, d in enumerate(data or [])]


def Print(  # noqa: N802 - TF's name
    input_: Any,
    data: Any,
    message: str | None = None,
    first_n: int | None = None,
    summarize: int | None = None,
    name: str | None = None,
) -> Tensor:
    """Returns ``input_`` unchanged and, each time it is computed, prints ``message`` and ``data`` to stderr.

    Each tensor of ``data`` prints as ``[v1 v2 v3...]`` with its first ``summarize`` elements (3 by default,
    all when negative); ``first_n`` prints only the first ``first_n`` times the op runs in a session.
    The gradient passes through to ``input_``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     x = tf.constant([1, 2, 3, 4])
        ...     y = tf.Print(x, [x, "done"], message="x is ")
        ...     y.op.type, y.shape
        ('Print', TensorShape([4]))
    """
    graph = graph_of([input_, *(data or [])])
    with graph.as_default(), name_scope(None, name or "Print", [input_]) as scope:
        x = convert_to_tensor(input_, name="input")
        tensors = _data_tensors(data)
        attrs = {
            "T": x.dtype,
            "U": [t.dtype for t in tensors],
            "message": "" if message is None else str(message),
            "first_n": -1 if first_n is None else int(first_n),
            "summarize": 3 if summarize is None else int(summarize),
        }
        return make_op("Print", [x, *tensors], attrs, name=scope).outputs[0]


class _RunCount:
    """How many times a ``Print`` node has printed in one session (TF keeps it in the node's kernel)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0

    def take(self, first_n: int) -> bool:
        with self.lock:
            if 0 <= first_n <= self.count:
                return False
            self.count += 1
            return True


def _print_kernel(op: Operation, ctx: Any):
    message, first_n, summarize = op.get_attr("message"), op.get_attr("first_n"), op.get_attr("summarize")
    counter = ctx.resources.lookup_or_create("", f"{op.name}/print_count", _RunCount) if first_n >= 0 else None

    def run(x: Any, *data: Any) -> Any:
        if counter is None or counter.take(first_n):
            text = message + "".join(f"[{summarize_value(host_value(d), summarize)}]" for d in data)
            sys.stderr.write(text + "\n")
            sys.stderr.flush()
        return x

    return run


op_registry.register_op(
    "Print",
    infer=same_as_input,
    kernel=_print_kernel,
    grad=lambda op, grad: [grad] + [None] * (len(op.inputs) - 1),
    stateful=True,
    cpu_only=True,
)


# ---- tf.print -----------------------------------------------------------------------------------
_STREAMS = {"stdout", "stderr"}
_DEFAULT_STREAM = sys.stderr  # print's default, bound at import like TF's (a notebook may swap sys.stderr later)


def _stream_name(output_stream: Any) -> str:
    if output_stream is sys.stdout or output_stream is sys.__stdout__:
        return "stdout"
    if output_stream is sys.stderr or output_stream is sys.__stderr__ or output_stream is _DEFAULT_STREAM:
        return "stderr"
    if isinstance(output_stream, str) and output_stream.startswith("file://"):
        return output_stream
    raise ValueError(
        f"Unsupported output stream, logging level, or file.{output_stream}. Supported streams are sys.stdout, "
        "sys.stderr. File needs to be in the form of 'file://<filepath>'."
    )


def _placeholder_for(template: str) -> str:
    # TF's choice: "{}" followed by digits from a Random(5) until the text does not contain it.
    placeholder, rng = "{}", random.Random(5)
    while placeholder in template:
        placeholder += str(rng.randint(0, 9))
    return placeholder


def _is_tensor(x: Any) -> bool:
    return isinstance(x, Tensor) or hasattr(x, "_as_graph_element")


def _flatten(x: Any) -> list[Any]:
    """``tf.nest.flatten``: dict values by sorted key, lists and tuples in order, anything else is a leaf."""
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _flatten(x[k])]
    if isinstance(x, list | tuple):
        return [leaf for item in x for leaf in _flatten(item)]
    return [x]


def _pack_as(structure: Any, leaves: list[Any]) -> Any:
    """``tf.nest.pack_sequence_as``: ``leaves`` put back in the shape of ``structure``."""
    it = iter(leaves)

    def pack(s: Any) -> Any:
        if isinstance(s, dict):
            values = {k: pack(s[k]) for k in sorted(s)}
            return type(s)((k, values[k]) for k in s)
        if isinstance(s, list | tuple):
            items = [pack(v) for v in s]
            return type(s)(*items) if hasattr(s, "_fields") else type(s)(items)
        return next(it)

    return pack(structure)


def _tensor_free(x: Any) -> Any:
    return _pack_as(x, ["" if _is_tensor(leaf) else leaf for leaf in _flatten(x)])


def print(  # noqa: A001 - TF's name
    *inputs: Any,
    output_stream: Any = sys.stderr,
    sep: str = " ",
    end: str = os.linesep,
    summarize: int = 3,
    name: str | None = None,
) -> Operation:
    """Returns a ``PrintV2`` op that prints ``inputs`` (tensors, Python values and nests of them) when run.

    Tensors print numpy-style with the first and last ``summarize`` entries of each dimension (all when
    negative), strings inside tensors quoted; a lone string scalar prints as it is. ``output_stream`` is
    ``sys.stderr`` (default), ``sys.stdout`` or ``"file://<path>"`` (appended to).

    Raises:
        ValueError: ``output_stream`` is none of those.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     op = tf.print({"w": tf.zeros([2, 2])}, "done", output_stream=sys.stdout)
        ...     with tf.Session() as sess:
        ...         sess.run(op)
        {'w': [[0 0]
         [0 0]]} done
    """
    stream = _stream_name(output_stream)
    if len(inputs) == 1 and isinstance(inputs[0], Tensor) and inputs[0].shape.ndims == 0:
        single = inputs[0].dtype is dtypes.string
    else:
        single = False
    if single:
        formatted = inputs[0]
    else:
        ordered = [
            collections.OrderedDict(sorted(x.items())) if isinstance(x, collections.OrderedDict) else x for x in inputs
        ]
        placeholder = _placeholder_for(" ".join(pprint.pformat(_tensor_free(x)) for x in ordered))
        templates, tensors = [], []
        for x in inputs:
            leaves = []
            for leaf in _flatten(x):
                if isinstance(leaf, SparseTensor):
                    tensors += [leaf.indices, leaf.values, leaf.dense_shape]
                    leaves.append(f"SparseTensor(indices={placeholder}, values={placeholder}, shape={placeholder})")
                elif _is_tensor(leaf):
                    tensors.append(convert_to_tensor(leaf))
                    leaves.append(placeholder)
                else:
                    leaves.append(leaf)
            templates.append(x if isinstance(x, str) else pprint.pformat(_pack_as(x, leaves)))
        template = sep.join(templates).replace(f"'{placeholder}'", placeholder)
        formatted = string_format(tensors, template, placeholder, summarize, name=f"{name}_format" if name else None)
    return make_op("PrintV2", [formatted], {"output_stream": stream, "end": end}, name=name or "PrintV2")


def string_format(
    inputs: list[Tensor], template: str, placeholder: str = "{}", summarize: int = 3, name: str | None = None
) -> Tensor:
    """A scalar string tensor: ``template`` with each ``placeholder`` replaced by the next input's v2 text.

    Raises:
        ValueError: the template has not as many placeholders as there are inputs.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     s = string_format([tf.constant([1, 2])], "v={}")
        ...     with tf.Session() as sess:
        ...         sess.run(s)
        b'v=[1 2]'
    """
    tensors = [convert_to_tensor(t) for t in inputs]
    count = template.count(placeholder)
    if count != len(tensors):
        raise ValueError(
            f"{count} placeholder(s) in template does not match {len(tensors)} tensor(s) provided as input"
        )
    attrs = {
        "T": [t.dtype for t in tensors],
        "template": template,
        "placeholder": placeholder,
        "summarize": int(summarize),
    }
    return make_op("StringFormat", tensors, attrs, name=name or "StringFormat").outputs[0]


def _string_format_kernel(op: Operation, ctx: Any):
    pieces = op.get_attr("template").split(op.get_attr("placeholder"))
    summarize = op.get_attr("summarize")

    def run(*values: Any) -> np.ndarray:
        out = [pieces[0]]
        for value, piece in zip(values, pieces[1:]):
            out += [summarize_value(host_value(value), summarize, v2=True), piece]
        return np.array("".join(out).encode(), dtype=object)

    return run


op_registry.register_op(
    "StringFormat",
    infer=lambda op: [(dtypes.string, TensorShape([]))],
    kernel=_string_format_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    cpu_only=True,
)


def _print_v2_kernel(op: Operation, ctx: Any):
    stream, end = op.get_attr("output_stream"), op.get_attr("end")
    if stream not in _STREAMS and not stream.startswith("file://"):
        raise errors.InvalidArgumentError(None, op, f"Unsupported output stream for PrintV2: {stream!r}")
    files = ctx.state.files

    def run(text: Any) -> None:
        raw = host_value(text)
        if raw.ndim != 0:
            raise errors.InvalidArgumentError(
                None, op, f"Input is expected to be scalar, but got shape {list(raw.shape)}"
            )
        item = raw[()]
        line = (item.decode("utf-8", errors="replace") if isinstance(item, bytes) else str(item)) + end
        if stream.startswith("file://"):
            with open(files.check(stream[len("file://") :], "write"), "a", encoding="utf-8") as f:
                f.write(line)
            return
        out = sys.stdout if stream == "stdout" else sys.stderr
        out.write(line)
        out.flush()

    return run


op_registry.register_op(
    "PrintV2",
    infer=no_outputs,
    kernel=_print_v2_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    stateful=True,
    cpu_only=True,
)
