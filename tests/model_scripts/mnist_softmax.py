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
# ruff: noqa: UP031  (the code is TensorFlow's, kept as written)

"""A very simple MNIST classifier.

See extensive documentation at
https://www.tensorflow.org/get_started/mnist/beginners

TensorFlow's tensorflow/examples/tutorials/mnist/mnist_softmax.py (r1.x), written against
``tensorflow.compat.v1``. Changed for the test: the import line (this file imports dtf_notebook; the test runs it
with ``import tensorflow.compat.v1 as tf`` too), the data (input_data of this folder: scikit-learn's digits shaped
like MNIST), the loss printed every 100 steps and at the end, a --max_steps flag (the original's 1000), and slim-style
--master/--ps_tasks flags (as in tensorflow/models' train_image_classifier.py) so that the same script trains with its
variables on the ps task of a cluster.
"""

import argparse
import sys

import input_data  # stands in for tensorflow.examples.tutorials.mnist.input_data

import dtf_notebook.compat.v1 as tf

tf.disable_v2_behavior()

FLAGS = None


def main(_):
    # Import data
    mnist = input_data.read_data_sets(FLAGS.data_dir)

    with tf.device(tf.train.replica_device_setter(FLAGS.ps_tasks)):
        # Create the model
        x = tf.placeholder(tf.float32, [None, 784])
        W = tf.Variable(tf.zeros([784, 10]))
        b = tf.Variable(tf.zeros([10]))
        y = tf.matmul(x, W) + b

        # Define loss and optimizer
        y_ = tf.placeholder(tf.int64, [None])

        # The raw formulation of cross-entropy,
        #
        #   tf.reduce_mean(-tf.reduce_sum(y_ * tf.log(tf.nn.softmax(y)),
        #                                 reduction_indices=[1]))
        #
        # can be numerically unstable.
        #
        # So here we use tf.losses.sparse_softmax_cross_entropy on the raw
        # logit outputs of 'y', and then average across the batch.
        cross_entropy = tf.losses.sparse_softmax_cross_entropy(labels=y_, logits=y)
        train_step = tf.train.GradientDescentOptimizer(0.5).minimize(cross_entropy)

    sess = tf.InteractiveSession(FLAGS.master)
    tf.global_variables_initializer().run()
    # Train
    for step in range(FLAGS.max_steps):
        batch_xs, batch_ys = mnist.train.next_batch(100)
        _, loss_value = sess.run([train_step, cross_entropy], feed_dict={x: batch_xs, y_: batch_ys})
        if step % 100 == 0:
            print("step %d: loss = %.6f" % (step, loss_value))

    # Test trained model
    correct_prediction = tf.equal(tf.argmax(y, 1), y_)
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, tf.float32))
    test_accuracy, test_loss = sess.run(
        [accuracy, cross_entropy], feed_dict={x: mnist.test.images, y_: mnist.test.labels}
    )
    print("test accuracy %g" % test_accuracy)
    print("test loss = %.6f" % test_loss)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--data_dir", type=str, default="/tmp/tensorflow/mnist/input_data", help="Directory for storing input data"
    )
    parser.add_argument("--max_steps", type=int, default=1000, help="Number of steps to run trainer.")
    parser.add_argument("--master", type=str, default="", help="The address of the TensorFlow master to use.")
    parser.add_argument(
        "--ps_tasks", type=int, default=0, help="The number of parameter servers (0: variables on the worker)."
    )
    FLAGS, unparsed = parser.parse_known_args()
    tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
