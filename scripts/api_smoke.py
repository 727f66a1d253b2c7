"""The generic smoke call of ``api_coverage.py``: call a TF name and ours the same way, run what they return, and
compare.

:func:`smoke_call` tries the argument patterns of ``PATTERNS`` in order on TF's object. The first one TF accepts is
made on ours too, each call inside a fresh ``Graph`` and an empty temporary working directory; a returned
initializer or layer (a callable object with ``get_config``) is called once more (``FOLLOW_UPS``). Tensors,
operations, variables and sparse tensors are run in a ``Session`` after the variable initializers, one fetch per
run; TF runs them in two sessions, and its values count as deterministic when both agree and the graph holds no
stateful random op. Ours must return as many results, of the same dtypes and shapes, equal deterministic values
(floats within ``rtol=atol=1e-4``), the same error class where TF's run raises, and equal plain Python results.

Example:
    >>> import tensorflow.compat.v1 as tf1
    >>> import dtf_notebook.compat.v1 as tf
    >>> smoke_call("sin", tf1.sin, tf.sin, tf1, tf)
    ('ok', True, '')
    >>> smoke_call("sin", tf1.sin, tf.cos, tf1, tf)
    ('fail', True, "sin(F): result 0: values differ from TF's")
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import os
import re
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

_F = [[0.2, 0.4], [0.6, 0.8]]
_IMG = np.linspace(0.05, 0.95, 48, dtype=np.float32).reshape(1, 4, 4, 3)

# Each pattern's arguments, built with library ``m`` in the current graph.
_ARGS: dict[str, Callable[[Any], tuple[Any, ...]]] = {
    "()": lambda m: (),
    "F": lambda m: (m.constant(_F),),
    "F,F": lambda m: (m.constant(_F), m.constant(_F)),
    "Fvec": lambda m: (m.constant([0.2, 0.4, 0.6]),),
    "F,Ivec": lambda m: (m.constant(_F), m.constant([0, 1])),
    "I": lambda m: (m.constant([[1, 0], [2, 1]]),),
    "I,I": lambda m: (m.constant([[1, 0], [2, 1]]), m.constant([[1, 1], [0, 1]])),
    "Ivec,Ivec": lambda m: (m.constant([1, 0, 2], m.int64), m.constant([1, 1, 2], m.int64)),
    "B": lambda m: (m.constant([[True, False], [False, True]]),),
    "B,B": lambda m: (m.constant([[True, False], [False, True]]), m.constant([[True, True], [False, False]])),
    "S": lambda m: (m.constant(["a", "bc"]),),
    "S,S": lambda m: (m.constant(["a", "bc"]), m.constant(["d", "e"])),
    "SPD": lambda m: (m.constant([[2.0, 1.0], [1.0, 2.0]]),),
    "shape": lambda m: ([2, 2],),
    "shape,1.0": lambda m: ([2, 2], 1.0),
    "2": lambda m: (2,),
    "2,2": lambda m: (2, 2),
    "F,0": lambda m: (m.constant(_F), 0),
    "F,2": lambda m: (m.constant(_F), 2),
    "F,shape": lambda m: (m.constant(_F), [2, 2]),
    "Ivec,2": lambda m: (m.constant([0, 1]), 2),
    "'a'": lambda m: ("a",),
    "'a',shape": lambda m: ("a", [2, 2]),
    "IMG": lambda m: (m.constant(_IMG),),
    "IMG,0.5": lambda m: (m.constant(_IMG), 0.5),
    "IMG,shape": lambda m: (m.constant(_IMG), [2, 2]),
    "IMG,2,2": lambda m: (m.constant(_IMG), 2, 2),
    "X3,2,2": lambda m: (m.constant(_IMG[0]), 2, 2),
    "X5,2,2": lambda m: (m.constant(_IMG[None]), 2, 2),
    "error": lambda m: (None, None, "a"),  # an OpError's (node_def, op, message)
    "X3": lambda m: (m.constant(_IMG[0]),),
    "X5": lambda m: (m.constant(_IMG[None]),),
}
PATTERNS = tuple(k for k in _ARGS if k not in ("X3", "X5"))
# A returned initializer or layer is called once more with the first of these that TF accepts.
FOLLOW_UPS = ("F", "shape", "X3", "IMG", "X5")

# (name, pattern) pairs whose call aborts TF's process (failed CHECKs in TF's C++ shape functions, oneDNN).
TF_ABORTS = {("batch_join", "'a',shape"), ("batch", "'a',shape"), ("dense", "F,0"), ("split", "I,I")}
# Stateful random ops: two sessions may agree by chance (a flip is a coin toss), so their values are not compared.
_RANDOM_OP = re.compile(r"Random|TruncatedNormal|Multinomial|Categorical|CandidateSampler|Shuffle")
# Results defined up to the sign of each vector (eigen- and singular vectors): compared in absolute value.
UP_TO_SIGN = {"svd", "eigh", "self_adjoint_eig", "eig", "qr"}
TIMEOUT_S = 20
TRACE = False  # name every call on stderr before making it (to find one that kills the process)
_NOTHING = object()


class CallError(Exception):
    """A call or run failed; ``kind`` is the exception's class name."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind


@dataclasses.dataclass
class _Outcome:
    follow_up: str | None
    fetched: list[Any]  # per fetchable: a value, None (an op), or a CallError
    dtypes: list[str]
    plain: Any = _NOTHING  # a plain Python result
    random: bool = False  # the graph holds a stateful random op
    attrs: dict[str, Any] = dataclasses.field(default_factory=dict)


@contextlib.contextmanager
def _sandbox() -> Iterator[None]:
    """An empty working directory of its own, and a deadline (main thread only; a timer already running, such as
    pytest-timeout's, is put back with the time it has left)."""
    cwd = os.getcwd()
    main = threading.current_thread() is threading.main_thread()
    with tempfile.TemporaryDirectory(prefix="api-coverage-") as tmp:
        os.chdir(tmp)
        if main:

            def on_alarm(signum: int, frame: Any) -> None:
                raise TimeoutError(f"no answer in {TIMEOUT_S} s")

            start = time.monotonic()
            previous = signal.signal(signal.SIGALRM, on_alarm)
            delay, interval = signal.setitimer(signal.ITIMER_REAL, TIMEOUT_S)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                yield
        finally:
            if main:
                left = max(delay - (time.monotonic() - start), 1e-3) if delay else 0.0
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
                signal.setitimer(signal.ITIMER_REAL, left, interval)
            os.chdir(cwd)


def _flatten(x: Any) -> list[Any]:
    if isinstance(x, list | tuple):
        return [y for item in x for y in _flatten(item)]
    if isinstance(x, dict):
        return [y for key in sorted(x, key=str) for y in _flatten(x[key])]
    return [x]


def is_plain(x: Any) -> bool:
    """Whether ``x`` is a plain Python/numpy value (compared by equality).

    Example:
        >>> is_plain([1, "a", None]), is_plain(object())
        (True, False)
    """
    if isinstance(x, bool | int | float | str | bytes | type(None) | np.ndarray | np.generic):
        return True
    return isinstance(x, list | tuple) and all(is_plain(y) for y in x)


def _fetchable(m: Any, x: Any) -> bool:
    return isinstance(x, m.Tensor | m.Operation | m.SparseTensor | m.Variable | m.IndexedSlices)


def _dtype_name(x: Any) -> str:
    dtype = getattr(x, "dtype", None)
    return getattr(getattr(dtype, "base_dtype", dtype), "name", "") if dtype is not None else "op"


def _as_value(v: Any) -> Any:
    if hasattr(v, "indices") and hasattr(v, "values"):  # SparseTensorValue, IndexedSlicesValue
        return tuple(np.asarray(a) for a in (v.indices, v.values, getattr(v, "dense_shape", None)) if a is not None)
    return None if v is None else np.asarray(v)


def _error(e: BaseException, prefix: str = "") -> CallError:
    return CallError(type(e).__name__, prefix + (str(e).splitlines() or [""])[0][:160])


def _close_sessions(x: Any) -> None:
    for item in _flatten(x):
        if hasattr(item, "close") and any(word in type(item).__name__ for word in ("Session", "Writer")):
            with contextlib.suppress(Exception):  # closing what the call opened; its failure is not the verdict
                item.close()


def _follow_up(m: Any, result: Any, follow_up: str | None) -> tuple[Any, str | None]:
    if not (callable(result) and not inspect.isclass(result) and hasattr(result, "get_config")):
        return result, None
    for candidate in [follow_up] if follow_up else FOLLOW_UPS:
        try:
            return result(*_ARGS[candidate](m)), candidate
        except Exception as e:  # TF: a follow-up it rejects is not tried; ours: one TF accepted must work
            if follow_up:
                raise _error(e, "follow-up call: ") from None
    return result, None


def _run(m: Any, fn: Any, spec: str, follow_up: str | None, sessions: int) -> tuple[_Outcome, list[list[Any]]]:
    """Calls ``fn`` with pattern ``spec`` in a fresh graph and runs what it returns in ``sessions`` sessions;
    raises CallError when the call itself fails."""
    if TRACE:
        print(f"  calling {m.__name__}.{getattr(fn, '__qualname__', fn)} with {spec}", file=sys.stderr, flush=True)
    # A process-wide global random generator made by an earlier call (or test) lives in another graph; each call
    # starts without one, as in a fresh process.
    m.random.set_global_generator(None)
    with _sandbox(), m.Graph().as_default() as graph:
        try:
            result = fn(*_ARGS[spec](m))
        except Exception as e:  # the call is what is being tried: any failure is a verdict
            raise _error(e) from None
        result, chosen = _follow_up(m, result, follow_up)
        fetchables = [x for x in _flatten(result) if _fetchable(m, x)]
        outcome = _Outcome(chosen, [], [_dtype_name(x) for x in fetchables])
        outcome.random = any(_RANDOM_OP.search(op.type) for op in graph.get_operations())
        if not fetchables:
            if is_plain(result):
                outcome.plain = result
            if not inspect.isclass(result):
                outcome.attrs = {a: getattr(result, a) for a in ("error_code", "message") if hasattr(result, a)}
            _close_sessions(result)
            return outcome, []
        init = []
        if not graph.finalized and (m.global_variables() or m.local_variables()):
            init = [m.global_variables_initializer(), m.local_variables_initializer()]
        runs = []
        for _ in range(sessions):
            with m.Session(graph=graph, config=m.ConfigProto(operation_timeout_in_ms=5000)) as sess:
                if init:
                    sess.run(init)
                values = []
                for x in fetchables:
                    try:
                        values.append(_as_value(sess.run(x)))
                    except Exception as e:  # an error at run time is compared with TF's
                        values.append(_error(e))
                runs.append(values)
        _close_sessions(result)
        outcome.fetched = runs[0]
        return outcome, runs


def _same(a: Any, b: Any, exact: bool) -> bool:
    if isinstance(a, CallError) or isinstance(b, CallError):
        return isinstance(a, CallError) and isinstance(b, CallError) and a.kind == b.kind
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(_same(x, y, exact) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype == object or b.dtype == object:
        norm = np.vectorize(lambda s: s.encode() if isinstance(s, str) else s, otypes=[object])
        return bool(np.all(norm(a) == norm(b))) if a.size else True
    if exact or not np.issubdtype(a.dtype, np.inexact):
        return bool(np.array_equal(a, b, equal_nan=np.issubdtype(a.dtype, np.inexact)))
    return bool(np.allclose(a, b, rtol=1e-4, atol=1e-4, equal_nan=True))


def _abs(v: Any) -> Any:
    return np.abs(v) if isinstance(v, np.ndarray) and np.issubdtype(v.dtype, np.number) else v


def _shape_of(v: Any) -> Any:
    if isinstance(v, CallError):
        return v.kind
    if isinstance(v, tuple):
        return tuple(np.shape(x) for x in v)
    return None if v is None else np.shape(v)


def _compare(theirs: _Outcome, deterministic: list[bool], mine: _Outcome, up_to_sign: bool) -> str:
    """Why ``mine`` does not match TF's outcome ("" when it does)."""
    if up_to_sign:
        theirs, mine = (dataclasses.replace(o, fetched=[_abs(v) for v in o.fetched]) for o in (theirs, mine))
    if theirs.plain is not _NOTHING:
        if mine.plain is _NOTHING:
            return f"returns {len(mine.fetched)} tensors/ops or an object, TF {theirs.plain!r:.60}"
        ok = _same(np.asarray(theirs.plain, dtype=object), np.asarray(mine.plain, dtype=object), True)
        return "" if ok else f"returns {mine.plain!r:.60}, TF {theirs.plain!r:.60}"
    for key, value in theirs.attrs.items():
        if mine.attrs.get(key) != value:
            return f"{key} is {mine.attrs.get(key)!r}, TF's {value!r}"
    if len(theirs.fetched) != len(mine.fetched):
        return f"returns {len(mine.fetched)} tensors/ops, TF {len(theirs.fetched)}"
    if theirs.dtypes != mine.dtypes:
        return f"dtypes {mine.dtypes}, TF's {theirs.dtypes}"
    for i, (a, b, det) in enumerate(zip(theirs.fetched, mine.fetched, deterministic)):
        if isinstance(a, CallError) != isinstance(b, CallError):
            mine_did, tf_did = (v if isinstance(v, CallError) else "runs" for v in (b, a))
            return f"result {i}: {mine_did}, TF: {tf_did}"
        if _shape_of(a) != _shape_of(b):
            return f"result {i}: shape {_shape_of(b)}, TF's {_shape_of(a)}"
        if det and not _same(a, b, exact=False):
            return f"result {i}: values differ from TF's"
    return ""


def smoke_call(name: str, theirs: Any, mine: Any, tf1: Any, tf: Any) -> tuple[str, bool, str]:
    """Calls TF's ``theirs`` and our ``mine`` the same way and compares: returns (status, called, reason) with status
    ``ok``, ``fail`` or ``stub`` (ours raised NotImplementedError) and ``called`` whether a pattern fit TF.

    The first pattern TF accepts decides, except that a TypeError or ValueError here (stricter checking of an
    argument TF tolerates, such as a tensor for a scope name) moves on to the next one TF accepts; a call ours
    refuses when built and TF's refuses when run counts as agreeing.
    """
    first_failure: tuple[str, bool, str] | None = None
    for spec in PATTERNS:
        if (name, spec) in TF_ABORTS:
            continue
        try:
            outcome, runs = _run(tf1, theirs, spec, None, sessions=2)
        except (CallError, TimeoutError):
            continue
        deterministic = [not outcome.random and _same(a, b, exact=True) for a, b in zip(*runs)] if runs else []
        try:
            got, _ = _run(tf, mine, spec, outcome.follow_up, sessions=1)
        except CallError as e:
            if outcome.fetched and all(isinstance(v, CallError) for v in outcome.fetched):
                return "ok", True, f"{name}({spec}): refused when built, TF's when run"
            if e.kind == "NotImplementedError":
                return "stub", True, f"{name}({spec}): {e}"
            first_failure = first_failure or ("fail", True, f"{name}({spec}): {e}")
            if e.kind in ("TypeError", "ValueError"):
                continue
            return first_failure
        except TimeoutError as e:
            return "fail", True, f"{name}({spec}): {e}"
        why = _compare(outcome, deterministic, got, up_to_sign=name in UP_TO_SIGN)
        if why:
            return first_failure or ("fail", True, f"{name}({spec}): {why}")
        return "ok", True, f"after {first_failure[2]}" if first_failure else ""
    return first_failure or ("ok", False, "")
