"""``tf.summary``: TF1's summary ops, ``FileWriter``, ``FileWriterCache`` and the event messages.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     s = tf.summary.histogram("weights", tf.constant([1.0, 2.0]))
    ...     [t.name for t in tf.get_collection(tf.GraphKeys.SUMMARIES)]
    ['weights:0']
"""

from dtf_notebook.summary import (
    Event,
    FileWriter,
    FileWriterCache,
    SessionLog,
    Summary,
    SummaryDescription,
    TaggedRunMetadata,
    audio,
    histogram,
    image,
    merge,
    merge_all,
    scalar,
    tensor_summary,
    text,
)
from dtf_notebook.summary.description import get_summary_description

__all__ = [
    "Event",
    "FileWriter",
    "FileWriterCache",
    "SessionLog",
    "Summary",
    "SummaryDescription",
    "TaggedRunMetadata",
    "audio",
    "get_summary_description",
    "histogram",
    "image",
    "merge",
    "merge_all",
    "scalar",
    "tensor_summary",
    "text",
]
