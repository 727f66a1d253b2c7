"""``_Send`` and ``_Recv``: the ops the master inserts where a graph edge crosses tasks.

They are never built by users. A ``_Send`` hands its input to the step's
sender (which pushes it to the receiving task); the matching ``_Recv`` waits
in the receiving task's rendezvous for the key both derive from their attrs.
The step context (``needs_step``) carries the sender and the rendezvous, so
these kernels know nothing about transport.

Inside a loop both run once per iteration, and their key names the frame and
iteration they run in (the executor hands kernels of a loop iteration a step
context that says where they run). Both run even when dead, as TF's transfer
nodes: a ``_Send`` of a dead value (a branch not taken) sends it as dead, and
its ``_Recv`` then produces a dead value.

Example:
    >>> from dtf_notebook.framework import op_registry
    >>> op_registry.get("_Recv").needs_step
    True
"""

from __future__ import annotations

from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.placement.partition import frame_iter, rendezvous_prefix


def _missing(what: str, op: Any) -> errors.OpError:
    return errors.InternalError(None, op, f"{op.type} {op.name!r} ran outside a distributed step (no {what})")


def _key(prefix: str, step: Any) -> str:
    """The rendezvous key of a pair with key ``prefix`` in the frame iteration ``step`` belongs to."""
    path = getattr(step, "frame_path", "")  # only a loop iteration's step context has one
    return f"{prefix};{frame_iter(path, step.iteration) if path else '0:0'}"


def _send_kernel(op: Any, ctx: Any):
    prefix = rendezvous_prefix(op.attrs)
    recv_device = op.get_attr("recv_device")
    # A variable's value (an assign's output) is its buffer, which later updates change in place: the value is
    # taken when the send runs, not when the tensor leaves (a loop's next iteration may update it first).
    snapshot = bool(op.inputs) and op.inputs[0].is_ref

    def run(step: Any, value: Any) -> None:
        sender = step.extras.get("send") if step is not None else None
        if sender is None:
            raise _missing("sender", op)
        if snapshot and isinstance(value, torch.Tensor):
            value = value.clone()
        sender(_key(prefix, step), recv_device, value)  # a dead value goes as dead

    return run


def _recv_kernel(op: Any, ctx: Any):
    prefix = rendezvous_prefix(op.attrs)
    device = ctx.device

    def run(step: Any) -> Any:
        rendezvous = step.extras.get("rendezvous") if step is not None else None
        if rendezvous is None:
            raise _missing("rendezvous", op)
        step.before_wait()  # this task's held-back sends may be what the peer needs to produce ours
        value = rendezvous.recv(_key(prefix, step), step.deadline)
        if isinstance(value, torch.Tensor) and value.device != device:
            value = value.to(device)
        return value

    return run


def _recv_infer(op: Any) -> list:
    dtype = op.get_attr("tensor_type")
    shape = op.attrs.get("shape")
    return [(dtypes.as_dtype(dtype), TensorShape(shape))]


op_registry.register_op(
    "_Send",
    infer=lambda op: [],
    kernel=_send_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    stateful=True,
    needs_step=True,
    may_block=False,  # it only hands the value to the step's outbox
)
op_registry.register_op(
    "_Recv",
    infer=_recv_infer,
    kernel=_recv_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    stateful=True,
    needs_step=True,
)
