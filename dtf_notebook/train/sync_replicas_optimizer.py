"""``tf.train.SyncReplicasOptimizer``: synchronous data-parallel training with gradient accumulators.

Every replica pushes its gradients into one accumulator per variable (on the variable's task) instead
of applying them. The chief runs the *sync op* in a queue-runner thread: it takes the average of
``replicas_to_aggregate`` gradients from every accumulator, applies them with the wrapped optimizer,
increments the global step, and puts ``total_num_replicas`` tokens (the new global step) into the
``sync_token_q`` queue. A replica's train op, after pushing its gradients, takes one token and makes
it its ``local_step``: a barrier, and the step its next gradients are computed at. Accumulators drop
gradients older than the last aggregated step, so slow replicas never apply stale gradients; with
``total_num_replicas > replicas_to_aggregate`` the extra replicas are backups whose late gradients are
dropped. The graph built is TF1's (``tensorflow/python/training/sync_replicas_optimizer.py``).

Between-graph replicas build their graph under ``replica_device_setter`` as in TF: each replica's
``sync_rep_local_step`` is colocated with a no-op on the replica's own device (with no device function
at all, the placer would put that variable on the cluster's state task, shared by every replica). When
training ends the chief's sync thread still waits in ``take_grad`` for gradients that no longer come: a
monitored session's close waits ``stop_grace_period_secs`` for it (as TF's does), and its step ends at
the session's ``operation_timeout_in_ms``, at ``Session.reset``, or when its master task stops.

Example (one replica, in process; the chief's sync op runs in a background thread):
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable(1.0, name="w")
    ...     step = tf.train.get_or_create_global_step()
    ...     opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.25), replicas_to_aggregate=1)
    ...     train_op = opt.minimize(w * w, global_step=step)
    ...     hook = opt.make_session_run_hook(is_chief=True, num_tokens=0)
    ...     hook.begin()
    ...     with tf.Session() as sess:
    ...         _ = sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
    ...         coord = tf.train.Coordinator()
    ...         hook.after_create_session(sess, coord)
    ...         for _ in range(2):
    ...             _ = sess.run(train_op)  # returns once the chief applied this step
    ...         print(sess.run(w), sess.run(step))
    ...         coord.request_stop()
    0.25 2
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.graph import GraphKeys, get_default_graph
from dtf_notebook.framework.indexed_slices import IndexedSlices
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops import array_ops, identity_ops, state_ops
from dtf_notebook.ops.data_flow_ops import ConditionalAccumulator, FIFOQueue, SparseConditionalAccumulator
from dtf_notebook.ops.variables import Variable, global_variables, report_uninitialized_variables
from dtf_notebook.train.optimizer import Optimizer
from dtf_notebook.train.queue_runner import QueueRunner
from dtf_notebook.train.session_run_hook import SessionRunHook

__all__ = ["SyncReplicasOptimizer"]

_log = logging.getLogger(__name__)


class SyncReplicasOptimizer(Optimizer):
    """Wraps an optimizer so that replicas' gradients are averaged and applied once per step.

    Args:
        opt: The optimizer that applies the averaged gradients.
        replicas_to_aggregate: Gradients averaged for each update of the variables.
        total_num_replicas: Replicas running (default ``replicas_to_aggregate``). More are backups; fewer
            means each replica computes several batches per update.
        variable_averages: Optional ``ExponentialMovingAverage``-like object (``apply(var_list)``), applied
            by the chief after each update to ``variables_to_average``.
        variables_to_average: Variables whose moving averages ``variable_averages`` keeps.
        use_locking: Passed to the base Optimizer.
        name: Name scope of the accumulators.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2, total_num_replicas=3)
        >>> opt.get_name()
        'sync_replicas'
    """

    def __init__(
        self,
        opt: Optimizer,
        replicas_to_aggregate: int,
        total_num_replicas: int | None = None,
        variable_averages: Any = None,
        variables_to_average: Any = None,
        use_locking: bool = False,
        name: str = "sync_replicas",
    ) -> None:
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(use_locking, name)
        _log.info(
            "SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s", replicas_to_aggregate, total_num_replicas
        )
        self._opt = opt
        self._replicas_to_aggregate = int(replicas_to_aggregate)
        self._total_num_replicas = int(total_num_replicas)
        self._tokens_per_step = max(self._total_num_replicas, self._replicas_to_aggregate)
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._gradients_applied = False
        self._global_step: Any = None
        self._sync_token_queue: FIFOQueue | None = None
        self._chief_queue_runner: QueueRunner | None = None
        self._local_step: Variable | None = None
        # (accumulator, device of its variable), to set each accumulator's step from the global step.
        self._accumulator_list: list[tuple[Any, str]] = []
        self.local_step_init_op: Any = None
        self.chief_init_op: Any = None
        self.ready_for_local_init_op: Any = None

    def compute_gradients(self, *args: Any, **kwargs: Any) -> list[tuple[Any, Any]]:
        """The wrapped optimizer's ``compute_gradients``: replicas may change their own gradients (e.g. clip
        them) before ``apply_gradients`` aggregates them.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     w = tf.Variable(2.0, name="w")
            ...     opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2)
            ...     [v.op.name for _, v in opt.compute_gradients(w * w)]
            ['w']
        """
        return self._opt.compute_gradients(*args, **kwargs)

    def _apply_gradients(self, grads_and_vars: Any, global_step: Any, name: str | None, wait_for: list[Any]) -> Any:
        # ``minimize`` comes through here: the replicas' train op is the token barrier, not a local update.
        return self.apply_gradients(grads_and_vars, global_step, name)

    def apply_gradients(self, grads_and_vars: Any, global_step: Any = None, name: str | None = None) -> Tensor:
        """Builds the accumulators, the chief's sync op and token queue; returns the replicas' train op.

        Args:
            grads_and_vars: ``(gradient, variable)`` pairs from :meth:`compute_gradients`.
            global_step: The global step variable (required: it tells stale gradients apart).
            name: Unused (TF1's signature); the wrapped optimizer names its own ops.

        Returns:
            The train op each replica runs: it pushes the gradients, then waits for a token and makes it
            the replica's local step.

        Raises:
            ValueError: ``grads_and_vars`` is empty, ``global_step`` is missing, or a gradient is neither a
                Tensor nor IndexedSlices.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     w = tf.Variable(2.0, name="w")
            ...     opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2)
            ...     grads = opt.compute_gradients(w * w)
            ...     train_op = opt.apply_gradients(grads, tf.train.get_or_create_global_step())
            ...     print(train_op.op.type, train_op.op.inputs[1].op.type)
            Assign QueueDequeueV2
        """
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        graph = get_default_graph()
        train_ops: list[Any] = []
        aggregated_grad: list[Any] = []
        var_list: list[Any] = []

        # The anchor stays on this replica's task; the local step, colocated with it, is never on a ps.
        local_anchor = identity_ops.no_op()
        with graph.colocate_with(local_anchor):
            self._local_step = Variable(
                initial_value=0,
                trainable=False,
                collections=[GraphKeys.LOCAL_VARIABLES],
                dtype=global_step.dtype.base_dtype,
                name="sync_rep_local_step",
            )
        self.local_step_init_op = _assign(self._local_step, global_step)
        chief_init_ops = [self.local_step_init_op]
        # Outside any device block: each variable's IsVariableInitialized must be placed with the variable,
        # which a worker device function would contradict.
        with graph.device(None):
            self.ready_for_local_init_op = report_uninitialized_variables(global_variables())

        with graph.name_scope(self._name):
            for grad, var in grads_and_vars:
                var_list.append(var)
                with graph.device(var.device):
                    if grad is None:
                        aggregated_grad.append(None)
                        continue
                    if isinstance(grad, Tensor):
                        grad_accum: Any = ConditionalAccumulator(
                            grad.dtype, shape=var.get_shape(), shared_name=var.name + "/grad_accum"
                        )
                        train_ops.append(grad_accum.apply_grad(grad, local_step=self._local_step))
                        aggregated_grad.append(grad_accum.take_grad(self._replicas_to_aggregate))
                    elif isinstance(grad, IndexedSlices):
                        grad_accum = SparseConditionalAccumulator(
                            grad.dtype, shape=(), shared_name=var.name + "/grad_accum"
                        )
                        train_ops.append(grad_accum.apply_indexed_slices_grad(grad, local_step=self._local_step))
                        aggregated_grad.append(grad_accum.take_indexed_slices_grad(self._replicas_to_aggregate))
                    else:
                        raise ValueError(f"Unknown grad type for {var.op.name}: {grad!r}")
                    self._accumulator_list.append((grad_accum, var.device))

            # The sync op lives with the global step (the ps), so the chief's step never leaves that task.
            with graph.device(global_step.device), graph.name_scope(""):
                update_op = self._opt.apply_gradients(list(zip(aggregated_grad, var_list)), global_step)
                sync_token_queue = FIFOQueue(
                    -1, global_step.dtype.base_dtype, shapes=(), name="sync_token_q", shared_name="sync_token_q"
                )
                self._sync_token_queue = sync_token_queue
                # The chief's queue runner gets a queue of its own to close when it stops: closing the
                # shared token queue on the ps would break the replicas' next session.
                dummy_queue = FIFOQueue(1, dtypes.int32, shapes=(), name="dummy_queue", shared_name="dummy_queue")

                with graph.control_dependencies(train_ops):
                    token = sync_token_queue.dequeue()
                train_op = _assign(self._local_step, token)

                with graph.control_dependencies([update_op]):
                    tokens = array_ops.fill([self._tokens_per_step], global_step)
                    sync_op = sync_token_queue.enqueue_many((tokens,))
                if self._variable_averages is not None:
                    with graph.control_dependencies([sync_op]), graph.name_scope(""):
                        sync_op = self._variable_averages.apply(self._variables_to_average)
                self._chief_queue_runner = QueueRunner(dummy_queue, [sync_op])

            for accum, device in self._accumulator_list:
                with graph.device(device):
                    chief_init_ops.append(accum.set_global_step(global_step, name="SetGlobalStep"))
            self.chief_init_op = identity_ops.group(*chief_init_ops)
            self._gradients_applied = True
            return train_op

    def get_chief_queue_runner(self) -> QueueRunner:
        """The QueueRunner running the sync op (aggregate, apply, increment the step, put tokens), for the chief.

        Raises:
            ValueError: called before ``apply_gradients``.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     w = tf.Variable(2.0, name="w")
            ...     opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2)
            ...     _ = opt.minimize(w * w, global_step=tf.train.get_or_create_global_step())
            ...     opt.get_chief_queue_runner().name
            'dummy_queue'
        """
        if not self._gradients_applied:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_slot(self, *args: Any, **kwargs: Any) -> Any:
        """The wrapped optimizer's slot (see ``Optimizer.get_slot``).

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     w = tf.Variable(2.0, name="w")
            ...     opt = tf.train.SyncReplicasOptimizer(tf.train.MomentumOptimizer(0.1, 0.9), 2)
            ...     _ = opt.minimize(w * w, global_step=tf.train.get_or_create_global_step())
            ...     opt.get_slot(w, "momentum").op.name, opt.get_slot_names(), len(opt.variables())
            ('w/Momentum', ['momentum'], 1)
        """
        return self._opt.get_slot(*args, **kwargs)

    def variables(self) -> list[Any]:
        """The wrapped optimizer's variables (not the local step); see :meth:`get_slot`'s example."""
        return self._opt.variables()

    def get_slot_names(self, *args: Any, **kwargs: Any) -> list[str]:
        """The wrapped optimizer's slot names; see :meth:`get_slot`'s example."""
        return self._opt.get_slot_names(*args, **kwargs)

    def get_init_tokens_op(self, num_tokens: int = -1) -> Operation:
        """The op putting ``num_tokens`` tokens (default ``replicas_to_aggregate``) in the token queue.

        The chief runs it once at the start, so the replicas can compute the first step.

        Raises:
            ValueError: called before ``apply_gradients``, or ``num_tokens`` is fewer than
                ``replicas_to_aggregate - total_num_replicas`` (too few for the first step).

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> with tf.Graph().as_default():
            ...     w = tf.Variable(2.0, name="w")
            ...     opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2)
            ...     _ = opt.minimize(w * w, global_step=tf.train.get_or_create_global_step())
            ...     opt.get_init_tokens_op().type, opt.get_init_tokens_op(num_tokens=0).type
            ('QueueEnqueueManyV2', 'NoOp')
        """
        if not self._gradients_applied:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError(
                f"Too few tokens to finish the first step: {num_tokens} (given) vs {tokens_needed} (needed)"
            )
        graph = get_default_graph()
        if num_tokens > 0:
            with graph.device(self._global_step.device), graph.name_scope(""):
                tokens = array_ops.fill([num_tokens], self._global_step)
                return self._sync_token_queue.enqueue_many((tokens,))
        return identity_ops.no_op(name="no_init_tokens")

    def make_session_run_hook(self, is_chief: bool, num_tokens: int = -1) -> SessionRunHook:
        """A hook that runs the local (or chief) init op and the init tokens, and starts the chief's runner.

        Example:
            >>> import dtf_notebook.compat.v1 as tf
            >>> opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), 2)
            >>> isinstance(opt.make_session_run_hook(is_chief=False), tf.train.SessionRunHook)
            True
        """
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)


def _assign(ref: Variable, value: Any) -> Tensor:
    """``tf.assign`` placed with the variable (TF builds ops taking a reference next to it)."""
    with get_default_graph().colocate_with(ref.op):
        return state_ops.assign(ref, value)


def _ready(op: Any, sess: Any) -> tuple[bool, str | None]:
    """Runs a ``report_uninitialized_variables`` op: (True, None) when nothing is left uninitialised."""
    try:
        names = sess.run(op)
    except errors.FailedPreconditionError as e:
        if "uninitialized" not in str(e):
            raise
        return False, str(e)
    names = np.asarray(names)
    if names.size == 0:
        return True, None
    return False, "Variables not initialized: " + ", ".join(
        n.decode() if isinstance(n, bytes) else str(n) for n in names
    )


class _SyncReplicasOptimizerHook(SessionRunHook):
    """Runs the sync optimizer's init ops after the session exists; on the chief, starts the sync thread."""

    def __init__(self, sync_optimizer: SyncReplicasOptimizer, is_chief: bool, num_tokens: int) -> None:
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self) -> None:
        opt = self._sync_optimizer
        if not opt._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before using the hook.")
        self._ready_for_local_init_op = opt.ready_for_local_init_op
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._q_runner = opt.get_chief_queue_runner()
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op
            self._q_runner = None
            self._init_tokens_op = None

    def after_create_session(self, session: Any, coord: Any) -> None:
        """Runs the init ops; the chief also puts the first tokens and starts the sync queue runner.

        Raises:
            RuntimeError: some global variables are still uninitialised.
        """
        ok, msg = _ready(self._ready_for_local_init_op, session)
        if not ok:
            raise RuntimeError(
                "Init operations did not make model ready for SyncReplicasOptimizer local_init. "
                f"Init op: {self._local_init_op.name}, error: {msg}"
            )
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)
