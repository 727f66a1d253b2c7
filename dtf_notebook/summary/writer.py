"""``tf.summary.FileWriter`` and ``FileWriterCache``: summaries, graphs and session logs into event files.

Example:
    >>> import dtf_notebook as tf
    >>> from dtf_notebook.summary.summary_ops import scalar
    >>> with tf.Graph().as_default() as g:
    ...     loss = scalar("loss", tf.constant(0.5))
    ...     writer = FileWriter("memory://writer_doc", graph=g)
    ...     with tf.Session() as sess:
    ...         writer.add_summary(sess.run(loss), global_step=1)
    >>> writer.close()
    >>> from dtf_notebook.summary.summary_iterator import summary_iterator
    >>> [e.WhichOneof("what") for e in summary_iterator(writer.event_writer.filename)]
    ['file_version', 'graph_def', 'meta_graph_def', 'summary']
"""

from __future__ import annotations

import threading
import time
import warnings
from typing import Any

from dtf_notebook.framework.graph import Graph, get_default_graph
from dtf_notebook.framework.graph_proto import GraphDef, MetaGraphDef, graph_def_proto, run_metadata_proto
from dtf_notebook.framework.meta_graph import create_meta_graph_def
from dtf_notebook.summary.event_file_writer import EventFileWriter
from dtf_notebook.summary.messages import Event, SessionLog, Summary, TaggedRunMetadata


class FileWriter:
    """Writes ``Summary`` protocol buffers, graphs and session logs to an event file in ``logdir``.

    Events are written asynchronously: ``add_*`` queue an event and return; see ``max_queue`` and
    ``flush_secs``. Use as a context manager, or call :meth:`close`, so that everything reaches the file.

    Args:
        logdir: Directory for the event file (a local path or an fsspec URL such as ``memory://logs``).
        graph: A ``Graph`` to write at once (TensorBoard's graph view).
        max_queue: How many events may wait to be written; a full queue is written and flushed.
        flush_secs: How often, in seconds, written events are flushed to the file.
        graph_def: Deprecated form of ``graph`` (a graph def).
        filename_suffix: Appended to the event file's name.
        session: Accepted as in TF1; events are written by this process either way.

    Example:
        >>> with FileWriter("memory://file_writer_doc", filename_suffix=".eval") as w:
        ...     w.add_session_log(SessionLog(status=SessionLog.START), global_step=0)
        >>> w.event_writer.filename.endswith(".eval")
        True
    """

    def __init__(
        self,
        logdir: str,
        graph: Any = None,
        max_queue: int = 10,
        flush_secs: float = 120,
        graph_def: Any = None,
        filename_suffix: str | None = None,
        session: Any = None,
    ) -> None:
        self.event_writer = EventFileWriter(logdir, max_queue, flush_secs, filename_suffix)
        self._closed = False
        self._session_run_tags: set[str] = set()
        self._seen_summary_tags: set[str] = set()
        if graph is not None or graph_def is not None:
            self.add_graph(graph=graph, graph_def=graph_def)
            # TF writes the graph a second time inside a MetaGraphDef; TensorBoard reads either.
            self.add_meta_graph(
                create_meta_graph_def(
                    graph_def=self._graph_def(graph, graph_def), graph=graph if isinstance(graph, Graph) else None
                )
            )

    def __enter__(self) -> FileWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def get_logdir(self) -> str:
        """The directory the event file is written to."""
        return self.event_writer.get_logdir()

    # ---- adding events ------------------------------------------------------------------------
    def add_summary(self, summary: Any, global_step: int | None = None) -> None:
        """Adds a ``Summary`` (or its serialized bytes, as ``sess.run`` of a summary op returns them).

        Only the first value of each tag keeps its ``metadata``, as in TF (TensorBoard reads it once).

        Raises:
            TypeError: ``summary`` is neither bytes nor a ``Summary``.
            ValueError: the bytes are not a serialized ``Summary``.
        """
        if isinstance(summary, bytes | bytearray):
            summary = Summary.FromString(bytes(summary))
        elif isinstance(summary, Summary):
            summary = Summary.FromString(summary.SerializeToString())
        else:
            raise TypeError(f"add_summary takes a Summary or its serialized bytes, got {type(summary).__name__}")
        for value in summary.value:
            if not value.HasField("metadata"):
                continue
            if value.tag in self._seen_summary_tags:
                value.ClearField("metadata")
            else:
                self._seen_summary_tags.add(value.tag)
        self._add_event(Event(summary=summary), global_step)

    def add_session_log(self, session_log: SessionLog, global_step: int | None = None) -> None:
        """Adds a ``SessionLog`` (START, STOP or CHECKPOINT)."""
        self._add_event(Event(session_log=session_log), global_step)

    def add_graph(self, graph: Any, global_step: int | None = None, graph_def: Any = None) -> None:
        """Adds a graph for TensorBoard's graph view: a ``Graph``'s ``as_graph_def(add_shapes=True)`` (a
        ``GraphDef``, ours or TF's, is accepted as in TF1).

        Raises:
            ValueError: both ``graph`` and ``graph_def`` are given.
            TypeError: neither is a graph or a graph def.
        """
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        proto = self._graph_def(graph, graph_def)
        self._add_event(Event(graph_def=proto.SerializeToString()), global_step)

    def add_meta_graph(self, meta_graph_def: Any, global_step: int | None = None) -> None:
        """Adds a ``MetaGraphDef`` (ours or TF's, or its serialized bytes).

        Raises:
            TypeError: ``meta_graph_def`` is neither.
        """
        if isinstance(meta_graph_def, MetaGraphDef) or type(meta_graph_def).__name__ == "MetaGraphDef":
            meta_graph_def = meta_graph_def.SerializeToString()
        if not isinstance(meta_graph_def, bytes):
            raise TypeError(f"meta_graph_def must be type MetaGraphDef, saw type: {type(meta_graph_def)}")
        self._add_event(Event(meta_graph_def=meta_graph_def), global_step)

    def add_run_metadata(self, run_metadata: Any, tag: str, global_step: int | None = None) -> None:
        """Adds the ``RunMetadata`` of a traced run under ``tag`` (TensorBoard's compute-time view).

        Raises:
            ValueError: ``tag`` was already used by this writer.
        """
        if tag in self._session_run_tags:
            raise ValueError("The provided tag was already used for this event type")
        self._session_run_tags.add(tag)
        data = run_metadata_proto(run_metadata).SerializeToString()
        self._add_event(Event(tagged_run_metadata=TaggedRunMetadata(tag=tag, run_metadata=data)), global_step)

    def add_event(self, event: Event) -> None:
        """Adds an ``Event`` as it is."""
        self._warn_if_closed()
        self.event_writer.add_event(event)

    # ---- life cycle ---------------------------------------------------------------------------
    def flush(self) -> None:
        """Writes every pending event to the file."""
        self._warn_if_closed()
        self.event_writer.flush()

    def close(self) -> None:
        """Flushes and closes the event file; later events are ignored until :meth:`reopen`."""
        self.event_writer.close()
        self._closed = True

    def reopen(self) -> None:
        """Reopens a closed writer; new events go to a new event file in the same ``logdir``."""
        self.event_writer.reopen()
        self._closed = False

    # ---- internals ----------------------------------------------------------------------------
    @staticmethod
    def _graph_def(graph: Any, graph_def: Any) -> GraphDef:
        source = graph if graph is not None else graph_def
        if isinstance(source, Graph):
            return source.as_graph_def(add_shapes=True)
        if isinstance(source, GraphDef):
            return source
        if type(source).__name__ == "GraphDef" and hasattr(source, "SerializeToString"):
            return GraphDef.FromString(source.SerializeToString())
        if isinstance(source, dict):
            return graph_def_proto(source)
        raise TypeError("The passed graph must be an instance of `Graph` or the deprecated `GraphDef`")

    def _add_event(self, event: Event, step: int | None) -> None:
        event.wall_time = time.time()
        if step is not None:
            event.step = int(step)
        self.add_event(event)

    def _warn_if_closed(self) -> None:
        if self._closed:
            warnings.warn(
                "Attempting to use a closed FileWriter. The operation will be a noop unless the FileWriter "
                "is explicitly reopened.",
                stacklevel=3,
            )


class FileWriterCache:
    """One shared :class:`FileWriter` per logdir (``tf.summary.FileWriterCache``), so hooks share a file.

    Example:
        >>> w = FileWriterCache.get("memory://writer_cache_doc")
        >>> w is FileWriterCache.get("memory://writer_cache_doc")
        True
        >>> FileWriterCache.clear()
    """

    _cache: dict[str, FileWriter] = {}
    _lock = threading.RLock()

    @staticmethod
    def get(logdir: str) -> FileWriter:
        """The writer for ``logdir``, created with the default graph the first time."""
        with FileWriterCache._lock:
            writer = FileWriterCache._cache.get(logdir)
            if writer is None:
                writer = FileWriter(logdir, graph=get_default_graph())
                FileWriterCache._cache[logdir] = writer
            return writer

    @staticmethod
    def clear() -> None:
        """Closes and forgets every cached writer."""
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache = {}


__all__ = ["FileWriter", "FileWriterCache"]
