"""Reads the ``Event`` records of an event file (``tf.train.summary_iterator``).

Reads files written by :class:`~dtf_notebook.summary.writer.FileWriter` and by TensorFlow alike;
the path may be an fsspec URL. Each record's CRCs are checked.

Example:
    >>> from dtf_notebook.summary.writer import FileWriter
    >>> from dtf_notebook.summary.messages import Summary
    >>> with FileWriter("memory://summary_iterator_doc") as writer:
    ...     writer.add_summary(Summary(value=[Summary.Value(tag="loss", simple_value=2.0)]), global_step=5)
    >>> for event in summary_iterator(writer.event_writer.filename):
    ...     for value in event.summary.value:
    ...         print(event.step, value.tag, value.simple_value)
    5 loss 2.0
"""

from __future__ import annotations

from collections.abc import Iterator

import fsspec

from dtf_notebook import errors
from dtf_notebook.summary.messages import Event
from dtf_notebook.summary.record_writer import read_records


def summary_iterator(path: str) -> Iterator[Event]:
    """Yields each ``Event`` of the event file at ``path``, in order.

    Raises:
        NotFoundError: there is no file at ``path``.
        DataLossError: a record is corrupted or cut short, or does not hold an ``Event``.

    Example:
        >>> from dtf_notebook.summary.writer import FileWriter
        >>> with FileWriter("memory://summary_iterator_fn_doc") as writer:
        ...     pass
        >>> [event.file_version for event in summary_iterator(writer.event_writer.filename)]
        ['brain.Event:2']
    """
    try:
        file = fsspec.open(path, "rb").open()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"{path}; No such file or directory") from None
    with file:
        for offset, record in enumerate(read_records(file, name=path)):
            try:
                yield Event.FromString(record)
            except ValueError as e:
                raise errors.DataLossError(None, None, f"Record {offset} of {path} is not an Event: {e}") from None


__all__ = ["summary_iterator"]
