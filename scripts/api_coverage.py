"""How much of real TensorFlow's ``tensorflow.compat.v1`` ``dtf_notebook.compat.v1`` offers, name by name.

For each module (the top level, ``train``, ``nn``, ...) it walks the public names real TF (2.21, the ``tf`` extra)
has there and reports how many exist here and how many of those pass a *smoke check*. Run it from the repository
root::

    python scripts/api_coverage.py                    # the table, every module
    python scripts/api_coverage.py nn math --details  # plus the missing and failing names of two modules
    python scripts/api_coverage.py --markdown         # the table as Markdown (the README's Coverage part)

What the columns count:

* **TF** -- TF's public names in the module (names starting with ``_`` and sub-modules left out; a sub-module is
  a row of its own). ``tf.layers`` and ``tf.nn.rnn_cell`` need Keras 2 in TF 2.21, so the names of ``tf.layers``
  are TF 1.15's (``LAYERS_NAMES``) and TF's objects come from the copies TF still ships (``legacy_tf_layers``,
  ``legacy_rnn``; TF 2.21 has no batch-normalization layer, so those two names are checked by kind only).
* **here** -- names ``dtf_notebook.compat.v1`` has that are more than a stub. A stub -- a function or class whose
  body is only a ``raise``, or a call that raises ``NotImplementedError`` where TF's works -- counts as missing.
* **called** -- names of *here* that a generic call exercised (one that works on TF fitted).
* **smoke ok** -- names of *here* that pass the smoke check:

  1. *kind*: a TF class or function is callable here; a constant is equal (a DType by name; constants naming
     TF's build, ``*VERSION*``, only by type); an exception class is an exception class.
  2. *signature*: TF's signature is accepted here: the same positional parameters in the same order, TF's
     keyword-only ones by name (or ``**kwargs``), so calls written for TF bind the same way. Parameters TF added
     after 1.15 (``_TF2_PARAMS``) are not asked for.
  3. *call*: where one of the generic calls of ``api_smoke.py`` works on TF (a float 2x2 tensor, two of them,
     int/bool/string tensors, no arguments, a shape list, an int, a string, an image batch, ...), the same call
     here must work and give the same dtypes, shapes, deterministic values (within 1e-4), run-time error classes
     and plain results (see ``api_smoke.smoke_call``).

  A name no generic call fits (it needs a callable, a queue, three specific arguments, ...) passes on kind and
  signature alone: *called* says how many were exercised. Never called: names whose call would change the
  process (``app.run``, ``test.main``, ``enable_*`` switches, ``config``, ``distribute``, absl flag definitions),
  and the few where TF 2.21 changed TF1's behaviour (``_TF2_BEHAVIOUR``).

The rows in ``TARGET_MODULES`` are those issue 14 sets a target of 85% for. Left out: ``tf.keras`` (Keras 3 under
TF 2.21, not TF1's Keras), ``tf.raw_ops`` (generated op wrappers) and ``tf.compat``.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import importlib
import inspect
import json
import os
import sys
import textwrap
import types
from collections.abc import Sequence
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import api_smoke  # noqa: E402  (this folder's sibling module)

# The modules issue 14 asks 85% of (``""`` is the top level).
TARGET_MODULES = ("", *"train nn math layers losses metrics image initializers random errors summary".split())
OTHER_MODULES = tuple(
    """linalg strings data data.experimental io io.gfile gfile python_io app flags logging sparse bitwise dtypes
    debugging manip sets queue nn.rnn_cell train.queue_runner train.experimental math.special random.experimental
    lookup nest graph_util feature_column signal spectral ragged saved_model distributions quantization autograph
    experimental mixed_precision config distribute tpu xla lite mlir profiler audio resource_loader sysconfig test
    types user_ops version""".split()
)

# TF 1.15's ``tf.layers`` (TF 2.21 builds it from Keras 2, which is not installed).
LAYERS_NAMES = """AveragePooling1D AveragePooling2D AveragePooling3D BatchNormalization Conv1D Conv2D Conv2DTranspose
    Conv3D Conv3DTranspose Dense Dropout Flatten InputSpec Layer MaxPooling1D MaxPooling2D MaxPooling3D
    SeparableConv1D SeparableConv2D average_pooling1d average_pooling2d average_pooling3d batch_normalization conv1d
    conv2d conv2d_transpose conv3d conv3d_transpose dense dropout flatten max_pooling1d max_pooling2d max_pooling3d
    separable_conv1d separable_conv2d""".split()

# Calls that would change this process or the machine rather than build a graph.
_NO_CALL_MODULES = ("config", "distribute", "tpu", "lite", "mlir", "profiler", "experimental", "mixed_precision")
# ``Operation(...)`` with anything but a NodeDef aborts TF's process (a C++ cast error).
_NO_CALL = {"app.run", "test.main", "reset_default_graph", "Operation"}
# Reading any attribute of absl's FLAGS before parsing makes TF's and our wrappers parse sys.argv: existence only.
_EXISTS_ONLY = {"flags.FLAGS", "app.flags.FLAGS"}
_NO_CALL_PREFIXES = ("enable_", "DEFINE", "mark_flag", "declare_key_flag", "adopt_module_key_flags")


@dataclasses.dataclass
class NameResult:
    """The verdict on one name: ``status`` is ``ok``, ``fail``, ``stub`` or ``missing``; ``called`` whether a
    generic call exercised it; ``reason`` says why it failed."""

    name: str
    status: str
    called: bool = False
    reason: str = ""


@dataclasses.dataclass
class ModuleReport:
    """The names of one module and their verdicts.

    Example:
        >>> r = ModuleReport("losses", [NameResult("hinge_loss", "ok", True), NameResult("x", "missing")])
        >>> r.tf, r.here, r.ok, r.called
        (2, 1, 1, 1)
    """

    module: str
    results: list[NameResult]

    @property
    def tf(self) -> int:
        return len(self.results)

    @property
    def here(self) -> int:
        return sum(r.status in ("ok", "fail") for r in self.results)

    @property
    def ok(self) -> int:
        return sum(r.status == "ok" for r in self.results)

    @property
    def called(self) -> int:
        return sum(r.called and r.status in ("ok", "fail") for r in self.results)

    def names(self, status: str) -> list[str]:
        return [r.name for r in self.results if r.status == status]


# ---- the two libraries -------------------------------------------------------------------------------------


@functools.cache
def real_tf() -> Any:
    """Real TF's ``tensorflow.compat.v1`` in TF1 graph mode (imported once)."""
    import tensorflow.compat.v1 as tf1

    tf1.disable_v2_behavior()
    tf1.disable_control_flow_v2()
    tf1.logging.set_verbosity(tf1.logging.ERROR)
    return tf1


@functools.cache
def ours() -> Any:
    """``dtf_notebook.compat.v1``."""
    import dtf_notebook.compat.v1 as tf

    return tf


_MISSING = object()  # a name TF lists but cannot load, or one missing here


def _lookup(root: Any, path: str) -> Any:
    obj = root
    for part in filter(None, path.split(".")):
        try:
            obj = getattr(obj, part)
        except (AttributeError, ImportError):
            return _MISSING
    return obj


def _legacy_layers() -> types.SimpleNamespace:
    """TF1's layer classes and functions from the copies TF 2.21 still ships (all but batch normalization)."""
    from tensorflow.python.keras.engine.input_spec import InputSpec
    from tensorflow.python.keras.legacy_tf_layers import base, convolutional, core, pooling

    ns = types.SimpleNamespace(InputSpec=InputSpec, Layer=base.Layer)
    for module in (core, convolutional, pooling):
        for name in LAYERS_NAMES:
            if hasattr(module, name):
                setattr(ns, name, getattr(module, name))
    return ns


def tf_names(module: str) -> dict[str, Any]:
    """TF's public names in ``module`` (``""`` the top level) and their objects (``_MISSING`` where TF 2.21 has the
    name but cannot load it).

    Example:
        >>> sorted(tf_names("bitwise"))
        ['bitwise_and', 'bitwise_or', 'bitwise_xor', 'invert', 'left_shift', 'right_shift']
    """
    tf1 = real_tf()
    if module == "layers":
        legacy = _legacy_layers()
        return {n: getattr(legacy, n, _MISSING) for n in LAYERS_NAMES}
    obj = _lookup(tf1, module)
    try:
        listed = dir(obj)
    except ImportError:  # a Keras-backed lazy module: TF's generated API module lists the names
        obj = importlib.import_module("tensorflow._api.v2.compat.v1." + module)
        listed = dir(obj)
    names: dict[str, Any] = {}
    for name in listed:
        if name.startswith("_"):
            continue
        try:
            value = getattr(obj, name)
        except (AttributeError, ImportError):
            value = _MISSING
        if not isinstance(value, types.ModuleType) and name not in ("keras", "layers", "rnn_cell"):
            names[name] = value
    return names


# ---- stubs and signatures ----------------------------------------------------------------------------------


def _raises_only(fn: Any) -> bool:
    """Whether a Python function's body, past its docstring, is one ``raise``."""
    fn = inspect.unwrap(fn)
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return False
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return len(body) == 1 and isinstance(body[0], ast.Raise)


def is_stub(obj: Any) -> bool:
    """Whether ``obj`` only raises: a function whose body is one ``raise``, or a class whose ``__init__`` is.

    Example:
        >>> def later(x):
        ...     raise NotImplementedError("later")
        >>> is_stub(later), is_stub(len)
        (True, False)
    """
    if inspect.isclass(obj):
        init = obj.__dict__.get("__init__")
        return init is not None and _raises_only(init)
    return inspect.isfunction(inspect.unwrap(obj)) and _raises_only(obj)


# Parameters TF added after 1.15 (DTensor layouts, index policies, dataset names, ...): a TF1 script never passes
# them, so they are not asked for.
_TF2_PARAMS = set(
    "layout bad_indices_policy allow_fast_lookup output_type use_own_namescope_for_non_slot_vars "
    "allow_last_axis_squeeze log_warning grad_a grad_b".split()
)
# ... and TF 2.x's ``name`` of dataset sources and Keras' InputSpec.
_TF2_NAME_PARAM = {"TextLineDataset", "TFRecordDataset", "FixedLengthRecordDataset", "InputSpec"}
# Where TF 2.21 changed a TF1 behaviour, so that it is no oracle for a call: judged on kind and signature only.
_TF2_BEHAVIOUR = {
    "cholesky": "TF 2.x fills a failed decomposition with NaN; TF1 raised InvalidArgumentError, as here",
    "logdet": "a Cholesky inside (see cholesky)",
    "sigmoid_cross_entropy_with_logits": "TF 2.x takes positional labels/logits; TF1's _sentinel refused them",
    "softmax_cross_entropy_with_logits": "TF 2.x takes positional labels/logits; TF1's _sentinel refused them",
    "sparse_softmax_cross_entropy_with_logits": "TF 2.x takes positional labels/logits; TF1's _sentinel refused them",
}


def _signature(obj: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(obj)
    except (TypeError, ValueError):
        return None


def signature_gap(theirs: Any, mine: Any, name: str = "") -> str:
    """What of TF's signature ``mine`` does not accept ("" when nothing): a positional parameter named or ordered
    differently, or a keyword one it lacks.

    Example:
        >>> signature_gap(lambda x, axis=None, name=None: 0, lambda x, axis=None: 0)
        'no parameter name'
    """
    sig_t, sig_m = _signature(theirs), _signature(mine)
    if sig_t is None or sig_m is None:
        return ""
    kinds = inspect.Parameter
    params_m = sig_m.parameters
    if any(p.kind == kinds.VAR_KEYWORD for p in params_m.values()):
        return ""
    positional = (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)
    skip = _TF2_PARAMS | ({"name"} if name in _TF2_NAME_PARAM else set()) | {"_sentinel"}
    # TF1's ``_sentinel`` (a guard forcing keyword arguments) is not a parameter callers pass.
    pos_t = [p.name for p in sig_t.parameters.values() if p.kind in positional and p.name not in skip]
    pos_m = [p.name for p in params_m.values() if p.kind in positional and p.name not in skip]
    var_pos_m = any(p.kind == kinds.VAR_POSITIONAL for p in params_m.values())
    for i, param in enumerate(pos_t):
        if i >= len(pos_m):
            if not var_pos_m:
                return f"no parameter {param}"
            break
        if pos_m[i] != param:
            return f"parameter {i} is {pos_m[i]}, TF's {param}"
    for p in sig_t.parameters.values():
        if p.kind == kinds.KEYWORD_ONLY and p.name not in params_m and p.name not in skip:
            return f"no keyword parameter {p.name}"
    return ""


def _never_call(module: str, name: str) -> bool:
    qualified = f"{module}.{name}" if module else name
    return (
        module.split(".")[0] in _NO_CALL_MODULES
        or qualified in _NO_CALL
        or name.startswith(_NO_CALL_PREFIXES)
        or module.endswith("tf_decorator")
    )


def _is_dtype(x: Any) -> bool:
    return isinstance(x, real_tf().DType | ours().DType)


def _is_constant(x: Any) -> bool:
    return api_smoke.is_plain(x) or isinstance(x, set | frozenset) or _is_dtype(x)


def _constant_key(x: Any) -> Any:
    if _is_dtype(x):
        return ("dtype", x.name)
    if isinstance(x, list | tuple | set | frozenset):
        return sorted((_constant_key(y) for y in x), key=repr)
    return x


def check_name(module: str, name: str, theirs: Any, mine: Any) -> NameResult:
    """The smoke check of one name (see the module docstring).

    Example:
        >>> check_name("", "abs", real_tf().abs, ours().abs).status
        'ok'
    """
    if mine is _MISSING:
        return NameResult(name, "missing")
    if f"{module}.{name}" in _EXISTS_ONLY:
        return NameResult(name, "ok")
    if is_stub(mine):
        return NameResult(name, "stub", reason="only raises")
    if theirs is _MISSING:  # TF 2.21 cannot load it: kind alone
        return NameResult(name, "ok" if mine is not None else "fail", reason="TF's object unavailable")
    if inspect.isclass(theirs) and issubclass(theirs, BaseException):
        if not (inspect.isclass(mine) and issubclass(mine, BaseException)):
            return NameResult(name, "fail", reason="not an exception class")
    elif _is_constant(theirs) and not callable(theirs):
        if "VERSION" in name.upper() or module == "version":
            same = type(mine) is type(theirs)
        else:
            same = _is_constant(mine) and _constant_key(mine) == _constant_key(theirs)
        return NameResult(name, "ok" if same else "fail", reason="" if same else f"{mine!r:.40} != TF's {theirs!r:.40}")
    if callable(theirs) and not callable(mine):
        return NameResult(name, "fail", reason="not callable")
    if not callable(theirs):
        return NameResult(name, "ok")
    gap = signature_gap(theirs, mine, name)
    if gap:
        return NameResult(name, "fail", reason=f"signature: {gap}")
    if name in _TF2_BEHAVIOUR:
        return NameResult(name, "ok", reason=f"not called: {_TF2_BEHAVIOUR[name]}")
    if _never_call(module, name):
        return NameResult(name, "ok")
    status, called, reason = api_smoke.smoke_call(name, theirs, mine, real_tf(), ours())
    return NameResult(name, status, called, reason)


def check_module(module: str) -> ModuleReport:
    """Checks every TF name of ``module`` (``""`` the top level) here.

    Example:
        >>> report = check_module("bitwise")
        >>> report.tf, report.here == report.ok == report.called
        (6, True)
    """
    mine_module = _lookup(ours(), module) if module else ours()
    results = []
    for name, theirs in sorted(tf_names(module).items()):
        mine = _MISSING if mine_module is _MISSING else _lookup(mine_module, name)
        results.append(check_name(module, name, theirs, mine))
    return ModuleReport(module, results)


# ---- reporting ---------------------------------------------------------------------------------------------


def _label(module: str) -> str:
    return module or "(top level)"


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def table(reports: Sequence[ModuleReport], markdown: bool = False) -> str:
    """The coverage table: per module TF's names, those here, those passing the smoke check, and totals of the
    target modules.

    Example:
        >>> print(table([ModuleReport("x", [NameResult("a", "ok", True), NameResult("b", "missing")])]))
        module    TF  here  called  smoke ok  here %  ok %
        x          2     1       1         1     50%   50%
    """
    header = ("module", "TF", "here", "called", "smoke ok", "here %", "ok %")
    targets = [r for r in reports if r.module in TARGET_MODULES]
    together = ModuleReport("targets together", [x for r in targets for x in r.results])
    rows = []
    for r in [*reports, together] if len(targets) > 1 else reports:
        if r is together:
            label = "**targets together**" if markdown else r.module
        elif markdown:
            label = f"`tf.{r.module}`" if r.module else "top level `tf.*`"
            label += " (target)" if r in targets else ""
        else:
            label = _label(r.module) + ("*" if r in targets else "")
        rows.append((label, r.tf, r.here, r.called, r.ok, _pct(r.here, r.tf), _pct(r.ok, r.tf)))
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "| --- |" + " ---: |" * (len(header) - 1)]
        return "\n".join(lines + ["| " + " | ".join(map(str, row)) + " |" for row in rows])
    first = max(len(str(row[0])) for row in [header, *rows]) + 1
    widths = (5, 6, 8, 10, 8, 6)
    return "\n".join(
        f"{row[0]:<{first}}" + "".join(f"{c:>{w}}" for c, w in zip(row[1:], widths)) for row in [header, *rows]
    )


def details(report: ModuleReport) -> str:
    """The missing, stub and failing names of one module, with the reasons."""
    lines = [f"== {_label(report.module)}: {report.ok}/{report.tf} pass"]
    for status in ("missing", "stub"):
        names = report.names(status)
        if names:
            lines.append(f"  {status} ({len(names)}): " + ", ".join(names))
    for r in report.results:
        if r.status == "fail" or (r.status == "stub" and r.reason != "only raises"):
            lines.append(f"  {r.status}: {r.name}: {r.reason}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Prints the coverage table (and, with ``--details``, what is missing and failing); exit status 0.

    Example (slow: it calls about two thousand names in both libraries):
        python scripts/api_coverage.py --markdown
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="modules to check ('' or 'top' for the top level); all by default")
    parser.add_argument("--details", action="store_true", help="list missing, stub and failing names per module")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--json", help="also write every verdict to this JSON file")
    parser.add_argument("--trace", action="store_true", help="name every call on stderr before making it")
    args = parser.parse_args(argv)
    api_smoke.TRACE = args.trace
    modules = [("" if m == "top" else m) for m in args.modules] or [*TARGET_MODULES, *OTHER_MODULES]
    reports = []
    for module in modules:
        reports.append(check_module(module))
        print(f"checked {_label(module)}", file=sys.stderr, flush=True)
    print(table(reports, markdown=args.markdown))
    if args.details:
        for report in reports:
            print(details(report))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({r.module: [dataclasses.asdict(x) for x in r.results] for r in reports}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
