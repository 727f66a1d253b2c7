"""The TF1 ``tf.layers.Layer``: variables made through variable scopes, so names and reuse follow TF1.

A layer owns a variable scope, opened the first time it is called (or when its first weight is made):
``dense``, ``dense_1``, ... for unnamed layers (uniquified like ``variable_scope(None, default_name=...)``),
its ``name`` otherwise. Its ops go in that scope's original name scope, so a layer called twice makes
``dense/MatMul`` and ``dense/MatMul_1`` over the same ``dense/kernel``. Weights come from
``tf.get_variable``; regularization losses go to ``REGULARIZATION_LOSSES`` and the layer's ``losses``,
update ops to ``UPDATE_OPS`` and the layer's ``updates``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None, 4])
    ...     layer = tf.layers.Dense(3)
    ...     y1, y2 = layer(x), layer(x)
    >>> [v.name for v in layer.variables], y1.op.name, y2.op.name, layer.scope_name
    (['dense/kernel:0', 'dense/bias:0'], 'dense/BiasAdd', 'dense/BiasAdd_1', 'dense')
"""

from __future__ import annotations

import inspect
import re
from collections import defaultdict
from typing import Any

from dtf_notebook.framework import dtypes
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.graph import GraphKeys, get_collection_ref, get_default_graph, name_scope
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.ops import array_ops, init_ops, math_ops
from dtf_notebook.ops.partitioned_variables import PartitionedVariable
from dtf_notebook.ops.variable_scope import get_variable, variable_scope
from dtf_notebook.ops.variables import global_variables, trainable_variables

__all__ = ["Layer", "InputSpec"]


def to_snake_case(name: str) -> str:
    """A class name as Keras spells a layer's default name (``Conv2DTranspose`` -> ``conv2d_transpose``).

    Example:
        >>> to_snake_case("Conv2DTranspose"), to_snake_case("BatchNormalization"), to_snake_case("MaxPooling1D")
        ('conv2d_transpose', 'batch_normalization', 'max_pooling1d')
    """
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    insecure = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    return insecure if insecure[0] != "_" else "private" + insecure


def _unique_layer_name(base: str) -> str:
    # Keras counts layer names per graph starting at 1 ("dense_1" for the first unnamed Dense): a layer's
    # `name` and its variable scope ("dense") differ, exactly as in TF1.
    counts = get_default_graph()._extra.setdefault("layer_name_uids", defaultdict(int))
    counts[base] += 1
    return f"{base}_{counts[base]}"


class InputSpec:
    """What a layer accepts: ``ndim``, ``min_ndim``, ``max_ndim`` and known sizes of ``axes``.

    Example:
        >>> InputSpec(min_ndim=2, axes={-1: 4})
        InputSpec(min_ndim=2, axes={-1: 4})
    """

    def __init__(
        self,
        dtype: Any = None,
        shape: Any = None,
        ndim: int | None = None,
        max_ndim: int | None = None,
        min_ndim: int | None = None,
        axes: dict[int, int] | None = None,
    ) -> None:
        self.dtype = dtype
        self.shape = shape
        self.ndim = len(shape) if shape is not None else ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.axes = axes or {}

    def __repr__(self) -> str:
        parts = [f"{k}={v}" for k, v in vars(self).items() if v not in (None, {})]
        return f"InputSpec({', '.join(parts)})"

    def check(self, x: Tensor, layer_name: str) -> None:
        """Raises ValueError when ``x``'s static shape breaks this spec."""
        rank = x.shape.ndims
        if rank is None:
            return
        where = f"Input 0 of layer {layer_name} is incompatible with the layer"
        if self.ndim is not None and rank != self.ndim:
            raise ValueError(f"{where}: expected ndim={self.ndim}, found ndim={rank}. Full shape received: {x.shape}")
        if self.min_ndim is not None and rank < self.min_ndim:
            raise ValueError(
                f"{where}: expected min_ndim={self.min_ndim}, found ndim={rank}. Full shape received: {x.shape}"
            )
        if self.max_ndim is not None and rank > self.max_ndim:
            raise ValueError(
                f"{where}: expected max_ndim={self.max_ndim}, found ndim={rank}. Full shape received: {x.shape}"
            )
        for axis, value in self.axes.items():
            dim = x.shape[axis].value
            if value is not None and dim not in (None, value):
                raise ValueError(
                    f"{where}: expected axis {axis} of input shape to have value {value} but received input with "
                    f"shape {x.shape}"
                )


class Layer:
    """Base class of TF1 layers: a callable that makes its weights on first call, in its own variable scope.

    Args:
        trainable: Whether the layer's weights go to ``TRAINABLE_VARIABLES``.
        name: The layer's name, which is also its variable scope (default: the snake-cased class name,
            made unique).
        dtype: Weights' dtype (default: the first input's dtype).

    Subclasses define ``build(input_shape)`` (calling :meth:`add_weight`) and ``call(inputs, ...)``.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> class Scale(tf.layers.Layer):
        ...     def build(self, input_shape):
        ...         self.s = self.add_weight("s", [], initializer=tf.ones_initializer())
        ...     def call(self, inputs):
        ...         return inputs * self.s
        >>> with tf.Graph().as_default():
        ...     y = Scale(name="scale")(tf.constant([2.0]))
        ...     with tf.Session() as sess:
        ...         sess.run(tf.global_variables_initializer())
        ...         print(sess.run(y))
        [2.]
    """

    def __init__(self, trainable: bool = True, name: Any = None, dtype: Any = None, **kwargs: Any) -> None:
        scope = kwargs.pop("_scope", None)
        self._reuse = kwargs.pop("_reuse", None)
        for key in kwargs:
            if key not in ("input_shape", "batch_input_shape", "batch_size", "weights", "activity_regularizer"):
                raise TypeError(f"Keyword argument not understood: {key}")
        self.activity_regularizer = kwargs.get("activity_regularizer")
        self.trainable = trainable
        self.built = False
        self._dtype = None if dtype is None else dtypes.as_dtype(dtype)
        self._trainable_weights: list[Any] = []
        self._non_trainable_weights: list[Any] = []
        self._updates: list[Any] = []
        self._losses: list[Any] = []
        self.input_spec: InputSpec | None = None
        self._init_set_name(name)
        self._scope = None
        if scope:
            with variable_scope(scope) as captured:
                self._scope = captured
        self._current_scope = None
        self._call_has_scope_arg = "scope" in inspect.signature(self.call).parameters
        self._call_has_training_arg = "training" in inspect.signature(self.call).parameters

    # ---- naming -------------------------------------------------------------------------------------
    def _init_set_name(self, name: Any) -> None:
        base = to_snake_case(type(self).__name__)
        if name is not None and not isinstance(name, str):  # a VariableScope
            self._name, self._base_name = _unique_layer_name(base), name.name
        elif name:
            self._name = self._base_name = name
        else:
            self._name, self._base_name = _unique_layer_name(base), base

    def _set_scope(self, scope: Any = None) -> None:
        if self._scope is None:
            if self._reuse:
                with variable_scope(scope if scope is not None else self._base_name) as captured:
                    self._scope = captured
            else:
                with variable_scope(scope, default_name=self._base_name) as captured:
                    self._scope = captured

    @property
    def name(self) -> str:
        """The layer's name (``dense_1`` for the first unnamed Dense, as in TF1; see ``scope_name``)."""
        return self._name

    @property
    def scope_name(self) -> str:
        """The layer's variable scope (known once the layer was called)."""
        if not self._scope:
            raise ValueError(
                f'No name available for layer scope because the layer "{self._name}" has not been used yet. The '
                "scope name is determined the first time the layer instance is called. You must therefore call the "
                "layer before querying `scope_name`."
            )
        return self._scope.name

    @property
    def dtype(self) -> Any:
        """The weights' dtype (None until known)."""
        return self._dtype

    # ---- weights, losses, updates -------------------------------------------------------------------
    @property
    def trainable_weights(self) -> list[Any]:
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self) -> list[Any]:
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def weights(self) -> list[Any]:
        """Trainable weights, then the others."""
        return self.trainable_weights + self.non_trainable_weights

    variables = weights

    @property
    def updates(self) -> list[Any]:
        """Update ops the layer made (batch normalization's moving averages)."""
        return list(self._updates)

    @property
    def losses(self) -> list[Any]:
        """Regularization losses of the layer's weights and activity."""
        return list(self._losses)

    def add_loss(self, losses: Any, inputs: Any = None) -> None:
        """Adds loss tensors to the layer and to ``REGULARIZATION_LOSSES``."""
        new = [loss for loss in (losses if isinstance(losses, list | tuple) else [losses]) if loss is not None]
        self._losses.extend(new)
        _add_to_collection(new, GraphKeys.REGULARIZATION_LOSSES)

    def add_update(self, updates: Any, inputs: Any = None) -> None:
        """Adds update ops (run them through ``UPDATE_OPS``, e.g. as control dependencies of the train op)."""
        self._updates.extend(updates if isinstance(updates, list | tuple) else [updates])

    def add_weight(
        self,
        name: str,
        shape: Any,
        dtype: Any = None,
        initializer: Any = None,
        regularizer: Any = None,
        trainable: bool | None = None,
        constraint: Any = None,
        use_resource: Any = None,
        synchronization: Any = None,
        aggregation: Any = None,
        partitioner: Any = None,
        **kwargs: Any,
    ) -> Any:
        """Makes (or, when the layer reuses its scope, gets) ``<scope>/<name>`` with ``tf.get_variable``.

        Args:
            name: Variable name inside the layer's scope.
            shape: Its shape.
            dtype: Its dtype (default: the layer's, else float32).
            initializer: Default: the scope's initializer, else glorot-uniform for floats and zeros otherwise.
            regularizer: ``fn(weight) -> loss``, built under ``<name>/Regularizer`` once, when the weight is made.
            trainable: Default True (and only if the layer is trainable).
            constraint, partitioner: As in ``tf.get_variable``.
            use_resource, synchronization, aggregation: Accepted for compatibility.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     layer = tf.layers.Layer(name="mine")
            ...     layer.add_weight("w", [2]).name
            'mine/w:0'
        """
        for key in kwargs:
            if key != "experimental_autocast":
                raise TypeError(f"Unknown keyword argument: {key}")
        trainable = True if trainable is None else trainable
        existing = set(global_variables())
        dtype = dtypes.as_dtype(dtype or self._dtype or dtypes.float32)
        self._set_scope(None)
        reuse = self.built or self._reuse
        with variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as scope:
            self._current_scope = scope
            with name_scope(scope.original_name_scope):
                if initializer is None:
                    initializer = scope.initializer
                if initializer is None:
                    initializer = init_ops.glorot_uniform_initializer() if dtype.is_floating else init_ops.Zeros()
                variable = get_variable(
                    name,
                    shape=shape,
                    dtype=dtype,
                    initializer=initializer,
                    trainable=trainable and self.trainable,
                    constraint=constraint,
                    partitioner=partitioner,
                )
                if regularizer is not None:
                    parts = list(variable) if isinstance(variable, PartitionedVariable) else [variable]
                    if not any(p in existing for p in parts):
                        for part in parts:
                            with name_scope(name + "/Regularizer"):
                                self.add_loss(regularizer(part))
        if trainable and self.trainable and variable in trainable_variables():
            self._trainable_weights.append(variable)
        elif variable not in self._non_trainable_weights:
            self._non_trainable_weights.append(variable)
        return variable

    # ---- calling ------------------------------------------------------------------------------------
    def build(self, input_shape: Any) -> None:
        """Makes the layer's weights for inputs of ``input_shape`` (override)."""
        self.built = True

    def call(self, inputs: Any, **kwargs: Any) -> Any:
        """The layer's computation (override)."""
        return inputs

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        """The static output shape for ``input_shape`` (override)."""
        raise NotImplementedError(f"{type(self).__name__} does not compute its output shape statically")

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """Builds the layer on first call, then applies ``call`` in the layer's scope; returns its outputs.

        ``scope=`` is reserved: it names the variable scope of a layer called for the first time.
        """
        scope = kwargs.pop("scope", None)
        self._set_scope(scope)
        reuse = True if self.built else self._reuse
        with variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as vs:
            self._current_scope = vs
            if self._call_has_scope_arg:
                kwargs["scope"] = vs
            with name_scope(vs.original_name_scope):
                if not isinstance(inputs, list | tuple):
                    inputs = convert_to_tensor(inputs)
                    if self.input_spec is not None:
                        self.input_spec.check(inputs, self._name)
                    if self._dtype is None and inputs.dtype.is_floating:
                        self._dtype = inputs.dtype.base_dtype
                if not self.built:
                    shapes = [t.shape for t in inputs] if isinstance(inputs, list | tuple) else inputs.shape
                    self.build(shapes)
                    self.built = True
                    if not isinstance(inputs, list | tuple) and self.input_spec is not None:
                        self.input_spec.check(inputs, self._name)
                outputs = self.call(inputs, *args, **kwargs)
                if self.activity_regularizer is not None:
                    with name_scope("ActivityRegularizer"):
                        # Keras averages the activity loss over the batch.
                        loss = self.activity_regularizer(outputs)
                        batch = math_ops.cast(array_ops.shape(outputs)[0], loss.dtype)
                        self.add_loss(math_ops.truediv(loss, batch))
        _add_to_collection(self._updates, GraphKeys.UPDATE_OPS)
        return outputs

    def apply(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        """Another name of calling the layer."""
        return self.__call__(inputs, *args, **kwargs)

    def count_params(self) -> int:
        """The number of scalars in the layer's weights."""
        return sum(int(w.shape.num_elements()) for w in self.weights)

    def get_config(self) -> dict[str, Any]:
        """The constructor arguments that describe the layer."""
        return {"name": self.name, "trainable": self.trainable, "dtype": self._dtype and self._dtype.name}


def _add_to_collection(elements: list[Any], key: str) -> None:
    collection = get_collection_ref(key)
    present = {id(e) for e in collection}
    for element in elements:
        if id(element) not in present:
            collection.append(element)
            present.add(id(element))
