"""``Session``: runs graph fragments, on this process or (by target) on a cluster.

The session validates and converts feeds, flattens fetch structures, and
hands one step to a backend chosen by the target's scheme: ``""`` runs in
this process; ``zmq://host:port`` (or ``grpc://``, accepted so TF1 scripts run
unchanged) runs on a cluster once :mod:`dtf_notebook.distributed` registers
its backend.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [2])
    ...     with tf.Session() as sess:
    ...         print(sess.run({"double": x * 2}, feed_dict={x: [1, 2]}))
    {'double': array([2., 4.], dtype=float32)}
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework.default_session import (  # noqa: F401 - re-exported: tf.get_default_session
    clear_default_session_stack,
    default_session,
    get_default_session,
    run_in_default_session,
)
from dtf_notebook.framework.graph import Graph, get_default_graph
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.placement.placer import place
from dtf_notebook.runtime.config import ConfigProto, RunMetadata, as_config, as_run_options
from dtf_notebook.runtime.executor import needed_ops
from dtf_notebook.runtime.fetches import flatten_fetches
from dtf_notebook.runtime.local_backend import LocalBackend, placement_nodes
from dtf_notebook.runtime.session_backends import (  # noqa: F401 - register_session_backend re-exported
    known_schemes,
    register_session_backend,
    session_backend,
)


def _make_backend(target: str, graph: Graph, config: ConfigProto) -> Any:
    if not target:
        return LocalBackend(config)
    if not isinstance(target, str):
        raise TypeError(f"target must be a string, got {type(target).__name__}")
    scheme, sep, _ = target.partition("://")
    if not sep:
        raise errors.InvalidArgumentError(
            None, None, f"Session target {target!r} is not of the form scheme://host:port (e.g. 'zmq://localhost:2222')"
        )
    # The cluster runtime registers zmq:// and grpc:// when it is imported (the package's root imports it).
    factory = session_backend(scheme)
    if factory is None:
        known = ", ".join(f"{s}://" for s in known_schemes()) or "none"
        raise errors.InvalidArgumentError(
            None, None, f"No session backend for target {target!r}; known schemes: {known}"
        )
    return factory(target, graph, config)


class BaseSession:
    """Shared behaviour of Session and InteractiveSession.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default() as g:
        ...     x = tf.placeholder(tf.float32, []); y = x + 1.0
        >>> sess = BaseSession(graph=g)
        >>> sess.run(y, {x: 1.0}), sess.graph is g
        (np.float32(2.0), True)
        >>> sess.close()
    """

    def __init__(self, target: str = "", graph: Graph | None = None, config: Any = None) -> None:
        if graph is not None and not isinstance(graph, Graph):
            raise TypeError(f"graph must be a tf.Graph, but got {type(graph)}")
        self._graph = graph if graph is not None else get_default_graph()
        # A tf.ConfigProto protobuf becomes the runtime's config here; the session reads only that.
        self._config = as_config(config)
        self._target = target or ""
        self._closed = False
        self._backend = _make_backend(self._target, self._graph, self._config)
        self._default_cms: list[Any] = []

    # ---- properties --------------------------------------------------------------------------
    @property
    def graph(self) -> Graph:
        return self._graph

    @property
    def graph_def(self) -> Any:
        """The session's graph as TF's ``GraphDef`` protobuf (``graph.as_graph_def()``)."""
        return self._graph.as_graph_def()

    @property
    def sess_str(self) -> str:
        return self._target

    @property
    def backend(self) -> Any:
        """The object that runs steps (local, or a connection to a cluster master)."""
        return self._backend

    def list_devices(self) -> list[Any]:
        """Devices this session can place on.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Session() as sess:
            ...     sess.list_devices()[0].name
            '/job:localhost/replica:0/task:0/device:CPU:0'
        """
        return self._backend.list_devices()

    def placement(self, fetches: Any = None, feed_list: Any = None) -> dict[str, Any]:
        """Where each node needed for ``fetches`` runs (every node of the graph when None), without running it.

        On a cluster the master answers with the placement its steps use; in this process the placer
        decides, exactly as a run would.

        Args:
            fetches: What a step would fetch (any fetch structure ``run`` takes), or None.
            feed_list: Tensors that step would feed (their producers are then not needed).

        Returns:
            ``{"nodes": [...], "transfers": [...]}``: per node its ``name``, ``op``, ``requested`` device (as
            written), assigned ``device``, or ``error`` when it cannot be placed; per tensor sent between tasks
            ``src``, ``output``, ``dst``, ``tensor_name``, ``send_device``, ``recv_device``, ``dtype``, ``shape``
            (none in this process).

        Raises:
            RuntimeError: the session is closed.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     c = tf.constant(1.0, name="c")
            ...     with tf.Session() as sess:
            ...         sess.placement(c)["nodes"]
            [{'name': 'c', 'op': 'Const', 'requested': '', 'device': '/job:localhost/replica:0/task:0/device:CPU:0'}]
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        elements = [] if fetches is None else flatten_fetches(self._graph, fetches)[0]
        fetch_tensors = [e for e in elements if isinstance(e, Tensor)]
        targets = [e for e in elements if isinstance(e, Operation)]
        feeds = [self._graph.as_graph_element(t, allow_tensor=True, allow_operation=False) for t in feed_list or ()]
        if isinstance(self._backend, LocalBackend):
            return _local_placement(self._backend, self._graph, fetch_tensors, targets, feeds)
        return self._backend.placement(self._graph, fetch_tensors, targets, feeds)

    # ---- running -----------------------------------------------------------------------------
    def run(
        self,
        fetches: Any,
        feed_dict: Any = None,
        options: Any = None,
        run_metadata: Any = None,
    ) -> Any:
        """Runs the ops needed for ``fetches`` and returns their values in the same structure.

        Args:
            fetches: A graph element (Tensor, Operation, Variable, name) or a nested list/tuple/dict of them.
            feed_dict: ``{tensor or name: value}`` overriding tensor values for this run.
            options: ``tf.RunOptions`` (timeout, tracing): the protobuf or the runtime's RunOptions.
            run_metadata: ``tf.RunMetadata`` (protobuf or the runtime's), filled with step stats when tracing.

        Raises:
            RuntimeError: the session is closed.
            InvalidArgumentError: a feed is not a tensor of this graph, or its value has the wrong shape or type.
            OpError: an op failed; the error names the node, its device and where it was created.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     a, b = tf.constant(1), tf.constant(2)
            ...     with tf.Session() as sess:
            ...         a_val, (b_val, a_again) = sess.run([a, (b, a)])
            >>> int(a_val), int(b_val), int(a_again)
            (1, 2, 1)
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        elements, rebuild = flatten_fetches(self._graph, fetches)
        feeds = self._convert_feeds(feed_dict)
        fetch_tensors = [e for e in elements if isinstance(e, Tensor)]
        targets = [e for e in elements if isinstance(e, Operation)]
        metadata = run_metadata
        if run_metadata is not None and not isinstance(run_metadata, RunMetadata):
            if not hasattr(run_metadata, "CopyFrom") or run_metadata.DESCRIPTOR.name != "RunMetadata":
                raise TypeError(f"run_metadata must be a tf.RunMetadata, but got {type(run_metadata)}")
            metadata = RunMetadata()
        results = self._backend.run(self._graph, fetch_tensors, targets, feeds, as_run_options(options), metadata)
        if metadata is not run_metadata:
            # As TF's session: the caller's protobuf is replaced by what the run reported.
            run_metadata.CopyFrom(metadata.to_proto())
        by_id = {id(t): r for t, r in zip(fetch_tensors, results)}
        return rebuild([by_id.get(id(e)) for e in elements])

    def _convert_feeds(self, feed_dict: Any) -> list[tuple[Tensor, Any]]:
        if not feed_dict:
            return []
        feeds: list[tuple[Tensor, Any]] = []
        for key, value in feed_dict.items():
            for tensor, sub_value in _expand_feed(key, value):
                try:
                    t = self._graph.as_graph_element(tensor, allow_tensor=True, allow_operation=False)
                except (TypeError, ValueError, KeyError) as e:
                    raise errors.InvalidArgumentError(
                        None, None, f"Cannot interpret feed_dict key {tensor!r} as Tensor: {e}"
                    ) from None
                if isinstance(sub_value, Tensor):
                    raise errors.InvalidArgumentError(
                        None,
                        None,
                        f"The value of a feed cannot be a tf.Tensor object (feeding {t.name}). Acceptable feed "
                        "values include Python scalars, strings, lists, numpy ndarrays, or TensorHandles.",
                    )
                feeds.append((t, _check_feed_value(t, sub_value)))
        return feeds

    def make_callable(self, fetches: Any, feed_list: Any = None, accept_options: bool = False) -> Callable[..., Any]:
        """Returns ``f(*feed_values)`` running ``fetches`` with ``feed_list`` fed in order.

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     x = tf.placeholder(tf.float32)
            ...     with tf.Session() as sess:
            ...         square = sess.make_callable(x * x, [x])
            ...         print(square(3.0))
            9.0
        """
        feed_list = list(feed_list or [])

        def call(*args: Any, options: Any = None, run_metadata: Any = None) -> Any:
            if len(args) != len(feed_list):
                raise TypeError(f"Expected {len(feed_list)} feed values, got {len(args)}")
            return self.run(fetches, dict(zip(feed_list, args)), options, run_metadata)

        if accept_options:
            return call
        return lambda *args: call(*args)

    # ---- lifetime ----------------------------------------------------------------------------
    def close(self) -> None:
        """Frees the session's resources; further ``run`` calls raise RuntimeError."""
        self._close(wait=True)

    def _close(self, wait: bool) -> None:
        if not self._closed:
            self._closed = True
            self._backend.close(wait=wait)

    def as_default(self) -> contextlib.AbstractContextManager[BaseSession]:
        """Makes this the default session (for ``eval``/``run``) inside the block; does not close it."""
        return default_session(self)

    def __enter__(self) -> BaseSession:
        graph_cm = self._graph.as_default()
        graph_cm.__enter__()
        session_cm = self.as_default()
        session_cm.__enter__()
        self._default_cms.append((graph_cm, session_cm))
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        graph_cm, session_cm = self._default_cms.pop()
        session_cm.__exit__(exc_type, exc, tb)
        graph_cm.__exit__(exc_type, exc, tb)
        self.close()

    def __del__(self) -> None:
        # A finaliser runs on whichever thread collected the session: it must not wait on a master that may be gone.
        try:
            self._close(wait=False)
        except Exception:  # noqa: BLE001 - never raise from a finaliser
            pass

    def __repr__(self) -> str:
        return f"<{type(self).__name__} target={self._target!r} closed={self._closed}>"


class Session(BaseSession):
    """A session to run graph fragments (TF1's ``tf.Session``).

    Args:
        target: ``""`` for this process, or ``zmq://host:port`` / ``grpc://host:port`` for a cluster task.
        graph: The graph to run (default: the default graph).
        config: A ConfigProto.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     c = tf.constant("Hello, distributed TensorFlow!")
        ...     with tf.Session() as sess:
        ...         print(sess.run(c))
        b'Hello, distributed TensorFlow!'
    """

    @staticmethod
    def reset(target: str, containers: list[str] | None = None, config: Any = None) -> None:
        """Clears resource containers on every task of a cluster, as TF1 does.

        Every session of the target's master is closed first: its next run raises ``AbortedError``.
        ``containers=None`` clears each task's default container. A task's default container is named after
        its job, so ``["worker"]`` clears the default container of the worker tasks only, and ``[""]`` names
        no container. Other names clear the containers of ``tf.container(name)`` blocks.

        Raises:
            InvalidArgumentError: ``target`` is empty (a local session's state dies with it).
        """
        if not target:
            raise errors.InvalidArgumentError(
                None, None, "Session.reset needs a cluster target such as zmq://host:port"
            )
        backend = _make_backend(target, get_default_graph(), as_config(config))
        try:
            backend.reset(containers)
        finally:
            backend.close()


class InteractiveSession(BaseSession):
    """A session that makes itself the default on creation (for notebooks and shells).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     sess = tf.InteractiveSession()
        ...     print(tf.constant(4.0).eval())
        ...     sess.close()
        4.0
    """

    def __init__(self, target: str = "", graph: Graph | None = None, config: Any = None) -> None:
        super().__init__(target, graph, config)
        self._graph_cm = self._graph.as_default()
        self._graph_cm.__enter__()
        self._session_cm = self.as_default()
        self._session_cm.__enter__()

    def close(self) -> None:
        """Closes the session and stops it being the default."""
        self._close(wait=True)

    def _close(self, wait: bool) -> None:
        was_open = not self._closed
        super()._close(wait)
        if was_open and getattr(self, "_session_cm", None) is not None:
            self._session_cm.__exit__(None, None, None)
            try:
                self._graph_cm.__exit__(None, None, None)
            except (IndexError, ValueError):
                pass  # the graph stack was reset meanwhile
            self._session_cm = None


def _local_placement(
    backend: LocalBackend, graph: Graph, fetches: list[Tensor], targets: list[Operation], feeds: list[Tensor]
) -> dict[str, Any]:
    ops = graph.get_operations()
    # The whole graph, as LocalBackend places it: colocation groups may reach beyond the needed nodes.
    placed, failed = place(
        placement_nodes(ops),
        [d.name for d in backend.list_devices()],
        default_job=backend.job,
        default_task=backend.task,
        allow_soft_placement=backend.config.allow_soft_placement,
    )
    if fetches or targets:
        fed = set(feeds)
        ops = needed_ops([t.op for t in fetches if t not in fed] + targets, fed)
    rows = []
    for op in ops:
        row = {"name": op.name, "op": op.type, "requested": op.device, "device": placed.get(op.name, "")}
        if op.name in failed:
            row["error"] = failed[op.name]
        rows.append(row)
    return {"nodes": rows, "transfers": []}


def _expand_feed(key: Any, value: Any) -> list[tuple[Any, Any]]:
    if hasattr(key, "_feed_components"):
        # Composite keys (IndexedSlices) feed each of their component tensors.
        return list(zip(key._feed_components(), key._split_feed_value(value)))
    return [(key, value)]


def _check_feed_value(t: Tensor, value: Any) -> Any:
    dtype = t.dtype
    if dtype.is_string:
        return value
    try:
        arr = value if hasattr(value, "__torch_function__") else np.asarray(value, dtype=dtype.np_dtype)
    except (TypeError, ValueError) as e:
        raise errors.InvalidArgumentError(
            None, None, f"Cannot feed value {value!r} to tensor '{t.name}' of dtype {dtype.name}: {e}"
        ) from None
    shape = tuple(arr.shape)
    if not t.shape.is_compatible_with(shape):
        raise errors.InvalidArgumentError(
            None,
            None,
            f"Cannot feed value of shape {shape} for Tensor '{t.name}', which has shape '{t.shape}'",
        )
    return arr
