"""A TF1 Estimator program as its authors would run it on Kubernetes: started once per task with TF_CONFIG set,
``train_and_evaluate`` does what the task's role asks (only the import line differs from a TF 1.x program).

Usage: python programs_train_and_evaluate.py MODEL_DIR [tensorflow|dtf]
"""

import json
import os
import sys

import numpy as np

if len(sys.argv) > 2 and sys.argv[2] == "tensorflow":
    import tensorflow.compat.v1 as tf
else:
    import dtf_notebook.compat.v1 as tf

MODEL_DIR = sys.argv[1]
MAX_STEPS = 60


def data(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    color = rng.choice(["red", "green", "blue"], n)
    y = ((x[:, 0] + x[:, 1] > 0).astype(np.int64) + (color == "red")).astype(np.int64)
    return {"x": x, "color": color}, y


def main():
    tf.logging.set_verbosity(tf.logging.INFO)
    train_x, train_y = data(400, 0)
    eval_x, eval_y = data(200, 1)
    columns = [
        tf.feature_column.numeric_column("x", shape=[3]),
        tf.feature_column.indicator_column(
            tf.feature_column.categorical_column_with_vocabulary_list("color", ["red", "green", "blue"])
        ),
    ]
    config = tf.estimator.RunConfig(
        model_dir=MODEL_DIR, save_checkpoints_steps=20, tf_random_seed=1, experimental_max_worker_delay_secs=1
    )
    estimator = tf.estimator.DNNClassifier(
        hidden_units=[16],
        feature_columns=columns,
        n_classes=3,
        config=config,
        optimizer=tf.train.AdagradOptimizer(0.3),
    )
    train_spec = tf.estimator.TrainSpec(
        tf.estimator.inputs.numpy_input_fn(train_x, train_y, batch_size=40, num_epochs=None, shuffle=True),
        max_steps=MAX_STEPS,
    )
    serving = tf.estimator.export.build_parsing_serving_input_receiver_fn(
        tf.feature_column.make_parse_example_spec(columns)
    )
    eval_spec = tf.estimator.EvalSpec(
        tf.estimator.inputs.numpy_input_fn(eval_x, eval_y, batch_size=50, shuffle=False),
        steps=None,
        exporters=[
            tf.estimator.FinalExporter("final", serving),
            tf.estimator.LatestExporter("latest", serving, exports_to_keep=2),
        ],
        start_delay_secs=0,
        throttle_secs=1,
    )
    tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    if estimator.config.task_type == "evaluator":
        result = estimator.evaluate(eval_spec.input_fn, name="final")
        with open(os.path.join(MODEL_DIR, "final_eval.json"), "w") as f:
            json.dump({k: float(v) for k, v in result.items()}, f)


if __name__ == "__main__":
    main()
