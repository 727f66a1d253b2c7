# Copyright 2015 The TensorFlow Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================

"""Routine for decoding the CIFAR-10 binary file format.

tensorflow/models' tutorials/image/cifar10/cifar10_input.py, written against ``tensorflow.compat.v1``, with its
data replaced: instead of the CIFAR-10 binary files read through queues, small synthetic 32x32 RGB images of 10
classes (a smooth colour pattern per class plus noise, from a seeded generator) go through ``tf.data`` in the
file's order; the preprocessing (random crop, flip, brightness and contrast for training; a central crop for
evaluation; per-image standardization) is the original's. Only the import line differs between the TF and the
dtf_notebook runs.
"""

import numpy as np

import dtf_notebook.compat.v1 as tf

# Process images of this size. Note that this differs from the original CIFAR
# image size of 32 x 32. If one alters this number, then the entire model
# architecture will change and any model would need to be retrained.
IMAGE_SIZE = 24

# Global constants describing the CIFAR-10 data set.
NUM_CLASSES = 10
NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN = 512
NUM_EXAMPLES_PER_EPOCH_FOR_EVAL = 128


def _synthetic_cifar10(num_examples, seed):
    """Images [num_examples, 32, 32, 3] with values 0..255 and int32 labels: per class a smooth pattern plus noise."""
    rng = np.random.RandomState(seed)
    yy, xx = np.mgrid[0:32, 0:32] / 32.0
    patterns = []
    for label in range(NUM_CLASSES):
        c = np.random.RandomState(100 + label).uniform(size=(3, 3))
        patterns.append(
            np.stack([c[k, 0] * np.sin(2 * np.pi * (c[k, 1] * xx + c[k, 2] * yy) + label) for k in range(3)], axis=-1)
        )
    labels = rng.randint(0, NUM_CLASSES, size=num_examples).astype(np.int32)
    images = np.stack([patterns[label] for label in labels]) + 0.5 * rng.normal(size=(num_examples, 32, 32, 3))
    images = np.clip(127.5 + 100.0 * images, 0, 255).astype(np.float32)
    return images, labels


def _dataset(eval_data):
    num = NUM_EXAMPLES_PER_EPOCH_FOR_EVAL if eval_data else NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN
    images, labels = _synthetic_cifar10(num, seed=1 if eval_data else 0)
    return tf.data.Dataset.from_tensor_slices((images, labels))


def distorted_inputs(data_dir, batch_size):
    """Construct distorted input for CIFAR training using the Reader ops.

    Args:
      data_dir: Path to the CIFAR-10 data directory (unused: the data are synthetic).
      batch_size: Number of images per batch.

    Returns:
      images: Images. 4D tensor of [batch_size, IMAGE_SIZE, IMAGE_SIZE, 3] size.
      labels: Labels. 1D tensor of [batch_size] size.
    """
    height = IMAGE_SIZE
    width = IMAGE_SIZE

    def distort(reshaped_image, label):
        # Image processing for training the network. Note the many random
        # distortions applied to the image.

        # Randomly crop a [height, width] section of the image.
        distorted_image = tf.random_crop(reshaped_image, [height, width, 3])

        # Randomly flip the image horizontally.
        distorted_image = tf.image.random_flip_left_right(distorted_image)

        # Because these operations are not commutative, consider randomizing
        # the order their operation.
        # NOTE: since per_image_standardization zeros the mean and makes
        # the stddev unit, this likely has no effect see tensorflow#1458.
        distorted_image = tf.image.random_brightness(distorted_image, max_delta=63)
        distorted_image = tf.image.random_contrast(distorted_image, lower=0.2, upper=1.8)

        # Subtract off the mean and divide by the variance of the pixels.
        float_image = tf.image.per_image_standardization(distorted_image)

        # Set the shapes of tensors.
        float_image.set_shape([height, width, 3])
        return float_image, label

    dataset = _dataset(eval_data=False).map(distort).repeat()
    images, labels = dataset.batch(batch_size, drop_remainder=True).make_one_shot_iterator().get_next()

    # Display the training images in the visualizer.
    tf.summary.image("images", images)
    return images, labels


def inputs(eval_data, data_dir, batch_size):
    """Construct input for CIFAR evaluation using the Reader ops.

    Args:
      eval_data: bool, indicating if one should use the train or eval data set.
      data_dir: Path to the CIFAR-10 data directory (unused: the data are synthetic).
      batch_size: Number of images per batch.

    Returns:
      images: Images. 4D tensor of [batch_size, IMAGE_SIZE, IMAGE_SIZE, 3] size.
      labels: Labels. 1D tensor of [batch_size] size.
    """
    height = IMAGE_SIZE
    width = IMAGE_SIZE

    def preprocess(reshaped_image, label):
        # Image processing for evaluation.
        # Crop the central [height, width] of the image.
        resized_image = tf.image.resize_image_with_crop_or_pad(reshaped_image, height, width)

        # Subtract off the mean and divide by the variance of the pixels.
        float_image = tf.image.per_image_standardization(resized_image)

        # Set the shapes of tensors.
        float_image.set_shape([height, width, 3])
        return float_image, label

    dataset = _dataset(eval_data).map(preprocess).repeat()
    images, labels = dataset.batch(batch_size, drop_remainder=True).make_one_shot_iterator().get_next()

    # Display the training images in the visualizer.
    tf.summary.image("images", images)
    return images, labels
