"""``tf.data`` in graph mode: datasets, their transformations and TF1's iterators.

A :class:`Dataset` is described in the graph; an iterator op carries the whole pipeline, as plain data (graph defs
for its functions), to the device it is placed on. There the pipeline is compiled once (each function into a
:class:`~dtf_notebook.runtime.executor.Plan`) and run by the iterator's kernels: on a cluster the worker that holds
the iterator reads the files itself, with no client in the data path, and the iterator's position persists across
``Session.run`` calls in its task's resource containers.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default():
    ...     ds = tf.data.Dataset.from_tensor_slices(([1, 2, 3], ["a", "b", "c"])).shuffle(3, seed=7).batch(3)
    ...     numbers, letters = ds.make_one_shot_iterator().get_next()
    ...     with tf.Session() as sess:
    ...         n, l = sess.run([numbers, letters])
    >>> sorted(n.tolist()), sorted(l.tolist())
    ([1, 2, 3], [b'a', b'b', b'c'])
"""

from dtf_notebook.data import experimental
from dtf_notebook.data.dataset_ops import AUTOTUNE, Dataset, DatasetV1
from dtf_notebook.data.iterator_ops import Iterator, make_initializable_iterator, make_one_shot_iterator
from dtf_notebook.data.readers import FixedLengthRecordDataset, TextLineDataset, TFRecordDataset
from dtf_notebook.data.structure import TensorSpec

__all__ = [
    "AUTOTUNE",
    "Dataset",
    "DatasetV1",
    "Iterator",
    "TextLineDataset",
    "TFRecordDataset",
    "FixedLengthRecordDataset",
    "TensorSpec",
    "experimental",
    "make_one_shot_iterator",
    "make_initializable_iterator",
]
