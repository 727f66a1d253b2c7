"""``_Send`` and ``_Recv``: the ops the master inserts where a graph edge crosses tasks.

They are never built by users. A ``_Send`` hands its input to the step's
sender (which pushes it to the receiving task); the matching ``_Recv`` waits
in the receiving task's rendezvous for the key both derive from their attrs.
The step context (``needs_step``) carries the sender and the rendezvous, so
these kernels know nothing about transport.

Example:
    >>> from dtf_notebook.framework import op_registry
    >>> op_registry.get("_Recv").needs_step
    True
"""

from __future__ import annotations

from typing import Any

import torch

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.placement.partition import rendezvous_key


def _missing(what: str, op: Any) -> errors.OpError:
    return errors.InternalError(None, op, f"{op.type} {op.name!r} ran outside a distributed step (no {what})")


def _send_kernel(op: Any, ctx: Any):
    key = rendezvous_key(op.attrs)
    recv_device = op.get_attr("recv_device")

    def run(step: Any, value: Any) -> None:
        sender = step.extras.get("send") if step is not None else None
        if sender is None:
            raise _missing("sender", op)
        sender(key, recv_device, value)

    return run


def _recv_kernel(op: Any, ctx: Any):
    key = rendezvous_key(op.attrs)
    device = ctx.device

    def run(step: Any) -> Any:
        rendezvous = step.extras.get("rendezvous") if step is not None else None
        if rendezvous is None:
            raise _missing("rendezvous", op)
        step.before_wait()  # this task's held-back sends may be what the peer needs to produce ours
        value = rendezvous.recv(key, step.deadline)
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
