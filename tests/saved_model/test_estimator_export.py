"""``Estimator.export_saved_model``: the trained model as a SavedModel that real TF serves with the predictions
``Estimator.predict`` gives, through raw and parsing serving input receivers."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

pytestmark = pytest.mark.tf_oracle

_X = np.random.default_rng(0).normal(size=(6, 3)).astype(np.float32)
_Y = (_X.sum(axis=1) > 0).astype(np.int64)


@pytest.fixture(scope="module")
def real():
    return pytest.importorskip("tensorflow").compat.v1


def _model_fn(features, labels, mode):
    logits = tf.layers.dense(features["x"], 2, name="logits")
    predictions = {"probabilities": tf.nn.softmax(logits), "class_ids": tf.argmax(logits, 1)}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss, tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train)


def _input_fn():
    return tf.data.Dataset.from_tensor_slices(({"x": _X}, _Y)).repeat().batch(6)


def _serve(real, export_dir, feed_key, value, key="serving_default"):
    with real.Graph().as_default(), real.Session() as sess:
        meta = real.saved_model.loader.load(sess, ["serve"], export_dir)
        signature = meta.signature_def[key]
        names = {k: v.name for k, v in signature.outputs.items()}
        return sess.run(names, {signature.inputs[feed_key].name: value})


def test_tf_serves_an_exported_estimator_as_it_predicts(real, tmp_path):
    estimator = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path / "model"))
    estimator.train(_input_fn, steps=5)
    predicted = list(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": _X}).batch(6)))
    receiver_fn = tf.estimator.export.build_raw_serving_input_receiver_fn({"x": tf.placeholder(tf.float32, [None, 3])})
    export_dir = estimator.export_saved_model(str(tmp_path / "export"), receiver_fn)
    assert isinstance(export_dir, bytes) and os.listdir(tmp_path / "export") == [os.path.basename(export_dir.decode())]
    served = _serve(real, export_dir.decode(), "x", _X)
    np.testing.assert_allclose(served["probabilities"], [p["probabilities"] for p in predicted], rtol=1e-6)
    np.testing.assert_array_equal(served["class_ids"], [p["class_ids"] for p in predicted])
    served_here = _serve(tf, export_dir.decode(), "x", _X)
    np.testing.assert_allclose(served_here["probabilities"], served["probabilities"], rtol=1e-6)


def test_a_parsing_receiver_serves_serialized_examples(real, tmp_path):
    """TF and this package serve the export from serialized ``tf.train.Example``s (its ``ParseExampleV2`` is TF's)."""
    estimator = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path / "model"))
    estimator.train(_input_fn, steps=3)
    predicted = list(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": _X}).batch(6)))
    spec = {"x": tf.FixedLenFeature([3], tf.float32)}
    export_dir = estimator.export_savedmodel(
        str(tmp_path / "export"), tf.estimator.export.build_parsing_serving_input_receiver_fn(spec)
    ).decode()
    examples = [
        tf.train.Example(
            features=tf.train.Features(feature={"x": tf.train.Feature(float_list=tf.train.FloatList(value=row))})
        ).SerializeToString()
        for row in _X
    ]
    served = _serve(tf, export_dir, "examples", examples)
    np.testing.assert_allclose(served["probabilities"], [p["probabilities"] for p in predicted], rtol=1e-6)
    served_by_tf = _serve(real, export_dir, "examples", examples)
    np.testing.assert_allclose(served_by_tf["probabilities"], served["probabilities"], rtol=1e-6)


def test_export_needs_a_checkpoint_and_a_receiver(tmp_path):
    estimator = tf.estimator.Estimator(_model_fn, model_dir=str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="Couldn't find trained model"):
        estimator.export_saved_model(str(tmp_path / "export"), lambda: None)
    with pytest.raises(ValueError, match="input_receiver_fn must be defined"):
        estimator.export_saved_model(str(tmp_path / "export"), None)


def _examples():
    return [
        tf.train.Example(
            features=tf.train.Features(feature={"x": tf.train.Feature(float_list=tf.train.FloatList(value=row))})
        ).SerializeToString()
        for row in _X
    ]


def _signatures(export_dir):
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], export_dir)
        return {k: (v.method_name, sorted(v.inputs), sorted(v.outputs)) for k, v in meta.signature_def.items()}


@pytest.mark.parametrize("kind", ["multi_class", "binary", "regressor"])
def test_canned_estimators_export_tf1s_head_signatures(real, tmp_path, kind):
    """A canned estimator's export has TF1's signatures: Classify (and, binary, Regress) or Regress as
    ``serving_default`` and under their own key, and every prediction under ``predict``; TF serves each from
    serialized Examples with the values ``predict`` gives."""
    columns = [tf.feature_column.numeric_column("x", shape=[3])]
    if kind == "regressor":
        estimator = tf.estimator.LinearRegressor(columns, model_dir=str(tmp_path / "model"))
        labels = _X.sum(axis=1, keepdims=True)
    else:
        n_classes = 3 if kind == "multi_class" else 2
        estimator = tf.estimator.LinearClassifier(columns, n_classes=n_classes, model_dir=str(tmp_path / "model"))
        labels = _Y + (_X[:, 0] > 1) if kind == "multi_class" else _Y
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices(({"x": _X}, labels)).repeat().batch(6), steps=5)
    predicted = list(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": _X}).batch(6)))
    receiver = tf.estimator.export.build_parsing_serving_input_receiver_fn(
        tf.feature_column.make_parse_example_spec(columns)
    )
    export_dir = estimator.export_saved_model(str(tmp_path / "export"), receiver).decode()
    signatures = _signatures(export_dir)
    classify = ("tensorflow/serving/classify", ["inputs"], ["classes", "scores"])
    regress = ("tensorflow/serving/regress", ["inputs"], ["outputs"])
    keys = sorted(predicted[0])
    expected = {
        "multi_class": {"serving_default": classify, "classification": classify},
        "binary": {"serving_default": classify, "classification": classify, "regression": regress},
        "regressor": {"serving_default": regress, "regression": regress},
    }[kind]
    assert signatures == {**expected, "predict": ("tensorflow/serving/predict", ["examples"], keys)}
    served = _serve(real, export_dir, "inputs", _examples())
    if kind == "regressor":
        np.testing.assert_allclose(served["outputs"], [p["predictions"] for p in predicted], rtol=1e-5)
    else:
        np.testing.assert_allclose(served["scores"], [p["probabilities"] for p in predicted], rtol=1e-5)
        assert served["classes"].tolist() == [[str(c).encode() for c in range(n_classes)]] * len(_X)
    if kind == "binary":
        served = _serve(real, export_dir, "inputs", _examples(), key="regression")
        np.testing.assert_allclose(served["outputs"], [p["logistic"] for p in predicted], rtol=1e-5)
    served = _serve(real, export_dir, "examples", _examples(), key="predict")
    assert sorted(served) == keys


def test_a_canned_classifier_with_a_raw_receiver_keeps_its_predict_signature(tmp_path):
    """Classify and Regress signatures need serialized Examples: from raw tensors TF keeps only ``predict``."""
    columns = [tf.feature_column.numeric_column("x", shape=[3])]
    estimator = tf.estimator.LinearClassifier(columns, model_dir=str(tmp_path / "model"))
    estimator.train(_input_fn, steps=2)
    receiver = tf.estimator.export.build_raw_serving_input_receiver_fn({"x": tf.placeholder(tf.float32, [None, 3])})
    export_dir = estimator.export_saved_model(str(tmp_path / "export"), receiver).decode()
    assert sorted(_signatures(export_dir)) == ["predict"]
