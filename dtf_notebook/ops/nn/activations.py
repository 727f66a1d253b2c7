"""Element-wise activations of ``tf.nn``: ``relu``, ``relu6``, ``elu``, ``leaky_relu``, ``softplus``, ``softsign``.

The rectifiers come in TF's pairs ``X`` / ``XGrad(gradients, features)``, registered from one
table (:data:`_RECTIFIERS`); their kernels call torch's fused forward and backward functions.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.constant([-1.0, 2.0])
    ...     tf.gradients(tf.nn.relu(x), x)[0].op.type
    'ReluGrad'
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dtf_notebook.framework import dtypes, op_registry
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.lazy_modules import F, torch
from dtf_notebook.ops import array_ops, math_ops
from dtf_notebook.ops.nn.common import FLOATS, REALS
from dtf_notebook.ops.op_helpers import check_dtype, make_op, same_as_input

#: name -> (op type, dtypes accepted, summary, what the example prints: the op of [-1.0, 8.0], rounded).
_ACTIVATIONS = {
    "relu": ("Relu", REALS, "Rectified linear unit: ``max(features, 0)``.", "[0. 8.]"),
    "relu6": ("Relu6", REALS, "Rectified linear 6: ``min(max(features, 0), 6)``.", "[0. 6.]"),
    "elu": ("Elu", FLOATS, "ELU: ``features`` if positive, else ``exp(features) - 1``.", "[-0.6321  8.    ]"),
    "softplus": ("Softplus", FLOATS, "Softplus: ``log(exp(features) + 1)``, without overflow.", "[0.3133 8.0003]"),
    "softsign": ("Softsign", FLOATS, "Softsign: ``features / (abs(features) + 1)``.", "[-0.5     0.8889]"),
}


def _activation(fn_name: str):
    """The builder ``fn_name(features, name=None)`` of a one-input op of :data:`_ACTIVATIONS`."""
    op_type, allowed, summary, prints = _ACTIVATIONS[fn_name]

    def activation(features: Any, name: str | None = None) -> Tensor:
        x = convert_to_tensor(features, name="features")
        check_dtype(x, allowed, op_type, "features")
        return make_op(op_type, [x], name=name or op_type).outputs[0]

    activation.__name__ = activation.__qualname__ = fn_name
    activation.__doc__ = f"""{summary}

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.nn.{fn_name}([-1.0, 8.0])).round(4))
        {prints}
    """
    return activation


relu = _activation("relu")
relu6 = _activation("relu6")
elu = _activation("elu")
softplus = _activation("softplus")
softsign = _activation("softsign")


def leaky_relu(features: Any, alpha: float = 0.2, name: str | None = None) -> Tensor:
    """Leaky ReLU: ``features`` if positive, else ``alpha * features`` (integers are computed in float32).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     with tf.Session() as sess:
        ...         print(sess.run(tf.nn.leaky_relu([-1.0, 2.0])))
        [-0.2  2. ]
    """
    x = convert_to_tensor(features, name="features")
    if x.dtype.is_integer:
        x = math_ops.cast(x, dtypes.float32)
    check_dtype(x, FLOATS, "LeakyRelu", "features")
    return make_op("LeakyRelu", [x], {"alpha": float(alpha)}, name=name or "LeakyRelu").outputs[0]


# ---- rectifier kernels ----------------------------------------------------------------------------
def _relu_grad_kernel(op: Any, ctx: Any):
    threshold_backward = torch.ops.aten.threshold_backward
    return lambda grad, outputs: threshold_backward(grad, outputs, 0)


def _relu6_kernel(op: Any, ctx: Any):
    return lambda x: torch.clamp(x, 0, 6)


def _relu6_grad_kernel(op: Any, ctx: Any):
    # Gradient passes where 0 < features < 6 (TF feeds the op's outputs as `features`: the same mask);
    # hardtanh's backward is exactly that, in one kernel.
    hardtanh_backward = torch.ops.aten.hardtanh_backward
    return lambda grad, features: hardtanh_backward(grad, features, 0.0, 6.0)


def _elu_grad_kernel(op: Any, ctx: Any):
    # d elu / dx = elu(x) + 1 where x < 0, which is why TF feeds the op's outputs (torch's is_result form).
    elu_backward = torch.ops.aten.elu_backward
    return lambda grad, outputs: elu_backward(grad, 1.0, 1.0, 1.0, True, outputs)


def _elu_grad_grad(op: Any, grad: Tensor) -> list:
    outputs = op.inputs[1]
    d_grads = make_op("EluGrad", [grad, outputs]).outputs[0]
    negative = math_ops.less(outputs, array_ops.zeros_like(outputs))
    d_outputs = math_ops.where(negative, math_ops.multiply(grad, op.inputs[0]), array_ops.zeros_like(outputs))
    return [d_grads, d_outputs]


def _leaky_relu_kernel(op: Any, ctx: Any):
    alpha = op.get_attr("alpha")
    leaky = F.leaky_relu
    return lambda x: leaky(x, alpha)


def _leaky_relu_grad_kernel(op: Any, ctx: Any):
    alpha = op.get_attr("alpha")
    leaky_backward = torch.ops.aten.leaky_relu_backward
    return lambda grad, features: leaky_backward(grad, features, alpha, False)


def _grad_pair_infer(op: Any) -> list:
    g, f = op.inputs[0], op.inputs[1]
    return [(g.dtype, g.shape.merge_with(f.shape))]


_Kernel = Callable[[Any, Any], Callable[..., Any]]


def _register_rectifier(
    op_type: str,
    kernel: _Kernel,
    grad_kernel: _Kernel,
    grad_reads_outputs: bool,
    attrs: Sequence[str],
    grad_grad: Callable[..., list] | None,
) -> None:
    """Registers ``op_type`` and ``op_type + "Grad"``; the Grad op carries ``attrs`` of the op it differentiates."""
    grad_type = op_type + "Grad"

    def grad_op(op: Any, grad: Tensor, features: Tensor) -> Tensor:
        return make_op(grad_type, [grad, features], {a: op.get_attr(a) for a in attrs}).outputs[0]

    def grad_fn(op: Any, grad: Tensor) -> list:
        return [grad_op(op, grad, op.outputs[0] if grad_reads_outputs else op.inputs[0])]

    def grad_of_grad(op: Any, grad: Tensor) -> list:
        # XGrad is linear in the incoming gradient, masked by the features: its own gradient is XGrad again.
        return [grad_op(op, grad, op.inputs[1]), None]

    op_registry.register_op(op_type, infer=same_as_input, kernel=kernel, grad=grad_fn)
    op_registry.register_op(grad_type, infer=_grad_pair_infer, kernel=grad_kernel, grad=grad_grad or grad_of_grad)


#: op type, kernel, Grad kernel, whether the Grad op reads the op's outputs (else its inputs), attrs the Grad
#: op carries, and the Grad op's gradient when it is not the Grad op again.
_RECTIFIERS = [
    ("Relu", lambda op, ctx: torch.relu, _relu_grad_kernel, True, (), None),
    ("Relu6", _relu6_kernel, _relu6_grad_kernel, True, (), None),
    ("Elu", lambda op, ctx: F.elu, _elu_grad_kernel, True, (), _elu_grad_grad),
    ("LeakyRelu", _leaky_relu_kernel, _leaky_relu_grad_kernel, False, ("alpha",), None),
]
for _entry in _RECTIFIERS:
    _register_rectifier(*_entry)


# ---- softplus, softsign -----------------------------------------------------------------------------
def _softsign_grad(op: Any, grad: Tensor) -> list:
    denom = math_ops.add(math_ops.abs(op.inputs[0]), 1.0)
    return [math_ops.divide(grad, math_ops.square(denom))]


op_registry.register_op(
    "Softplus",
    infer=same_as_input,
    kernel=lambda op, ctx: F.softplus,
    grad=lambda op, grad: [math_ops.multiply(grad, math_ops.sigmoid(op.inputs[0]))],
)
op_registry.register_op("Softsign", infer=same_as_input, kernel=lambda op, ctx: F.softsign, grad=_softsign_grad)
