"""The Estimator in one process: train/evaluate/predict with a model_fn, checkpoints, hooks, warm starts,
train_and_evaluate locally; the canned DNNClassifier and LinearRegressor against the same computation written in
real TF 1 (TF 2.21 no longer ships tf.estimator, so the oracle is the graph the canned model builds)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest

import dtf_notebook.compat.v1 as dtf

X = np.array([[1.0], [2.0], [3.0], [4.0]], np.float32)


def _model_fn(features, labels, mode, params):
    tf = dtf
    w = tf.get_variable("w", [1, 1], initializer=tf.zeros_initializer())
    predictions = tf.matmul(features["x"], w)
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": predictions})
    loss = tf.losses.mean_squared_error(labels, predictions)
    train_op = tf.train.GradientDescentOptimizer(params["lr"]).minimize(loss, tf.train.get_global_step())
    metrics = {"mae": tf.metrics.mean_absolute_error(labels, predictions)}
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops=metrics)


def _inputs(**kw):
    return dtf.estimator.inputs.numpy_input_fn({"x": X}, 3 * X, shuffle=False, **kw)


def test_train_evaluate_predict_and_checkpoints(tmp_path):
    config = dtf.estimator.RunConfig(save_checkpoints_steps=10)
    est = dtf.estimator.Estimator(_model_fn, model_dir=str(tmp_path), config=config, params={"lr": 0.05})
    est.train(_inputs(batch_size=2, num_epochs=None), steps=25)
    assert est.latest_checkpoint().endswith("model.ckpt-25")
    assert sorted(est.get_variable_names()) == ["global_step", "w"]
    est.train(_inputs(batch_size=2, num_epochs=None), max_steps=25)  # nothing left to do
    assert int(est.get_variable_value("global_step")) == 25
    est.train(_inputs(batch_size=2, num_epochs=1))  # to the end of the input: two more steps
    assert int(est.get_variable_value("global_step")) == 27
    result = est.evaluate(_inputs(batch_size=4), name="test")
    w = est.get_variable_value("w")[0, 0]
    assert result["global_step"] == 27
    np.testing.assert_allclose(result["mae"], np.mean(np.abs(3 * X - w * X)), rtol=1e-5)
    np.testing.assert_allclose(result["loss"], np.mean((3 * X - w * X) ** 2), rtol=1e-5)
    assert os.listdir(est.eval_dir("test"))
    predictions = list(est.predict(dtf.estimator.inputs.numpy_input_fn({"x": X}, batch_size=3, shuffle=False)))
    np.testing.assert_allclose([p["y"][0] for p in predictions], w * X[:, 0], rtol=1e-6)


def test_input_fn_may_return_a_dataset_and_hooks_run(tmp_path):
    seen = []

    class Count(dtf.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            seen.append(1)

    def input_fn():
        return dtf.data.Dataset.from_tensor_slices(({"x": X}, 3 * X)).repeat().batch(2)

    est = dtf.estimator.Estimator(_model_fn, model_dir=str(tmp_path), params={"lr": 0.05})
    est.train(input_fn, steps=5, hooks=[Count()])
    assert len(seen) == 5
    assert est.evaluate(input_fn, steps=3)["global_step"] == 5


def test_warm_start_from_another_model(tmp_path):
    first = dtf.estimator.Estimator(_model_fn, model_dir=str(tmp_path / "a"), params={"lr": 0.05})
    first.train(_inputs(batch_size=4, num_epochs=None), steps=30)
    settings = dtf.estimator.WarmStartSettings(str(tmp_path / "a"), vars_to_warm_start="w")
    second = dtf.estimator.Estimator(
        _model_fn, model_dir=str(tmp_path / "b"), params={"lr": 0.0}, warm_start_from=settings
    )
    second.train(_inputs(batch_size=4, num_epochs=None), steps=1)
    assert second.get_variable_value("w") == pytest.approx(first.get_variable_value("w"))
    assert int(second.get_variable_value("global_step")) == 1


def test_train_and_evaluate_locally(tmp_path):
    config = dtf.estimator.RunConfig(save_checkpoints_steps=10)
    est = dtf.estimator.Estimator(_model_fn, model_dir=str(tmp_path), config=config, params={"lr": 0.05})
    train_spec = dtf.estimator.TrainSpec(_inputs(batch_size=2, num_epochs=None), max_steps=30)
    eval_spec = dtf.estimator.EvalSpec(_inputs(batch_size=4), steps=None, throttle_secs=0)
    metrics, exports = dtf.estimator.train_and_evaluate(est, train_spec, eval_spec)
    assert metrics["global_step"] == 30 and exports == []
    assert metrics["loss"] < 0.01


def test_errors():
    with pytest.raises(ValueError, match="must include features"):
        dtf.estimator.Estimator(lambda x: None)
    with pytest.raises(ValueError, match="does not include params"):
        dtf.estimator.Estimator(lambda features: None, params={"a": 1})
    est = dtf.estimator.Estimator(_model_fn, params={"lr": 0.1})
    with pytest.raises(ValueError, match="Can not provide both steps and max_steps"):
        est.train(_inputs(batch_size=1), steps=1, max_steps=2)
    with pytest.raises(ValueError, match="Missing train_op"):
        dtf.estimator.EstimatorSpec("train", loss=dtf.constant(1.0))
    with pytest.raises(ValueError, match="shuffle must be provided explicitly"):
        dtf.estimator.inputs.numpy_input_fn({"x": X})


def test_learn_runner_locally(tmp_path):
    def experiment_fn(output_dir):
        est = dtf.estimator.Estimator(_model_fn, model_dir=output_dir, params={"lr": 0.05})
        return dtf.contrib.learn.Experiment(
            est, _inputs(batch_size=2, num_epochs=None), _inputs(batch_size=4), train_steps=20, eval_steps=None
        )

    result, exports = dtf.contrib.learn.learn_runner.run(experiment_fn, output_dir=str(tmp_path))
    assert result["global_step"] == 20 and exports == []
    with pytest.raises(ValueError, match="non-existent task"):
        dtf.contrib.learn.learn_runner.run(experiment_fn, output_dir=str(tmp_path), schedule="fly")


# ---- canned models against the same graph in real TF ---------------------------------------------------------
RNG = np.random.default_rng(7)
FEATURES = {"x": RNG.normal(size=(12, 3)).astype(np.float32), "color": RNG.choice(["r", "g", "b", "w"], 12)}
LABELS = RNG.integers(0, 3, 12).astype(np.int64)
INIT = {
    "dnn/hiddenlayer_0/kernel": RNG.normal(size=(6, 5)).astype(np.float32) * 0.5,
    "dnn/hiddenlayer_0/bias": RNG.normal(size=5).astype(np.float32) * 0.1,
    "dnn/logits/kernel": RNG.normal(size=(5, 3)).astype(np.float32) * 0.5,
    "dnn/logits/bias": RNG.normal(size=3).astype(np.float32) * 0.1,
}
STEPS = 3


def _columns(tf):
    return [
        tf.feature_column.numeric_column("x", shape=[3]),
        tf.feature_column.indicator_column(
            tf.feature_column.categorical_column_with_vocabulary_list("color", ["r", "g", "b"])
        ),
    ]


def _tf_reference(tf1: Any) -> tuple[dict[str, np.ndarray], float]:
    """The DNNClassifier's graph written out in TF 1: input_layer, ReLU dense, logits, SUM softmax CE, SGD."""
    with tf1.Graph().as_default():
        features = {k: tf1.constant(v) for k, v in FEATURES.items()}
        net = tf1.feature_column.input_layer(features, _columns(tf1))
        variables = {name: tf1.Variable(value, name=name) for name, value in INIT.items()}
        hidden = tf1.nn.relu(
            tf1.matmul(net, variables["dnn/hiddenlayer_0/kernel"]) + variables["dnn/hiddenlayer_0/bias"]
        )
        logits = tf1.matmul(hidden, variables["dnn/logits/kernel"]) + variables["dnn/logits/bias"]
        loss = tf1.losses.sparse_softmax_cross_entropy(
            LABELS.reshape(-1, 1), logits, reduction=tf1.losses.Reduction.SUM
        )
        train = tf1.train.GradientDescentOptimizer(0.05).minimize(loss)
        with tf1.Session() as sess:
            sess.run([tf1.global_variables_initializer(), tf1.tables_initializer()])
            for _ in range(STEPS):
                sess.run(train)
            values = {name: sess.run(v) for name, v in variables.items()}
            return values, float(sess.run(loss))


@pytest.mark.tf_oracle
def test_dnn_classifier_trains_as_the_same_graph_in_tensorflow(tmp_path):
    tf1 = pytest.importorskip("tensorflow").compat.v1
    tf1.disable_eager_execution()
    expected, expected_loss = _tf_reference(tf1)
    (tmp_path / "init").mkdir()
    with dtf.Graph().as_default():  # the starting point, as a checkpoint to warm-start from
        for name, value in INIT.items():
            dtf.Variable(value, name=name)
        with dtf.Session() as sess:
            sess.run(dtf.global_variables_initializer())
            start = dtf.train.Saver().save(sess, str(tmp_path / "init" / "model"))
    est = dtf.estimator.DNNClassifier(
        [5],
        _columns(dtf),
        n_classes=3,
        model_dir=str(tmp_path / "dnn"),
        optimizer=dtf.train.GradientDescentOptimizer(0.05),
        warm_start_from=start,
    )
    input_fn = dtf.estimator.inputs.numpy_input_fn(FEATURES, LABELS, batch_size=12, num_epochs=None, shuffle=False)
    est.train(input_fn, steps=STEPS)
    for name, value in expected.items():
        np.testing.assert_allclose(est.get_variable_value(name), value, rtol=1e-5, atol=1e-6, err_msg=name)
    result = est.evaluate(input_fn, steps=1)
    np.testing.assert_allclose(result["loss"], expected_loss, rtol=1e-5)
    np.testing.assert_allclose(result["average_loss"], expected_loss / 12, rtol=1e-5)
    prediction = next(est.predict(dtf.estimator.inputs.numpy_input_fn(FEATURES, batch_size=12, shuffle=False)))
    assert sorted(prediction) == ["all_class_ids", "all_classes", "class_ids", "classes", "logits", "probabilities"]
    assert prediction["all_class_ids"].tolist() == list(range(len(prediction["probabilities"])))
    assert prediction["all_classes"].tolist() == [str(c).encode() for c in prediction["all_class_ids"]]
    assert prediction["classes"][0] == str(prediction["class_ids"][0]).encode()


def test_linear_regressor_learns_a_line(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(100, 2)).astype(np.float32)
    y = x @ np.array([1.5, -2.0], np.float32) + 0.5
    est = dtf.estimator.LinearRegressor(
        [dtf.feature_column.numeric_column("x", shape=[2])],
        model_dir=str(tmp_path),
        optimizer=dtf.train.GradientDescentOptimizer(0.005),
    )
    est.train(dtf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=20, num_epochs=None, shuffle=True), steps=200)
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/x/weights").ravel(), [1.5, -2.0], atol=0.05)
    np.testing.assert_allclose(est.get_variable_value("linear/linear_model/bias_weights"), [0.5], atol=0.05)
