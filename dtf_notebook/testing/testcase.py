"""``tf.test.TestCase``: TF1's base class for tests of graph code -- sessions, ``evaluate`` and array assertions.

Each test starts in a fresh default graph whose seed is TF's ``DEFAULT_GRAPH_SEED`` (numpy's and ``random``'s
seeds too); ``cached_session()`` (and the older ``test_session()``) gives one session per test, closed in
``tearDown``; ``session()`` a new one each time. Both make the session and its graph the defaults, and pin ops to
the CPU unless ``use_gpu`` (TF 2's default, True) or ``force_gpu``. ``evaluate`` runs tensors (any nesting) in the
default session. The assertions accept numpy values, Python values and tensors, as TF's do;
``assertProtoEquals`` compares protocol buffers (see :mod:`.proto_assertions`).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> class SquareTest(tf.test.TestCase):
    ...     def test_square(self):
    ...         with self.cached_session():
    ...             self.assertAllClose(self.evaluate(tf.square([2.0, 3.0])), [4.0, 9.0])
    ...             with self.assertRaisesOpError("Incompatible shapes|must match"):
    ...                 self.evaluate(tf.add(tf.placeholder_with_default([1.0, 2.0, 3.0], [None]), [1.0, 2.0]))
    >>> import unittest
    >>> unittest.TextTestRunner(stream=__import__("io").StringIO()).run(SquareTest("test_square")).wasSuccessful()
    True
"""

from __future__ import annotations

import contextlib
import math
import random
import re
import tempfile
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
from absl.testing import absltest

from dtf_notebook import errors
from dtf_notebook.framework.default_session import get_default_session
from dtf_notebook.framework.graph import Graph, reset_default_graph
from dtf_notebook.framework.random_seed import DEFAULT_GRAPH_SEED, set_random_seed
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.runtime.session import Session
from dtf_notebook.testing.environment import get_temp_dir, gpu_device_name
from dtf_notebook.testing.proto_assertions import ProtoAssertions

__all__ = ["TestCase"]


class TestCase(ProtoAssertions, absltest.TestCase):
    """Base class for TF1-style tests: a fresh seeded graph per test, sessions, ``evaluate`` and array asserts."""

    def __init__(self, methodName: str = "runTest") -> None:  # noqa: N803 - unittest's name
        super().__init__(methodName)
        self._cached_session: Session | None = None
        self._cached_key: tuple[Any, Any, bool] | None = None
        self._tempdir: str | None = None

    def setUp(self) -> None:
        super().setUp()
        self._clear_cached_session()
        random.seed(DEFAULT_GRAPH_SEED)
        np.random.seed(DEFAULT_GRAPH_SEED)
        reset_default_graph()
        set_random_seed(DEFAULT_GRAPH_SEED)
        if self.id().endswith(".test_session"):  # the session helper below, which unittest takes for a test
            self.skipTest("Not a test.")

    def tearDown(self) -> None:
        self._clear_cached_session()
        super().tearDown()

    def _clear_cached_session(self) -> None:
        if self._cached_session is not None:
            self._cached_session.close()
            self._cached_session = None

    def get_temp_dir(self) -> str:
        """A directory of this test's own (the same for every call in a test), under ``tf.test.get_temp_dir()``."""
        if self._tempdir is None:
            self._tempdir = tempfile.mkdtemp(dir=get_temp_dir())
        return self._tempdir

    # ---- sessions ------------------------------------------------------------------------------
    @contextlib.contextmanager
    def _as_default(self, sess: Session, use_gpu: bool, force_gpu: bool) -> Iterator[Session]:
        with sess.graph.as_default(), sess.as_default():
            if force_gpu:
                with sess.graph.device(gpu_device_name() or "/device:GPU:0"):
                    yield sess
            elif use_gpu:
                yield sess
            else:
                with sess.graph.device("/device:CPU:0"):
                    yield sess

    @contextlib.contextmanager
    def session(
        self, graph: Graph | None = None, config: Any = None, use_gpu: bool = True, force_gpu: bool = False
    ) -> Iterator[Session]:
        """A new session on ``graph`` (default graph), the default session inside the block, closed after it."""
        with Session(graph=graph, config=config) as sess, self._as_default(sess, use_gpu, force_gpu):
            yield sess

    @contextlib.contextmanager
    def cached_session(
        self, graph: Graph | None = None, config: Any = None, use_gpu: bool = True, force_gpu: bool = False
    ) -> Iterator[Session]:
        """The test's one session (made on first use, closed in ``tearDown``), the default inside the block.

        Raises:
            ValueError: a later call names another graph, config or ``force_gpu`` than the first.
        """
        with self._as_default(self._cached(graph, config, force_gpu, strict=True), use_gpu, force_gpu) as sess:
            yield sess

    @contextlib.contextmanager
    def test_session(
        self, graph: Graph | None = None, config: Any = None, use_gpu: bool = True, force_gpu: bool = False
    ) -> Iterator[Session]:
        """TF1's name: the cached session, or with ``graph`` a new one (``session``)."""
        if graph is not None:
            with self.session(graph, config, use_gpu, force_gpu) as sess:
                yield sess
            return
        with self._as_default(self._cached(graph, config, force_gpu, strict=False), use_gpu, force_gpu) as sess:
            yield sess

    def _cached(self, graph: Graph | None, config: Any, force_gpu: bool, strict: bool) -> Session:
        key = (graph, config, force_gpu)
        if self._cached_session is None:
            self._cached_session = Session(graph=graph, config=config)
            self._cached_key = key
        elif strict and self._cached_key is not None:
            for name, before, now in zip(("graph", "config", "force_gpu value"), self._cached_key, key, strict=True):
                if before is not now:
                    raise ValueError(
                        f"The {name} used to get the cached session is different than the one that was used to "
                        "create the session. Maybe create a new session with self.session()"
                    )
        return self._cached_session

    def evaluate(self, tensors: Any) -> Any:
        """The values of ``tensors`` (a tensor or any nesting of them) in the default session, else the cached one."""
        sess = get_default_session()
        if sess is not None:
            return sess.run(tensors)
        with self.test_session() as cached:
            return cached.run(tensors)

    # ---- assertions ----------------------------------------------------------------------------
    def _array(self, value: Any) -> np.ndarray:
        if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
            value = self.evaluate(value)
        if isinstance(value, np.ndarray):
            return value
        try:
            return np.array(value)
        except ValueError:
            return np.array(value, dtype=object)

    def _arrays(self, a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
        if isinstance(a, Tensor) and isinstance(b, Tensor):
            a, b = self.evaluate((a, b))
        return self._array(a), self._array(b)

    def _assert_array_close(self, a: Any, b: Any, rtol: float, atol: float, msg: str | None) -> None:
        a, b = self._arrays(a, b)
        self.assertEqual(a.shape, b.shape, f"Shape mismatch: expected {a.shape}, got {b.shape}.")
        a_dtype = a.dtype
        if a.dtype.name == "bfloat16":
            a = a.astype(np.float32)
        if b.dtype.name == "bfloat16":
            b = b.astype(np.float32)
        if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
            return
        lines = [msg or ""]
        where = np.where(np.logical_or(np.abs(a - b) > atol + rtol * np.abs(b), np.isnan(a) != np.isnan(b)))
        x, y = (a[where], b[where]) if a.ndim else (a, b)
        if a.ndim:
            lines.append(f"not close where = {where}")
        lines += [f"not close lhs = {x}", f"not close rhs = {y}", f"not close dif = {np.abs(x - y)}"]
        lines += [f"not close tol = {atol + rtol * np.abs(y)}", f"dtype = {a_dtype}, shape = {a.shape}"]
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg="\n".join(lines), equal_nan=True)

    def _assert_close_nested(self, a: Any, b: Any, rtol: float, atol: float, path: list[str], msg: str) -> None:
        where = "".join(f"[{p}]" for p in path)
        a = a._asdict() if hasattr(a, "_asdict") else a
        b = b._asdict() if hasattr(b, "_asdict") else b
        if isinstance(a, Mapping) != isinstance(b, Mapping):
            raise ValueError(f"Can't compare dict to non-dict, a{where} vs b{where}. {msg}")
        if isinstance(a, Mapping):
            self.assertCountEqual(
                a.keys(),
                b.keys(),
                f"mismatched keys: a{where} has keys {a.keys()}, b{where} has keys {b.keys()}. {msg}",
            )
            for key in a:
                self._assert_close_nested(a[key], b[key], rtol, atol, [*path, str(key)], msg)
            return
        mismatch = f"Mismatched value: a{where} is different from b{where}. {msg}"
        if isinstance(a, list | tuple):
            try:
                self._assert_array_close(a, b, rtol, atol, mismatch)
                return
            except (ValueError, TypeError):
                if len(a) != len(b):
                    raise ValueError(
                        f"Mismatched length: a{where} has {len(a)} items, but b{where} has {len(b)} items. {msg}"
                    ) from None
            for index, (x, y) in enumerate(zip(a, b, strict=True)):
                self._assert_close_nested(x, y, rtol, atol, [*path, str(index)], msg)
            return
        self._assert_array_close(a, b, rtol, atol, mismatch)

    def assertAllClose(self, a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6, msg: str | None = None) -> None:  # noqa: N802
        """``a`` and ``b`` (arrays, tensors, or dicts/lists/tuples/namedtuples of them) agree within tolerances."""
        self._assert_close_nested(a, b, rtol, atol, [], msg or "")

    def assertAllCloseAccordingToType(  # noqa: N802
        self,
        a: Any,
        b: Any,
        rtol: float = 1e-6,
        atol: float = 1e-6,
        float_rtol: float = 1e-6,
        float_atol: float = 1e-6,
        half_rtol: float = 1e-3,
        half_atol: float = 1e-3,
        bfloat16_rtol: float = 1e-2,
        bfloat16_atol: float = 1e-2,
        msg: str | None = None,
    ) -> None:
        """``assertAllClose`` with tolerances widened for float32 / complex64, float16 and bfloat16 values."""
        a, b = self._arrays(a, b)
        kinds = {a.dtype.name, b.dtype.name}
        if kinds & {"float32", "complex64"}:
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if "float16" in kinds:
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        if "bfloat16" in kinds:
            rtol, atol = max(rtol, bfloat16_rtol), max(atol, bfloat16_atol)
        self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a: Any, b: Any, rtol: float = 1e-6, atol: float = 1e-6, msg: str | None = None) -> None:  # noqa: N802
        """``a`` and ``b`` differ somewhere beyond the tolerances."""
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)
        except AssertionError:
            return
        raise AssertionError(f"The two values are close at all elements. {msg or ''}")

    def assertAllEqual(self, a: Any, b: Any, msg: str | None = None) -> None:  # noqa: N802
        """``a`` and ``b`` have the same shape and values (NaNs equal NaNs; str and bytes compare as bytes)."""
        msg = msg or ""
        a, b = self._arrays(a, b)
        self.assertEqual(
            a.shape, b.shape, f"Shape mismatch: expected {a.shape}, got {b.shape}. Contents: {b!r}. \n{msg}."
        )
        same = a == b
        if a.dtype.kind == "f":
            same = np.logical_or(same, np.logical_and(np.isnan(a), np.isnan(b)))
        if np.all(same):
            return
        lines = [msg]
        if a.ndim:
            lines.append(f"not equal where = {np.where(~np.asarray(same))}")
        if a.dtype.kind != b.dtype.kind and {a.dtype.kind, b.dtype.kind} <= {"U", "S", "O"}:
            a, b = (
                np.array([x.encode() if isinstance(x, str) else x for x in v.flat]).reshape(v.shape) for v in (a, b)
            )
        np.testing.assert_array_equal(a, b, err_msg="\n".join(lines))

    def assertNotAllEqual(self, a: Any, b: Any, msg: str | None = None) -> None:  # noqa: N802
        """``a`` and ``b`` differ somewhere."""
        try:
            self.assertAllEqual(a, b)
        except AssertionError:
            return
        raise AssertionError(f"The two values are equal at all elements. {msg or ''}")

    def assertNear(self, f1: float, f2: float, err: float, msg: str | None = None) -> None:  # noqa: N802
        """``|f1 - f2| <= err``."""
        f1, f2 = np.squeeze(f1), np.squeeze(f2)
        if f1 != f2:
            diff = math.fabs(f1 - f2)
            suffix = f" ({msg})" if msg is not None else ""
            self.assertTrue(diff <= err, "%f != %f +/- %f (difference: %g)%s" % (f1, f2, err, diff, suffix))  # noqa: UP031

    def assertArrayNear(self, farray1: Any, farray2: Any, err: float, msg: str | None = None) -> None:  # noqa: N802
        """Same length, and every pair of elements within ``err``."""
        self.assertEqual(len(farray1), len(farray2), msg=msg)
        for f1, f2 in zip(farray1, farray2, strict=True):
            self.assertNear(float(f1), float(f2), err, msg=msg)

    def assertNDArrayNear(self, ndarray1: Any, ndarray2: Any, err: float, msg: str | None = None) -> None:  # noqa: N802
        """The norm of the difference is below ``err``."""
        self.assertTrue(np.linalg.norm(np.asarray(ndarray1) - np.asarray(ndarray2)) < err, msg=msg)

    def _assert_all(self, a: Any, ok: Callable[[np.ndarray], Any], what: str) -> None:
        values = self._array(a)
        if not np.all(ok(values)):
            raise AssertionError(f"{values} is not {what}")

    def assertAllGreater(self, a: Any, comparison_target: Any) -> None:  # noqa: N802
        self._assert_all(a, lambda v: v > comparison_target, f"all greater than {comparison_target}")

    def assertAllGreaterEqual(self, a: Any, comparison_target: Any) -> None:  # noqa: N802
        self._assert_all(a, lambda v: v >= comparison_target, f"all greater than or equal to {comparison_target}")

    def assertAllLess(self, a: Any, comparison_target: Any) -> None:  # noqa: N802
        self._assert_all(a, lambda v: v < comparison_target, f"all less than {comparison_target}")

    def assertAllLessEqual(self, a: Any, comparison_target: Any) -> None:  # noqa: N802
        self._assert_all(a, lambda v: v <= comparison_target, f"all less than or equal to {comparison_target}")

    def assertAllInSet(self, target: Any, expected_set: Any) -> None:  # noqa: N802
        allowed = set(expected_set)
        self._assert_all(target, lambda v: np.isin(v, list(allowed)), f"all in {allowed}")

    def assertAllInRange(  # noqa: N802
        self,
        target: Any,
        lower_bound: Any,
        upper_bound: Any,
        open_lower_bound: bool = False,
        open_upper_bound: bool = False,
    ) -> None:
        low = (lambda v: v > lower_bound) if open_lower_bound else (lambda v: v >= lower_bound)
        high = (lambda v: v < upper_bound) if open_upper_bound else (lambda v: v <= upper_bound)
        self._assert_all(target, lambda v: low(v) & high(v), f"all in range [{lower_bound}, {upper_bound}]")

    def assertDTypeEqual(self, target: Any, expected_dtype: Any) -> None:  # noqa: N802
        dtype = np.dtype(getattr(expected_dtype, "as_numpy_dtype", expected_dtype))
        self.assertEqual(self._array(target).dtype, dtype)

    def assertShapeEqual(self, input_a: Any, input_b: Any, msg: str | None = None) -> None:  # noqa: N802
        """Two numpy values or tensors have the same (for tensors: static) shape."""
        shapes = []
        for name, value in (("input_a", input_a), ("input_b", input_b)):
            if isinstance(value, Tensor):
                shapes.append(value.get_shape().as_list())
            elif isinstance(value, np.ndarray | np.generic):
                shapes.append(list(value.shape))
            else:
                raise TypeError(
                    f"{name} must be a Numpy ndarray, Numpy scalar, or a Tensor.Instead received {type(value)}"
                )
        self.assertAllEqual(shapes[0], shapes[1], msg=msg)

    def assertStartsWith(self, actual: str, expected_start: str, msg: str | None = None) -> None:  # noqa: N802
        if not actual.startswith(expected_start):
            raise AssertionError(f"{actual!r} does not start with {expected_start!r} : {msg or ''}")

    @contextlib.contextmanager
    def assertRaisesWithPredicateMatch(  # noqa: N802
        self, exception_type: type[BaseException], expected_err_re_or_predicate: Any
    ) -> Iterator[None]:
        """The block raises ``exception_type`` whose message matches the regex (or satisfies the predicate).

        For an ``OpError`` the regex is searched in its message and the names of its op.
        """
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
        else:

            def predicate(e: BaseException) -> Any:
                text = e.message if isinstance(e, errors.OpError) else str(e)
                op = e.op if isinstance(e, errors.OpError) else None
                if op is not None:
                    text += "\nCaused by: " + op.name
                return re.search(expected_err_re_or_predicate, text)

        try:
            yield
        except Exception as e:  # noqa: BLE001 -- any other exception is the failure reported
            if not isinstance(e, exception_type) or not predicate(e):
                raise AssertionError(f"Exception of type {type(e)}: {e}") from e
            return
        self.fail(exception_type.__name__ + " not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate: Any) -> contextlib.AbstractContextManager[None]:  # noqa: N802
        """The block raises an ``OpError`` (``tf.errors.*``) matching the regex or predicate."""
        return self.assertRaisesWithPredicateMatch(errors.OpError, expected_err_re_or_predicate)

    def assertRaisesIncompatibleShapesError(
        self, exception_type: type[BaseException] = errors.InvalidArgumentError
    ) -> Any:  # noqa: N802
        """The block raises an error about incompatible (non-broadcastable) shapes."""
        pattern = r"Incompatible shapes|Dimensions must be equal|required broadcastable shapes"
        return self.assertRaisesWithPredicateMatch(exception_type, pattern)
