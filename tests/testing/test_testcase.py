"""tf.test: a TF1-style test file run as a program with ``tf.test.main()`` under real TF and here; every test's
outcome (pass, or the class of its failure) must be the same. Half of its tests fail on purpose, to check that the
assertions fail where TF's do. Then the gradient checker's Jacobians against TF's, and the module's helpers.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf

_PROGRAM = textwrap.dedent(
    """
    import collections
    import importlib
    import os

    import numpy as np

    tf = importlib.import_module(os.environ["TF_MODULE"])
    tf.disable_eager_execution()
    Point = collections.namedtuple("Point", "x y")


    class UserCodeTest(tf.test.TestCase):
        def test_evaluate_in_cached_session(self):
            with self.cached_session() as sess:
                x = tf.constant([1.0, 2.0])
                self.assertIs(tf.get_default_session(), sess)
                self.assertAllClose(self.evaluate(x * 2), [2.0, 4.0])
                self.assertAllClose(self.evaluate({"a": x, "b": (x, x + 1)}), {"a": [1, 2], "b": ([1, 2], [2, 3])})
            with self.cached_session() as again:
                self.assertIs(again, sess)

        def test_session_is_new_and_test_session_is_cached(self):
            with self.session() as first, self.session() as second:
                self.assertIsNot(first, second)
            with self.test_session() as cached, self.cached_session() as also:
                self.assertIs(cached, also)

        def test_evaluate_without_session_and_eval(self):
            v = tf.Variable(3.0)
            self.evaluate(v.initializer)
            self.assertEqual(self.evaluate(v), 3.0)
            with self.cached_session():
                self.assertAllEqual(tf.constant([1, 2]).eval(), [1, 2])

        def test_fresh_seeded_graph(self):
            self.assertEqual(tf.get_default_graph().get_operations(), [])
            self.assertEqual(tf.get_default_graph().seed, 87654321)

        def test_tensors_compared_directly(self):
            with self.cached_session():
                self.assertAllClose(tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0 + 1e-7]))
                self.assertAllEqual(tf.constant([b"a", b"b"]), ["a", "b"])
                self.assertShapeEqual(np.zeros([2, 3]), tf.placeholder(tf.float32, [2, 3]))

        def test_close_structures(self):
            self.assertAllClose(Point(1.0, [2.0, 3.0]), Point(1.0 + 1e-7, [2.0, 3.0]))
            self.assertAllClose([np.float32(1.0), (2.0, {"k": 3.0})], [1.0, (2.0, {"k": 3.0})])
            self.assertAllCloseAccordingToType(np.float16([1.0]), np.float16([1.0005]))
            self.assertArrayNear([1.0, 2.0], [1.05, 2.0], 0.1)
            self.assertNear(1.0, 1.05, 0.1)
            self.assertAllEqual([[np.nan, 1.0]], np.array([[np.nan, 1.0]]))
            self.assertNotAllClose([1.0], [2.0])
            self.assertAllGreater([2, 3], 1)
            self.assertAllInRange([0.5, 1.0], 0.0, 1.0)

        def test_op_error_matches(self):
            with self.cached_session():
                x = tf.placeholder(tf.float32)
                with self.assertRaisesOpError("must feed a value|fed"):
                    self.evaluate(x)
                placeholder_failed = lambda e: e.op.type == "Placeholder"  # noqa: E731
                with self.assertRaisesWithPredicateMatch(tf.errors.InvalidArgumentError, placeholder_failed):
                    self.evaluate(x)

        def test_temp_dir(self):
            self.assertEqual(self.get_temp_dir(), self.get_temp_dir())
            self.assertTrue(os.path.isdir(self.get_temp_dir()))
            self.assertTrue(self.get_temp_dir().startswith(tf.test.get_temp_dir()))

        def test_gradient_check(self):
            with self.cached_session():
                x = tf.constant([[0.3, -0.2], [0.5, 1.0]], dtype=tf.float64)
                y = tf.reduce_sum(tf.tanh(tf.matmul(x, x)), axis=1)
                self.assertLess(tf.test.compute_gradient_error(x, [2, 2], y, [2]), 1e-6)

        def test_fails_not_close(self):
            self.assertAllClose([1.0, 2.0], [1.0, 2.1])

        def test_fails_shape(self):
            self.assertAllEqual([1, 2], [[1, 2]])

        def test_fails_structure(self):
            self.assertAllClose({"a": 1.0}, [1.0])

        def test_fails_length(self):
            self.assertAllClose([1.0, [2.0]], [1.0, [2.0], 3.0])

        def test_fails_not_equal(self):
            self.assertAllEqual(np.array([1, 2]), np.array([1, 3]))

        def test_fails_near(self):
            self.assertNear(1.0, 1.2, 0.1)

        def test_fails_array_near(self):
            self.assertArrayNear([1.0, 2.0], [1.0], 0.1)

        def test_fails_float32_tolerance(self):
            self.assertAllCloseAccordingToType(np.float32([1.0]), np.float32([1.001]))

        def test_fails_op_error_pattern(self):
            with self.cached_session():
                with self.assertRaisesOpError("no such words"):
                    self.evaluate(tf.placeholder(tf.float32))

        def test_fails_op_error_not_raised(self):
            with self.assertRaisesOpError("anything"):
                pass

        def test_fails_shape_equal(self):
            self.assertShapeEqual(np.zeros([2, 3]), tf.placeholder(tf.float32, [3, 2]))

        def test_fails_inconsistent_cached_session(self):
            with self.cached_session():
                pass
            with self.cached_session(graph=tf.Graph()):
                pass


    if __name__ == "__main__":
        tf.test.main()
    """
)


def _outcomes(module: str, tmp_path) -> dict[str, str]:
    """Runs the program under ``module`` and returns each test's outcome: ``ok``, ``FAIL`` or ``ERROR``."""
    script = tmp_path / f"user_code_test_{module.split('.')[0]}.py"
    script.write_text(_PROGRAM)
    env = dict(os.environ, TF_MODULE=module, TEST_TMPDIR=str(tmp_path), TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    names = re.findall(r"^    def (test_\w+)\(", _PROGRAM, re.M)
    # test_session, TestCase's session helper, counts as a (skipped) test
    assert f"Ran {len(names) + 1} tests" in result.stderr, result.stderr[-3000:]
    outcomes = dict.fromkeys(names, "ok")
    for kind, name in re.findall(r"^(FAIL|ERROR): (test_\w+) ", result.stderr, re.M):
        outcomes[name] = kind  # FAIL: an assertion failed; ERROR: another exception
    assert result.returncode == 1, result.stderr[-3000:]  # the deliberate failures
    return outcomes


@pytest.mark.slow
@pytest.mark.tf_oracle
def test_a_tf1_test_file_has_the_same_outcomes_under_tf(tmp_path):
    pytest.importorskip("tensorflow")
    ours = _outcomes("dtf_notebook.compat.v1", tmp_path)
    theirs = _outcomes("tensorflow.compat.v1", tmp_path)
    assert ours == theirs
    assert json.dumps(sorted(k for k, v in ours.items() if v == "ok")) == json.dumps(
        sorted(k for k in ours if not k.startswith("test_fails"))
    )


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", ["matmul", "list", "gather", "init_targets"])
def test_compute_gradient_matches_tf(case):
    tf1 = pytest.importorskip("tensorflow").compat.v1
    tf1.disable_eager_execution()
    x0 = np.array([[0.3, -0.2, 0.1], [0.5, 1.0, -0.7]])

    def jacobians(m):
        with m.Graph().as_default(), m.Session():
            if case == "matmul":
                x = m.constant(x0)
                return m.test.compute_gradient(x, [2, 3], m.matmul(x, m.transpose(x)), [2, 2], x_init_value=x0)
            if case == "list":
                a, b = m.constant(x0), m.constant(x0 * 2)
                y = m.reduce_sum(a * m.sin(b), axis=0)
                return m.test.compute_gradient([a, b], [[2, 3], [2, 3]], y, [3], x_init_value=[x0, x0 * 2])
            if case == "gather":  # an IndexedSlices gradient
                params = m.constant(x0)
                y = m.gather(params, [1, 1, 0])
                return m.test.compute_gradient(params, [2, 3], y, [3, 3], x_init_value=x0)
            v = m.Variable(x0 + 1.0, name="v")
            x = m.constant(x0)
            y = m.square(x) * v
            return m.test.compute_gradient(x, [2, 3], y, [2, 3], x_init_value=x0, init_targets=[v.initializer])

    ours, theirs = jacobians(tf), jacobians(tf1)
    ours, theirs = (r if isinstance(r, list) else [r] for r in (ours, theirs))
    for (t_ours, n_ours), (t_tf, n_tf) in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(t_ours, t_tf, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(n_ours, n_tf, rtol=1e-6, atol=1e-8)


def test_compute_gradient_needs_a_default_session_and_floats():
    x = tf.constant([1.0])
    with pytest.raises(ValueError, match="default session"):
        tf.test.compute_gradient(x, [1], x * 2, [1])
    with tf.Session():
        with pytest.raises(TypeError, match="floating-point x"):
            tf.test.compute_gradient(tf.constant([1]), [1], tf.constant([1.0]), [1])
        with pytest.raises(ValueError, match="init_data shape"):
            tf.test.compute_gradient(x, [1], x * 2, [1], x_init_value=np.zeros([2]))


def test_gpu_queries_agree_with_the_local_devices():
    torch = pytest.importorskip("torch")
    assert tf.test.is_gpu_available(cuda_only=True) == (torch.cuda.device_count() > 0)
    assert tf.test.gpu_device_name() == ("/device:GPU:0" if tf.test.is_gpu_available() else "")
    assert tf.test.is_built_with_cuda() == (torch.version.cuda is not None)
