"""``tf.metrics`` against real TF1: values and update results after several update batches, local/metric
variable names and collections, weights; and metrics updated from two workers of a local cluster."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

BATCHES = 3


@pytest.fixture(scope="module")
def tf1():
    real = pytest.importorskip("tensorflow")
    real.compat.v1.disable_eager_execution()
    real.compat.v1.disable_control_flow_v2()
    return real.compat.v1


def _batches(seed=0, n=12, classes=4):
    r = np.random.RandomState(seed)
    out = []
    for _ in range(BATCHES):
        scores = r.rand(n, classes).astype(np.float32)
        out.append(
            {
                "prob": r.rand(n).astype(np.float32),
                "binary": (r.rand(n) > 0.5).astype(np.int64),
                "cls": r.randint(0, classes, n).astype(np.int64),
                "pred_cls": r.randint(0, classes, n).astype(np.int64),
                "real": r.randn(n).astype(np.float32),
                "real2": r.randn(n).astype(np.float32),
                "norm": r.uniform(-0.5, 2.0, n).round(1).astype(np.float32),
                "w": (r.rand(n) * (r.rand(n) > 0.2)).astype(np.float32),
                "scores": scores,
                "multi": r.randint(0, classes + 1, (n, 2)).astype(np.int64),
                "padded": np.concatenate([r.randint(0, classes, (n, 2)), np.full((n, 1), -1)], 1).astype(np.int64),
                "top2": np.argsort(-scores, 1)[:, :2].astype(np.int64),
                "unit_a": (lambda v: v / np.linalg.norm(v, axis=1, keepdims=True))(r.randn(n, 3)).astype(np.float32),
                "unit_b": (lambda v: v / np.linalg.norm(v, axis=1, keepdims=True))(r.randn(n, 3)).astype(np.float32),
            }
        )
    return out


def _metric_cases():
    def c(fn, *keys, weighted=False, **kw):
        return fn, keys, weighted, kw

    return {
        "accuracy": c("accuracy", "cls", "pred_cls"),
        "accuracy_w": c("accuracy", "cls", "pred_cls", weighted=True),
        "mean": c("mean", "real"),
        "mean_w": c("mean", "real", weighted=True),
        "auc_roc": c("auc", "binary", "prob"),
        "auc_roc_w": c("auc", "binary", "prob", weighted=True, num_thresholds=50),
        "auc_pr": c("auc", "binary", "prob", curve="PR"),
        "auc_pr_careful": c("auc", "binary", "prob", curve="PR", summation_method="careful_interpolation"),
        "auc_minoring": c("auc", "binary", "prob", summation_method="minoring", thresholds=[0.3, 0.5, 0.7]),
        "precision": c("precision", "binary", "pred_cls"),
        "recall_w": c("recall", "binary", "pred_cls", weighted=True),
        "tp": c("true_positives", "binary", "pred_cls"),
        "fp_w": c("false_positives", "binary", "pred_cls", weighted=True),
        "fn": c("false_negatives", "binary", "pred_cls"),
        "tn": c("true_negatives", "binary", "pred_cls"),
        "tp_at_t": c("true_positives_at_thresholds", "binary", "prob", thresholds=[0.2, 0.5, 0.8]),
        "fp_at_t_w": c("false_positives_at_thresholds", "binary", "prob", weighted=True, thresholds=[0.5]),
        "fn_at_t": c("false_negatives_at_thresholds", "binary", "prob", thresholds=[0.1, 0.9]),
        "tn_at_t": c("true_negatives_at_thresholds", "binary", "prob", thresholds=[0.4]),
        "precision_at_t": c("precision_at_thresholds", "binary", "prob", thresholds=[0.3, 0.6]),
        "recall_at_t": c("recall_at_thresholds", "binary", "prob", thresholds=[0.3, 0.6]),
        "mae": c("mean_absolute_error", "real", "real2"),
        "mse_w": c("mean_squared_error", "real", "real2", weighted=True),
        "rmse": c("root_mean_squared_error", "real", "real2"),
        "relative": c("mean_relative_error", "real", "real2", normalizer_key="norm"),
        "cosine": c("mean_cosine_distance", "unit_a", "unit_b", dim=1),
        "below": c("percentage_below", "real", threshold=0.3),
        "mean_iou": c("mean_iou", "cls", "pred_cls", num_classes=4),
        "mean_iou_w": c("mean_iou", "cls", "pred_cls", weighted=True, num_classes=4),
        "per_class": c("mean_per_class_accuracy", "cls", "pred_cls", num_classes=4),
        "per_class_w": c("mean_per_class_accuracy", "cls", "pred_cls", weighted=True, num_classes=4),
        "sens_at_spec": c("sensitivity_at_specificity", "binary", "prob", specificity=0.6),
        "spec_at_sens": c("specificity_at_sensitivity", "binary", "prob", sensitivity=0.7, num_thresholds=30),
        "precision_at_2": c("precision_at_k", "cls", "scores", k=2),
        "precision_at_2_multi": c("precision_at_k", "multi", "scores", k=2),
        "precision_at_1_class": c("precision_at_k", "multi", "scores", k=1, class_id=2),
        "recall_at_2": c("recall_at_k", "multi", "scores", k=2),
        "recall_at_3_w": c("recall_at_k", "cls", "scores", weighted=True, k=3),
        "recall_at_2_class": c("recall_at_k", "multi", "scores", k=2, class_id=1),
        "sparse_precision_at_2": c("sparse_precision_at_k", "multi", "scores", k=2),
        "precision_at_top_k": c("precision_at_top_k", "multi", "top2"),
        "recall_at_top_k_class": c("recall_at_top_k", "multi", "top2", class_id=1),
        "mean_tensor": c("mean_tensor", "scores"),
        "mean_tensor_w": c("mean_tensor", "real", weighted=True),
        "average_precision_at_1": c("average_precision_at_k", "multi", "scores", k=1),
        "average_precision_at_3": c("average_precision_at_k", "padded", "scores", k=3),
        "average_precision_at_2_w": c("average_precision_at_k", "cls", "scores", weighted=True, k=2),
        "sparse_average_precision_at_4": c("sparse_average_precision_at_k", "padded", "scores", k=4),
    }


CASES = _metric_cases()


def _run_metric(m, case, batches):
    fn, keys, weighted, kw = CASES[case]
    kw = dict(kw)
    normalizer_key = kw.pop("normalizer_key", None)
    with m.Graph().as_default():
        first = batches[0]
        phs = {key: m.placeholder(m.as_dtype(first[key].dtype), first[key].shape) for key in (*keys, "w", "norm")}
        args = [phs[key] for key in keys]
        if normalizer_key:
            kw["normalizer"] = phs[normalizer_key]
        if weighted:
            kw["weights"] = phs["w"]
        value, update = getattr(m.metrics, fn)(*args, **kw)
        names = sorted(v.name for v in m.local_variables())
        metric_vars = sorted(v.name for v in m.get_collection(m.GraphKeys.METRIC_VARIABLES))
        updates = []
        with m.Session() as sess:
            sess.run(m.local_variables_initializer())
            for batch in batches:
                updates.append(sess.run(update, {phs[k]: batch[k] for k in phs}))
            final = sess.run(value)
        return names, metric_vars, updates, final, m.trainable_variables()


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", sorted(CASES))
def test_metric_matches_tensorflow(tf1, case):
    batches = _batches()
    expected = _run_metric(tf1, case, batches)
    got = _run_metric(tf, case, batches)
    if "average_precision" in case:  # TF's accumulator of the rows' maximum is "max_1" after a check op's "Max"
        assert [n.replace("max_1", "max") for n in expected[0]] == got[0] == got[1]
    else:
        assert got[0] == expected[0]
        assert got[1] == expected[1]
    for g, e in zip(got[2], expected[2]):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[3], expected[3], rtol=1e-5, atol=1e-6)
    assert got[4] == []


@pytest.mark.tf_oracle
def test_collections_and_names(tf1):
    results = []
    for m in (tf1, tf):
        with m.Graph().as_default():
            v1, u1 = m.metrics.accuracy([1, 2], [1, 1], metrics_collections=["vals"], updates_collections=["ups"])
            v2, u2 = m.metrics.mean([1.0], name="my_mean")
            v3, u3 = m.metrics.auc([True, False], m.constant([0.7, 0.2]))
            results.append(
                (
                    [t.name for t in m.get_collection("vals")],
                    [t.name for t in m.get_collection("ups")],
                    [t.name for t in (v1, u1, v2, u2, v3, u3)],
                    [v.name for v in m.local_variables()],
                )
            )
    assert results[1] == results[0]


def test_metric_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="specificity"):
            tf.metrics.sensitivity_at_specificity([1], [0.5], specificity=1.5)
        with pytest.raises(ValueError, match="Curve must be either ROC or PR"):
            tf.metrics.auc([1], [0.5], curve="XY")
        prob = tf.placeholder(tf.float32, [None])
        _, update = tf.metrics.auc(tf.ones_like(prob, dtype=tf.int32), prob)  # the cast to bool carries the check
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"predictions must be in \[0, 1\]"):
                sess.run(update, {prob: [1.5]})


@pytest.mark.slow
@pytest.mark.cluster
def test_metrics_updated_from_two_workers_match_one_process():
    from tests.distributed.cluster_util import LocalCluster

    batches = _batches(seed=7)

    def build(device=None):
        labels = tf.placeholder(tf.int64, [None])
        prob = tf.placeholder(tf.float32, [None])
        pred = tf.placeholder(tf.int64, [None])
        weights = tf.placeholder(tf.float32, [None])
        with tf.device(device):
            metrics = {
                "accuracy": tf.metrics.accuracy(labels, pred, weights=weights),
                "auc": tf.metrics.auc(tf.cast(labels % 2, tf.bool), prob),
                "mean_iou": tf.metrics.mean_iou(labels, pred, num_classes=4),
                "precision": tf.metrics.precision(labels % 2, pred % 2),
            }
        return (labels, prob, pred, weights), metrics

    def feed(phs, batch):
        return dict(zip(phs, (batch["cls"], batch["prob"], batch["pred_cls"], batch["w"])))

    with tf.Graph().as_default():
        phs, metrics = build()
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            for batch in batches:
                sess.run([u for _, u in metrics.values()], feed(phs, batch))
            expected = sess.run({k: v for k, (v, _) in metrics.items()})

    with LocalCluster(jobs={"ps": 1, "worker": 2}) as cluster, tf.Graph().as_default():
        # The metric variables live on the ps task, so both workers' updates add to the same totals.
        phs, metrics = build("/job:ps/task:0")
        updates = [u for _, u in metrics.values()]
        with tf.Session(cluster.target("worker", 0)) as first, tf.Session(cluster.target("worker", 1)) as second:
            first.run(tf.local_variables_initializer())
            for i, batch in enumerate(batches):
                (first if i % 2 == 0 else second).run(updates, feed(phs, batch))
            got = second.run({k: v for k, (v, _) in metrics.items()})
    for key in expected:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-6, err_msg=key)
