"""Summaries for TensorBoard: summary ops, event files and their reader (TF1's ``tf.summary``).

Summary ops output serialized ``Summary`` protocol buffers; a :class:`FileWriter` writes them, with
the step, into TensorBoard event files (TFRecord framing, CRC-32C checked); :func:`summary_iterator`
reads event files back, ours or TensorFlow's.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     tf.summary.scalar("loss", tf.constant(0.25))
    ...     merged = tf.summary.merge_all()
    ...     with tf.Session() as sess, tf.summary.FileWriter("memory://summary_doc", sess.graph) as writer:
    ...         writer.add_summary(sess.run(merged), global_step=3)
    <tf.Tensor 'loss:0' shape=() dtype=string>
    >>> for event in tf.train.summary_iterator(writer.event_writer.filename):
    ...     for value in event.summary.value:
    ...         print(event.step, value.tag, value.simple_value)
    3 loss 0.25
"""

from dtf_notebook.summary.media_summaries import audio, image
from dtf_notebook.summary.messages import (
    Event,
    HistogramProto,
    LogMessage,
    SessionLog,
    Summary,
    SummaryDescription,
    SummaryMetadata,
    TaggedRunMetadata,
)
from dtf_notebook.summary.summary_iterator import summary_iterator
from dtf_notebook.summary.summary_ops import histogram, merge, merge_all, scalar, tensor_summary, text
from dtf_notebook.summary.writer import FileWriter, FileWriterCache

__all__ = [
    "Event",
    "audio",
    "image",
    "FileWriter",
    "FileWriterCache",
    "HistogramProto",
    "LogMessage",
    "SessionLog",
    "Summary",
    "SummaryDescription",
    "SummaryMetadata",
    "TaggedRunMetadata",
    "histogram",
    "merge",
    "merge_all",
    "scalar",
    "summary_iterator",
    "tensor_summary",
    "text",
]
