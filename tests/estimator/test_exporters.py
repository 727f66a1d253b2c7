"""``EvalSpec(exporters=...)``: what ``train_and_evaluate`` exports after its evaluations (latest, final and best
exports under ``<model_dir>/export/<name>``), served by real TF as the estimator predicts."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

_X = np.random.default_rng(0).normal(size=(64, 3)).astype(np.float32)
_Y = (_X[:, 0] - _X[:, 1] > 0).astype(np.int64)
_COLUMNS = [tf.feature_column.numeric_column("x", shape=[3])]


def _serving():
    return tf.estimator.export.build_parsing_serving_input_receiver_fn(
        tf.feature_column.make_parse_example_spec(_COLUMNS)
    )


def _estimator(model_dir, steps_per_checkpoint=10):
    config = tf.estimator.RunConfig(model_dir=model_dir, save_checkpoints_steps=steps_per_checkpoint, tf_random_seed=1)
    return tf.estimator.LinearClassifier(_COLUMNS, config=config, optimizer=tf.train.GradientDescentOptimizer(0.5))


def _train_and_evaluate(estimator, max_steps, exporters):
    train = tf.estimator.TrainSpec(
        tf.estimator.inputs.numpy_input_fn({"x": _X}, _Y, batch_size=16, num_epochs=None, shuffle=True),
        max_steps=max_steps,
    )
    evaluate = tf.estimator.EvalSpec(
        tf.estimator.inputs.numpy_input_fn({"x": _X}, _Y, batch_size=64, shuffle=False),
        steps=None,
        exporters=exporters,
        throttle_secs=0,
    )
    return tf.estimator.train_and_evaluate(estimator, train, evaluate)


def _exports(model_dir, name):
    base = os.path.join(model_dir, "export", name)
    return sorted(os.listdir(base)) if os.path.isdir(base) else []


def _examples():
    return [
        tf.train.Example(
            features=tf.train.Features(feature={"x": tf.train.Feature(float_list=tf.train.FloatList(value=row))})
        ).SerializeToString()
        for row in _X[:8]
    ]


@pytest.mark.slow
def test_latest_final_and_best_exports_after_evaluations(tmp_path):
    model_dir = str(tmp_path / "model")
    estimator = _estimator(model_dir)
    exporters = [
        tf.estimator.LatestExporter("latest", _serving(), exports_to_keep=2),
        tf.estimator.FinalExporter("final", _serving()),
        tf.estimator.BestExporter("best", _serving()),
    ]
    metrics, export_results = _train_and_evaluate(estimator, 30, exporters)
    assert metrics["global_step"] == 30
    # Evaluations after each checkpoint (steps 0, 10, 20, 30): latest keeps its newest two, final wrote once at step
    # 30, and best exported at least the first evaluation; what each returned after the last one is the result.
    latest, final, best = (_exports(model_dir, name) for name in ("latest", "final", "best"))
    assert len(latest) == 2 and len(final) == 1 and len(best) >= 1
    assert export_results[0].decode().endswith(latest[-1]) and export_results[1].decode().endswith(final[0])
    predicted = [
        p["probabilities"]
        for p in estimator.predict(lambda: tf.data.Dataset.from_tensor_slices({"x": _X[:8]}).batch(8))
    ]
    real = pytest.importorskip("tensorflow").compat.v1
    with real.Graph().as_default(), real.Session() as sess:
        meta = real.saved_model.loader.load(sess, ["serve"], os.path.join(model_dir, "export", "final", final[0]))
        signature = meta.signature_def["serving_default"]
        scores = sess.run(signature.outputs["scores"].name, {signature.inputs["inputs"].name: _examples()})
    np.testing.assert_allclose(scores, predicted, rtol=1e-5)


@pytest.mark.slow
def test_a_new_best_exporter_exports_only_what_beats_earlier_evaluations(tmp_path):
    """The first evaluation of a fresh model is exported (its own summary is not the best to beat); a later run's
    BestExporter reads the best from the earlier runs' evaluation events, so what does not beat it (here: every
    evaluation compares as worse) is not exported, and what does is."""
    model_dir = str(tmp_path / "model")
    _train_and_evaluate(_estimator(model_dir), 10, [tf.estimator.BestExporter("best", _serving())])
    first = len(_exports(model_dir, "best"))
    assert first >= 1

    never = tf.estimator.BestExporter(
        "best", _serving(), compare_fn=lambda best_eval_result, current_eval_result: False
    )
    _train_and_evaluate(_estimator(model_dir), 20, [never])
    assert len(_exports(model_dir, "best")) == first

    always = tf.estimator.BestExporter(
        "best", _serving(), compare_fn=lambda best_eval_result, current_eval_result: True
    )
    _train_and_evaluate(_estimator(model_dir), 30, [always])
    assert len(_exports(model_dir, "best")) > first


def test_eval_spec_checks_its_exporters():
    exporter = tf.estimator.LatestExporter("same", _serving())
    spec = tf.estimator.EvalSpec(lambda: None, exporters=exporter)
    assert spec.exporters == (exporter,)
    with pytest.raises(ValueError, match="`exporters` must have unique names"):
        tf.estimator.EvalSpec(lambda: None, exporters=[exporter, tf.estimator.FinalExporter("same", _serving())])
    with pytest.raises(TypeError, match="`exporters` must be an Exporter, an iterable of Exporter, or `None`"):
        tf.estimator.EvalSpec(lambda: None, exporters=[exporter, "final"])
    with pytest.raises(ValueError, match="An Exporter cannot have a name that is `None` or empty"):
        tf.estimator.EvalSpec(lambda: None, exporters=[tf.estimator.FinalExporter("", _serving())])
    with pytest.raises(ValueError, match="has following not expected args"):
        tf.estimator.BestExporter(compare_fn=lambda best_eval_result, current_eval_result, extra: True)
    with pytest.raises(ValueError, match="`compare_fn` must not be None"):
        tf.estimator.BestExporter(compare_fn=None)


@pytest.mark.slow
def test_an_experiment_exports_by_its_export_strategies(tmp_path):
    model_dir = str(tmp_path / "model")
    experiment = tf.contrib.learn.Experiment(
        _estimator(model_dir),
        train_input_fn=tf.estimator.inputs.numpy_input_fn({"x": _X}, _Y, batch_size=16, num_epochs=None, shuffle=True),
        eval_input_fn=tf.estimator.inputs.numpy_input_fn({"x": _X}, _Y, batch_size=64, shuffle=False),
        train_steps=20,
        eval_steps=None,
        export_strategies=tf.contrib.learn.make_export_strategy(_serving(), exports_to_keep=1),
    )
    result, exports = experiment.train_and_evaluate()
    assert result["global_step"] == 20
    (export_dir,) = exports
    assert os.path.dirname(export_dir.decode()) == os.path.join(model_dir, "export", "Servo")
    real = pytest.importorskip("tensorflow").compat.v1
    with real.Graph().as_default(), real.Session() as sess:
        meta = real.saved_model.loader.load(sess, ["serve"], export_dir.decode())
        assert sorted(meta.signature_def) == ["classification", "predict", "regression", "serving_default"]


def test_export_strategy_passes_what_its_function_takes():
    calls = []
    plain = tf.contrib.learn.ExportStrategy("plain", lambda estimator, export_path: calls.append(export_path))
    plain.export(None, "/exports/plain", checkpoint_path="/model/ckpt", eval_result={})  # (as in TF: not passed)
    with pytest.raises(ValueError, match="accepting eval_result must also accept checkpoint_path"):
        tf.contrib.learn.ExportStrategy("odd", lambda estimator, export_path, eval_result: None).export(None, "/x")
    full = tf.contrib.learn.ExportStrategy(
        "full",
        lambda estimator, export_path, checkpoint_path, eval_result, strip_default_attrs: calls.append(
            (checkpoint_path, eval_result, strip_default_attrs)
        ),
        strip_default_attrs=True,
    )
    full.export(None, "/exports/full", "/model/ckpt", {"loss": 1.0})
    assert calls == ["/exports/plain", ("/model/ckpt", {"loss": 1.0}, True)]
    with pytest.raises(ValueError, match="must be an ExportStrategy"):
        tf.contrib.learn.Experiment(_estimator(None), lambda: None, lambda: None, export_strategies=["Servo"])
