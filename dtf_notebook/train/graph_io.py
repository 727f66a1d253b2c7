"""``tf.train.write_graph`` (``tf.io.write_graph``): a graph's ``GraphDef`` written to a file, as text or binary.

The file is TF's: a ``GraphDef`` protocol buffer (``Graph.as_graph_def()``, or any message given, a
``MetaGraphDef`` say) in text format (``graph.pbtxt``) or serialized, so ``tf.io.read_file`` +
``GraphDef.FromString`` or ``text_format.Parse`` in real TF read it back.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default() as g:
    ...     _ = tf.constant(1.0, name="one")
    >>> path = write_graph(g, "memory://write_graph_doc", "graph.pbtxt")
    >>> path, 'name: "one"' in tf.gfile.GFile(path).read()
    ('memory://write_graph_doc/graph.pbtxt', True)
"""

from __future__ import annotations

from typing import Any

from google.protobuf import text_format

from dtf_notebook.framework.graph import Graph
from dtf_notebook.framework.graph_proto import graph_def_proto
from dtf_notebook.lib.io import file_io

__all__ = ["write_graph", "write_graph_and_meta_graph"]


def _graph_def(graph_or_graph_def: Any) -> Any:
    """The message to write: a ``Graph``'s ``as_graph_def()``, a plain-dict graph def's ``GraphDef``, or the
    message given (ours or TF's)."""
    if isinstance(graph_or_graph_def, Graph):
        return graph_or_graph_def.as_graph_def()
    if hasattr(graph_or_graph_def, "SerializeToString"):
        return graph_or_graph_def
    return graph_def_proto(graph_or_graph_def)


def write_graph(graph_or_graph_def: Any, logdir: str, name: str, as_text: bool = True) -> str:
    """Writes a graph's ``GraphDef`` to ``logdir/name`` (creating ``logdir``) and returns that path.

    Args:
        graph_or_graph_def: A ``Graph``, a ``GraphDef`` (or another message, such as a ``MetaGraphDef``), or the
            plain-dict ``Graph.as_graph_def_dict()``.
        logdir: The directory (a local path or an fsspec URL).
        name: The file name, e.g. ``graph.pbtxt``.
        as_text: Text format (default) or serialized bytes.

    Raises:
        TypeError: ``graph_or_graph_def`` is none of those.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default() as g:
        ...     _ = tf.constant(1.0, name="one")
        >>> path = write_graph(g, "memory://write_graph_bin", "graph.pb", as_text=False)
        >>> [n.name for n in tf.GraphDef.FromString(tf.gfile.GFile(path, "rb").read()).node]
        ['one']
    """
    graph_def = _graph_def(graph_or_graph_def)
    file_io.makedirs(logdir)
    path = file_io.join(logdir, name)
    if as_text:
        content: Any = text_format.MessageToString(graph_def)
    else:
        content = graph_def.SerializeToString(deterministic=True)
    file_io.write_string_to_file(path, content)
    return path


def write_graph_and_meta_graph(graph: Graph, logdir: str | None, summary_writer: Any, saver: Any = None) -> None:
    """What TF's ``Supervisor`` and ``CheckpointSaverHook`` write as a session starts: the graph's
    ``as_graph_def(add_shapes=True)`` as ``graph.pbtxt`` in ``logdir``, and, to ``summary_writer``, the graph and its
    meta graph (with ``saver``'s ``SaverDef``) as events.

    Args:
        graph: The graph.
        logdir: Where ``graph.pbtxt`` goes (None: not written).
        summary_writer: A ``FileWriter`` (None: no events).
        saver: The saver whose ``SaverDef`` the meta graph holds, if any.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default() as g:
        ...     _ = tf.constant(1.0, name="one")
        >>> write_graph_and_meta_graph(g, "memory://graph_events_doc", None)
        >>> 'name: "one"' in tf.gfile.GFile("memory://graph_events_doc/graph.pbtxt").read()
        True
    """
    from dtf_notebook.framework.meta_graph import create_meta_graph_def

    graph_def = graph.as_graph_def(add_shapes=True)
    if logdir:
        write_graph(graph_def, logdir, "graph.pbtxt")
    if summary_writer is not None:
        summary_writer.add_graph(graph)
        saver_def = saver.saver_def if saver is not None else None
        summary_writer.add_meta_graph(create_meta_graph_def(graph_def=graph_def, saver_def=saver_def, graph=graph))
