"""The seed-003 workflow: ``learn_runner.run(experiment_fn)`` started once per task (master, worker, ps) with
TF_CONFIG (environment "cloud"), each task running its default schedule.

Usage: python programs_learn_runner.py MODEL_DIR
"""

import json
import os
import sys

import numpy as np

import dtf_notebook.compat.v1 as tf

MODEL_DIR = sys.argv[1]


def experiment_fn(run_config, hparams):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 2)).astype(np.float32)
    y = (2.0 * x[:, 0] - x[:, 1] + 0.5).astype(np.float32)
    estimator = tf.estimator.LinearRegressor(
        [tf.feature_column.numeric_column("x", shape=[2])],
        config=run_config,
        optimizer=tf.train.GradientDescentOptimizer(0.005),
    )
    return tf.contrib.learn.Experiment(
        estimator,
        train_input_fn=tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=20, num_epochs=None, shuffle=True),
        eval_input_fn=tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=50, shuffle=False),
        train_steps=80,
        eval_steps=None,
    )


def main():
    config = tf.contrib.learn.RunConfig(model_dir=MODEL_DIR, save_checkpoints_steps=40)
    result = tf.contrib.learn.learn_runner.run(experiment_fn, run_config=config)
    if config.task_type == "master":
        eval_result, _ = result
        with open(os.path.join(MODEL_DIR, "master_eval.json"), "w") as f:
            json.dump({k: float(v) for k, v in eval_result.items()}, f)


if __name__ == "__main__":
    main()
