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
# ruff: noqa: E741, UP031  (the code is TensorFlow's, kept as written)

"""Builds the CIFAR-10 network.

Summary of available functions:

 # Compute input images and labels for training. If you would like to run
 # evaluations, use inputs() instead.
 inputs, labels = distorted_inputs()

 # Compute inference on the model inputs to make a prediction.
 predictions = inference(inputs)

 # Compute the total loss of the prediction with respect to the labels.
 loss = loss(predictions, labels)

 # Create a graph to run one step of training with respect to the loss.
 train_op = train(loss, global_step)

tensorflow/models' tutorials/image/cifar10/cifar10.py, written against ``tensorflow.compat.v1``, with the layers
written with ``tf.layers`` (conv2d, max_pooling2d, flatten, dense with a kernel regularizer for the weight decay)
and batch normalization after each convolution in the widely copied TF1 form (``tf.nn.moments``, an
``ExponentialMovingAverage`` of the batch statistics, ``tf.cond`` on a training flag, ``tf.nn.batch_normalization``;
TF 2.21 without Keras 2 has no ``tf.layers.batch_normalization`` to compare with). Only the import line differs
between the TF and the dtf_notebook runs; the data are synthetic (cifar10_input.py).
"""

import re

import cifar10_input

import dtf_notebook.compat.v1 as tf

FLAGS = tf.app.flags.FLAGS

# Basic model parameters.
tf.app.flags.DEFINE_integer("batch_size", 128, """Number of images to process in a batch.""")
tf.app.flags.DEFINE_string("data_dir", "/tmp/cifar10_data", """Path to the CIFAR-10 data directory.""")
tf.app.flags.DEFINE_boolean("use_fp16", False, """Train the model using fp16.""")

# Global constants describing the CIFAR-10 data set.
IMAGE_SIZE = cifar10_input.IMAGE_SIZE
NUM_CLASSES = cifar10_input.NUM_CLASSES
NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN = cifar10_input.NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN
NUM_EXAMPLES_PER_EPOCH_FOR_EVAL = cifar10_input.NUM_EXAMPLES_PER_EPOCH_FOR_EVAL


# Constants describing the training process.
MOVING_AVERAGE_DECAY = 0.9999  # The decay to use for the moving average.
NUM_EPOCHS_PER_DECAY = 350.0  # Epochs after which learning rate decays.
LEARNING_RATE_DECAY_FACTOR = 0.1  # Learning rate decay factor.
INITIAL_LEARNING_RATE = 0.1  # Initial learning rate.

# If a model is trained with multiple GPUs, prefix all Op names with tower_name
# to differentiate the operations. Note that this prefix is removed from the
# names of the summaries when visualizing a model.
TOWER_NAME = "tower"


def _activation_summary(x):
    """Helper to create summaries for activations.

    Creates a summary that provides a histogram of activations.
    Creates a summary that measures the sparsity of activations.

    Args:
      x: Tensor
    Returns:
      nothing
    """
    # Remove 'tower_[0-9]/' from the name in case this is a multi-GPU training
    # session. This helps the clarity of presentation on tensorboard.
    tensor_name = re.sub("%s_[0-9]*/" % TOWER_NAME, "", x.op.name)
    tf.summary.histogram(tensor_name + "/activations", x)
    tf.summary.scalar(tensor_name + "/sparsity", tf.nn.zero_fraction(x))


def _weight_decay(wd):
    """A kernel regularizer adding L2Loss * wd (the original's _variable_with_weight_decay)."""

    def regularizer(var):
        return tf.multiply(tf.nn.l2_loss(var), wd, name="weight_loss")

    return regularizer


def batch_norm(x, n_out, phase_train):
    """Batch normalization on convolutional maps.

    Ref.: http://stackoverflow.com/questions/33949786/how-could-i-use-batch-normalization-in-tensorflow

    Args:
      x: Tensor, 4D BHWD input maps
      n_out: integer, depth of input maps
      phase_train: boolean tf.Variable, true indicates training phase
    Returns:
      normed: batch-normalized maps
    """
    with tf.variable_scope("bn"):
        beta = tf.Variable(tf.constant(0.0, shape=[n_out]), name="beta", trainable=True)
        gamma = tf.Variable(tf.constant(1.0, shape=[n_out]), name="gamma", trainable=True)
        batch_mean, batch_var = tf.nn.moments(x, [0, 1, 2], name="moments")
        ema = tf.train.ExponentialMovingAverage(decay=0.5)

        def mean_var_with_update():
            ema_apply_op = ema.apply([batch_mean, batch_var])
            with tf.control_dependencies([ema_apply_op]):
                return tf.identity(batch_mean), tf.identity(batch_var)

        mean, var = tf.cond(
            phase_train, mean_var_with_update, lambda: (ema.average(batch_mean), ema.average(batch_var))
        )
        normed = tf.nn.batch_normalization(x, mean, var, beta, gamma, 1e-3)
    return normed


def distorted_inputs():
    """Construct distorted input for CIFAR training using the Reader ops.

    Returns:
      images: Images. 4D tensor of [batch_size, IMAGE_SIZE, IMAGE_SIZE, 3] size.
      labels: Labels. 1D tensor of [batch_size] size.
    """
    images, labels = cifar10_input.distorted_inputs(data_dir=FLAGS.data_dir, batch_size=FLAGS.batch_size)
    if FLAGS.use_fp16:
        images = tf.cast(images, tf.float16)
    return images, labels


def inputs(eval_data):
    """Construct input for CIFAR evaluation using the Reader ops.

    Args:
      eval_data: bool, indicating if one should use the train or eval data set.

    Returns:
      images: Images. 4D tensor of [batch_size, IMAGE_SIZE, IMAGE_SIZE, 3] size.
      labels: Labels. 1D tensor of [batch_size] size.
    """
    images, labels = cifar10_input.inputs(eval_data=eval_data, data_dir=FLAGS.data_dir, batch_size=FLAGS.batch_size)
    if FLAGS.use_fp16:
        images = tf.cast(images, tf.float16)
    return images, labels


def inference(images, phase_train):
    """Build the CIFAR-10 model.

    Args:
      images: Images returned from distorted_inputs() or inputs().
      phase_train: boolean tensor, true while training (batch statistics).

    Returns:
      Logits.
    """
    # conv1
    with tf.variable_scope("conv1") as scope:
        conv = tf.layers.conv2d(
            images,
            64,
            5,
            padding="same",
            use_bias=False,
            kernel_initializer=tf.truncated_normal_initializer(stddev=5e-2),
        )
        conv1 = tf.nn.relu(batch_norm(conv, 64, phase_train), name=scope.name)
        _activation_summary(conv1)

    # pool1
    pool1 = tf.layers.max_pooling2d(conv1, pool_size=3, strides=2, padding="same", name="pool1")
    # norm1
    norm1 = tf.nn.lrn(pool1, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75, name="norm1")

    # conv2
    with tf.variable_scope("conv2") as scope:
        conv = tf.layers.conv2d(
            norm1,
            64,
            5,
            padding="same",
            use_bias=False,
            kernel_initializer=tf.truncated_normal_initializer(stddev=5e-2),
        )
        conv2 = tf.nn.relu(batch_norm(conv, 64, phase_train), name=scope.name)
        _activation_summary(conv2)

    # norm2
    norm2 = tf.nn.lrn(conv2, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75, name="norm2")
    # pool2
    pool2 = tf.layers.max_pooling2d(norm2, pool_size=3, strides=2, padding="same", name="pool2")

    # local3
    with tf.variable_scope("local3") as scope:
        # Move everything into depth so we can perform a single matrix multiply.
        reshape = tf.layers.flatten(pool2)
        local3 = tf.layers.dense(
            reshape,
            384,
            activation=tf.nn.relu,
            kernel_initializer=tf.truncated_normal_initializer(stddev=0.04),
            bias_initializer=tf.constant_initializer(0.1),
            kernel_regularizer=_weight_decay(0.004),
        )
        _activation_summary(local3)

    # local4
    with tf.variable_scope("local4") as scope:
        local4 = tf.layers.dense(
            local3,
            192,
            activation=tf.nn.relu,
            kernel_initializer=tf.truncated_normal_initializer(stddev=0.04),
            bias_initializer=tf.constant_initializer(0.1),
            kernel_regularizer=_weight_decay(0.004),
        )
        _activation_summary(local4)

    # linear layer(WX + b),
    # We don't apply softmax here because
    # tf.nn.sparse_softmax_cross_entropy_with_logits accepts the unscaled logits
    # and performs the softmax internally for efficiency.
    with tf.variable_scope("softmax_linear") as scope:
        softmax_linear = tf.layers.dense(
            local4,
            NUM_CLASSES,
            kernel_initializer=tf.truncated_normal_initializer(stddev=1 / 192.0),
            bias_initializer=tf.constant_initializer(0.0),
        )
        _activation_summary(softmax_linear)

    return softmax_linear


def loss(logits, labels):
    """Add L2Loss to all the trainable variables.

    Add summary for "Loss" and "Loss/avg".
    Args:
      logits: Logits from inference().
      labels: Labels from distorted_inputs or inputs(). 1-D tensor
              of shape [batch_size]

    Returns:
      Loss tensor of type float.
    """
    # Calculate the average cross entropy loss across the batch.
    labels = tf.cast(labels, tf.int64)
    cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits, name="cross_entropy_per_example"
    )
    cross_entropy_mean = tf.reduce_mean(cross_entropy, name="cross_entropy")
    tf.add_to_collection("losses", cross_entropy_mean)
    # The weight decay terms the layers' kernel regularizers made.
    for weight_decay in tf.losses.get_regularization_losses():
        tf.add_to_collection("losses", weight_decay)

    # The total loss is defined as the cross entropy loss plus all of the weight
    # decay terms (L2 loss).
    return tf.add_n(tf.get_collection("losses"), name="total_loss")


def _add_loss_summaries(total_loss):
    """Add summaries for losses in CIFAR-10 model.

    Generates moving average for all losses and associated summaries for
    visualizing the performance of the network.

    Args:
      total_loss: Total loss from loss().
    Returns:
      loss_averages_op: op for generating moving averages of losses.
    """
    # Compute the moving average of all individual losses and the total loss.
    loss_averages = tf.train.ExponentialMovingAverage(0.9, name="avg")
    losses = tf.get_collection("losses")
    loss_averages_op = loss_averages.apply(losses + [total_loss])

    # Attach a scalar summary to all individual losses and the total loss; do the
    # same for the averaged version of the losses.
    for l in losses + [total_loss]:
        # Name each loss as '(raw)' and name the moving average version of the loss
        # as the original loss name.
        tf.summary.scalar(l.op.name + " (raw)", l)
        tf.summary.scalar(l.op.name, loss_averages.average(l))

    return loss_averages_op


def train(total_loss, global_step):
    """Train CIFAR-10 model.

    Create an optimizer and apply to all trainable variables. Add moving
    average for all trainable variables.

    Args:
      total_loss: Total loss from loss().
      global_step: Integer Variable counting the number of training steps
        processed.
    Returns:
      train_op: op for training.
    """
    # Variables that affect learning rate.
    num_batches_per_epoch = NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN / FLAGS.batch_size
    decay_steps = int(num_batches_per_epoch * NUM_EPOCHS_PER_DECAY)

    # Decay the learning rate exponentially based on the number of steps.
    lr = tf.train.exponential_decay(
        INITIAL_LEARNING_RATE, global_step, decay_steps, LEARNING_RATE_DECAY_FACTOR, staircase=True
    )
    tf.summary.scalar("learning_rate", lr)

    # Generate moving averages of all losses and associated summaries.
    loss_averages_op = _add_loss_summaries(total_loss)

    # Compute gradients.
    with tf.control_dependencies([loss_averages_op]):
        opt = tf.train.GradientDescentOptimizer(lr)
        grads = opt.compute_gradients(total_loss)

    # Apply gradients.
    apply_gradient_op = opt.apply_gradients(grads, global_step=global_step)

    # Add histograms for trainable variables.
    for var in tf.trainable_variables():
        tf.summary.histogram(var.op.name, var)

    # Add histograms for gradients.
    for grad, var in grads:
        if grad is not None:
            tf.summary.histogram(var.op.name + "/gradients", grad)

    # Track the moving averages of all trainable variables.
    variable_averages = tf.train.ExponentialMovingAverage(MOVING_AVERAGE_DECAY, global_step)
    with tf.control_dependencies([apply_gradient_op]):
        variables_averages_op = variable_averages.apply(tf.trainable_variables())

    return variables_averages_op
