"""Stands in for ``tensorflow.examples.tutorials.mnist.input_data``: ``read_data_sets`` with TF's ``DataSet`` and
``next_batch``, on scikit-learn's bundled digits shaped like MNIST (28x28 = 784 features in [0, 1], labels 0-9;
1,238 training, 200 validation and 359 test images) so that nothing is downloaded.

One difference from TF's file: the shuffles draw from a ``RandomState`` of the data set's own (seeded) instead of
numpy's global one, so that two runs of a script see the same batches whatever else uses numpy's generator.

Example:
    >>> data = read_data_sets("/unused")
    >>> images, labels = data.train.next_batch(100)
    >>> images.shape, labels.dtype.name, data.validation.num_examples, data.test.num_examples
    ((100, 784), 'int64', 200, 359)
"""

from __future__ import annotations

import collections

import numpy

from dtf_notebook.datasets import load_digits_784

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


def dense_to_one_hot(labels_dense: numpy.ndarray, num_classes: int) -> numpy.ndarray:
    """Converts class labels from scalars to one-hot vectors (TF's function)."""
    num_labels = labels_dense.shape[0]
    index_offset = numpy.arange(num_labels) * num_classes
    labels_one_hot = numpy.zeros((num_labels, num_classes))
    labels_one_hot.flat[index_offset + labels_dense.ravel()] = 1
    return labels_one_hot


class DataSet:
    """TF's ``DataSet``: images and labels with ``next_batch`` shuffling every epoch (its own seeded generator)."""

    def __init__(self, images: numpy.ndarray, labels: numpy.ndarray, seed: int = 0) -> None:
        assert images.shape[0] == labels.shape[0], f"images.shape: {images.shape} labels.shape: {labels.shape}"
        self._num_examples = images.shape[0]
        self._images = images
        self._labels = labels
        self._epochs_completed = 0
        self._index_in_epoch = 0
        self._random = numpy.random.RandomState(seed)

    @property
    def images(self) -> numpy.ndarray:
        return self._images

    @property
    def labels(self) -> numpy.ndarray:
        return self._labels

    @property
    def num_examples(self) -> int:
        return self._num_examples

    @property
    def epochs_completed(self) -> int:
        return self._epochs_completed

    def next_batch(self, batch_size: int, fake_data: bool = False, shuffle: bool = True):
        """Returns the next ``batch_size`` examples from this data set (TF's algorithm)."""
        start = self._index_in_epoch
        # Shuffle for the first epoch
        if self._epochs_completed == 0 and start == 0 and shuffle:
            perm0 = numpy.arange(self._num_examples)
            self._random.shuffle(perm0)
            self._images = self.images[perm0]
            self._labels = self.labels[perm0]
        # Go to the next epoch
        if start + batch_size > self._num_examples:
            # Finished epoch
            self._epochs_completed += 1
            # Get the rest examples in this epoch
            rest_num_examples = self._num_examples - start
            images_rest_part = self._images[start : self._num_examples]
            labels_rest_part = self._labels[start : self._num_examples]
            # Shuffle the data
            if shuffle:
                perm = numpy.arange(self._num_examples)
                self._random.shuffle(perm)
                self._images = self.images[perm]
                self._labels = self.labels[perm]
            # Start next epoch
            start = 0
            self._index_in_epoch = batch_size - rest_num_examples
            end = self._index_in_epoch
            images_new_part = self._images[start:end]
            labels_new_part = self._labels[start:end]
            return (
                numpy.concatenate((images_rest_part, images_new_part), axis=0),
                numpy.concatenate((labels_rest_part, labels_new_part), axis=0),
            )
        self._index_in_epoch += batch_size
        end = self._index_in_epoch
        return self._images[start:end], self._labels[start:end]


def read_data_sets(
    train_dir: str, fake_data: bool = False, one_hot: bool = False, validation_size: int = 200, seed: int = 0
) -> Datasets:
    """The digits as MNIST's ``Datasets(train, validation, test)`` (``train_dir`` is not read)."""
    train_images, train_labels, test_images, test_labels = load_digits_784(seed=seed)
    if one_hot:
        train_labels, test_labels = dense_to_one_hot(train_labels, 10), dense_to_one_hot(test_labels, 10)
    validation = DataSet(train_images[:validation_size], train_labels[:validation_size], seed + 1)
    train = DataSet(train_images[validation_size:], train_labels[validation_size:], seed + 2)
    test = DataSet(test_images, test_labels, seed + 3)
    return Datasets(train=train, validation=validation, test=test)
