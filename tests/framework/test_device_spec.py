"""Tests for dtf_notebook.framework.device_spec.

Expected values were taken from TensorFlow 2.21 (``DeviceSpecV1`` and
``tf.Graph().device`` scopes); the ``test_oracle_*`` tests re-check them
against TensorFlow when it is installed.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

import pytest

from dtf_notebook.framework.device_spec import (
    DeviceSpec,
    MergeDevice,
    apply_device_stack,
    canonical_name,
    merge_device,
)

# (string, (job, replica, task, device_type, device_index), canonical string)
PARSE_CASES = [
    ("", (None, None, None, None, None), ""),
    (
        "/job:ps/replica:0/task:0/device:CPU:0",
        ("ps", 0, 0, "CPU", 0),
        "/job:ps/replica:0/task:0/device:CPU:0",
    ),
    ("/cpu:0", (None, None, None, "CPU", 0), "/device:CPU:0"),
    ("/CPU:0", (None, None, None, "CPU", 0), "/device:CPU:0"),
    ("/Cpu:0", (None, None, None, "CPU", 0), "/device:CPU:0"),
    ("/gpu:1", (None, None, None, "GPU", 1), "/device:GPU:1"),
    ("/GPU:0", (None, None, None, "GPU", 0), "/device:GPU:0"),
    ("/device:GPU:1", (None, None, None, "GPU", 1), "/device:GPU:1"),
    ("/device:cpu:0", (None, None, None, "CPU", 0), "/device:CPU:0"),
    # Only the legacy lowercase spellings are normalised in the long form.
    ("/device:Gpu:0", (None, None, None, "Gpu", 0), "/device:Gpu:0"),
    ("/device:XLA_CPU:0", (None, None, None, "XLA_CPU", 0), "/device:XLA_CPU:0"),
    ("/tpu:0", (None, None, None, "TPU", 0), "/device:TPU:0"),
    ("/TPU:1", (None, None, None, "TPU", 1), "/device:TPU:1"),
    ("/task:1", (None, None, 1, None, None), "/task:1"),
    ("/replica:2", (None, 2, None, None, None), "/replica:2"),
    ("/job:ps", ("ps", None, None, None, None), "/job:ps"),
    (
        "/job:worker/task:1/gpu:1",
        ("worker", None, 1, "GPU", 1),
        "/job:worker/task:1/device:GPU:1",
    ),
    ("/gpu:*", (None, None, None, "GPU", None), "/device:GPU:*"),
    ("/gpu", (None, None, None, "GPU", None), "/device:GPU:*"),
    ("/device:CPU:*", (None, None, None, "CPU", None), "/device:CPU:*"),
    ("job:ps", ("ps", None, None, None, None), "/job:ps"),
    ("CPU:0", (None, None, None, "CPU", 0), "/device:CPU:0"),
    ("//job:ps//", ("ps", None, None, None, None), "/job:ps"),
    ("/job:ps/job:wk", ("wk", None, None, None, None), "/job:wk"),
    ("/job:ps/task:01", ("ps", None, 1, None, None), "/job:ps/task:1"),
    ("/task:1/job:ps", ("ps", None, 1, None, None), "/job:ps/task:1"),
    ("/gpu:0/task:2", (None, None, 2, "GPU", 0), "/task:2/device:GPU:0"),
    (
        "/job:ps/replica:1/task:2/device:CPU:3/",
        ("ps", 1, 2, "CPU", 3),
        "/job:ps/replica:1/task:2/device:CPU:3",
    ),
    ("/:0", (None, None, None, None, None), ""),
]

_INT = "invalid literal for int() with base 10: 'x'"


def _unknown(attr: str, spec: str) -> str:
    return f"Unknown attribute '{attr}' is encountered while parsing the device spec: '{spec}'."


def _multiple(spec: str) -> str:
    return f"Multiple device types are not allowed while parsing the device spec: {spec}."


# (string, exact ValueError message)
BAD_CASES = [
    ("/foo:bar", _unknown("foo", "/foo:bar")),
    ("/XLA_CPU:0", _unknown("XLA_CPU", "/XLA_CPU:0")),
    ("/job:a:b", _unknown("job", "/job:a:b")),
    ("/job", _unknown("job", "/job")),
    ("/device:GPU", _unknown("device", "/device:GPU")),
    ("/cpu:0:1", _unknown("cpu", "/cpu:0:1")),
    ("/cpu:0/gpu:1", _multiple("/cpu:0/gpu:1")),
    (
        "/job:ps/device:CPU:0/device:GPU:0",
        _multiple("/job:ps/device:CPU:0/device:GPU:0"),
    ),
    ("/task:x", _INT),
    ("/replica:x", _INT),
    ("/cpu:x", _INT),
    ("/device:GPU:x", _INT),
]


class FakeOp:
    """The smallest op-like object apply_device_stack needs."""

    def __init__(self, device: str = "", type: str = "NoOp") -> None:
        self.device = device
        self.type = type


# --- parsing and formatting ------------------------------------------------


@pytest.mark.parametrize(("text", "fields", "canonical"), PARSE_CASES)
def test_parse_and_format(text: str, fields: tuple, canonical: str) -> None:
    spec = DeviceSpec.from_string(text)
    got = (spec.job, spec.replica, spec.task, spec.device_type, spec.device_index)
    assert got == fields
    assert spec.to_string() == canonical
    assert str(spec) == canonical
    assert canonical_name(text) == canonical
    # The canonical form is a fixed point.
    assert DeviceSpec.from_string(canonical) == spec
    assert DeviceSpec.from_string(canonical).to_string() == canonical


@pytest.mark.parametrize(("text", "message"), BAD_CASES)
def test_bad_strings_raise_tf_messages(text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        DeviceSpec.from_string(text)
    assert str(info.value) == message
    with pytest.raises(ValueError):
        canonical_name(text)


def test_unknown_attribute_message_literal() -> None:
    with pytest.raises(ValueError, match=r"^Unknown attribute 'foo' is encountered"):
        DeviceSpec.from_string("/foo:bar")
    with pytest.raises(ValueError) as info:
        DeviceSpec.from_string("/foo:bar")
    assert str(info.value) == ("Unknown attribute 'foo' is encountered while parsing the device spec: '/foo:bar'.")


def test_bad_string_raises_again_after_a_cached_success() -> None:
    DeviceSpec.from_string("/cpu:0")
    for _ in range(2):  # errors must not be cached as results
        with pytest.raises(ValueError):
            DeviceSpec.from_string("/foo:bar")


def test_from_string_none_and_parse_from_string_alias() -> None:
    assert DeviceSpec.from_string(None) == DeviceSpec()
    assert DeviceSpec.parse_from_string("/gpu:1") == DeviceSpec(device_type="GPU", device_index=1)


def test_constructor_normalisation() -> None:
    assert DeviceSpec(device_type="cpu").device_type == "CPU"
    assert DeviceSpec(device_type="gpu").device_type == "GPU"
    assert DeviceSpec(device_type="TPU").device_type == "TPU"
    assert DeviceSpec(device_type="XLA_CPU").device_type == "XLA_CPU"
    assert DeviceSpec(job=0, task="3").to_string() == "/job:0/task:3"
    assert DeviceSpec(device_type="GPU").to_string() == "/device:GPU:*"
    # An index without a type is kept but not printed, as in TF.
    assert DeviceSpec(device_index=2).to_string() == ""
    assert DeviceSpec(device_index=2).device_index == 2
    with pytest.raises(ValueError):
        DeviceSpec(task="x")


def test_repr_is_readable() -> None:
    spec = DeviceSpec.from_string("/job:ps/task:1/gpu:0")
    assert repr(spec) == ("DeviceSpec(job='ps', replica=None, task=1, device_type='GPU', device_index=0)")
    assert eval(repr(spec)) == spec


# --- merging and replacing -------------------------------------------------


def test_merge_from_other_wins_and_self_is_unchanged() -> None:
    base = DeviceSpec.from_string("/job:worker/task:3/gpu:0")
    merged = base.merge_from(DeviceSpec.from_string("/job:ps/cpu:1"))
    assert merged.to_string() == "/job:ps/task:3/device:CPU:1"
    assert base.to_string() == "/job:worker/task:3/device:GPU:0"
    assert base.make_merged_spec("/job:ps/cpu:1") == merged
    assert base.merge_from("/replica:1").to_string() == ("/job:worker/replica:1/task:3/device:GPU:0")
    # Unset fields in the other spec never clear ours.
    assert base.merge_from(DeviceSpec()) == base


def test_merge_star_index_keeps_existing_index() -> None:
    # "*" means "unset", so it cannot clear a concrete index.
    assert DeviceSpec.from_string("/gpu:3").merge_from("/gpu:*").device_index == 3


def test_replace() -> None:
    spec = DeviceSpec.from_string("/job:ps/task:0/device:CPU:0")
    assert spec.replace(device_type="gpu", device_index=1).to_string() == ("/job:ps/task:0/device:GPU:1")
    assert spec.replace(job=None).to_string() == "/task:0/device:CPU:0"
    assert spec.replace(device_index=None).to_string() == "/job:ps/task:0/device:CPU:*"
    assert spec.replace() == spec
    with pytest.raises(TypeError):
        spec.replace(device="GPU")


def test_merge_rejects_non_specs() -> None:
    with pytest.raises(TypeError):
        DeviceSpec().merge_from(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        canonical_name(3)  # type: ignore[arg-type]


# --- value semantics -------------------------------------------------------


@pytest.mark.parametrize("field", ["job", "replica", "task", "device_type", "device_index", "_job", "other"])
def test_immutable(field: str) -> None:
    spec = DeviceSpec.from_string("/job:ps/task:0/cpu:0")
    with pytest.raises(AttributeError):
        setattr(spec, field, 1)
    with pytest.raises(AttributeError):
        delattr(spec, field)
    assert spec.to_string() == "/job:ps/task:0/device:CPU:0"


def test_equality_and_hashing() -> None:
    a = DeviceSpec.from_string("/job:ps/cpu:0")
    b = DeviceSpec(job="ps", device_type="CPU", device_index=0)
    c = DeviceSpec(job="ps", device_type="CPU")
    assert a == b and hash(a) == hash(b)
    assert a != c
    assert a != "/job:ps/device:CPU:0"  # a string is not a spec
    assert len({a, b, c}) == 2
    assert {a: 1}[b] == 1


def test_pickle_and_copy() -> None:
    spec = DeviceSpec.from_string("/job:ps/replica:1/task:2/gpu:*")
    for clone in (
        pickle.loads(pickle.dumps(spec)),
        copy.copy(spec),
        copy.deepcopy(spec),
    ):
        assert clone == spec
        assert clone.device_index is None
        assert clone.to_string() == spec.to_string()


# --- canonical_name / merge_device -----------------------------------------


def test_canonical_name() -> None:
    assert canonical_name(None) == ""
    assert canonical_name("") == ""
    assert canonical_name("/job:ps/cpu:0") == "/job:ps/device:CPU:0"
    assert canonical_name(DeviceSpec(device_type="gpu", device_index=1)) == ("/device:GPU:1")


def test_merge_device_fills_only_missing_fields() -> None:
    merge = merge_device("/job:worker/task:3/gpu:0")
    assert isinstance(merge, MergeDevice)
    assert merge(FakeOp("/job:ps")) == "/job:ps/task:3/device:GPU:0"
    assert merge(FakeOp("")) == "/job:worker/task:3/device:GPU:0"
    assert merge(FakeOp("/cpu:1")) == "/job:worker/task:3/device:CPU:1"
    assert merge_device(merge) is merge
    assert merge_device(DeviceSpec(job="a"))(FakeOp("/task:1")) == "/job:a/task:1"
    assert merge.spec == DeviceSpec.from_string("/job:worker/task:3/gpu:0")
    assert merge_device("").is_null_merge
    assert not merge.is_null_merge
    with pytest.raises(ValueError):
        merge_device("/foo:bar")


def test_tf_merge_device_docstring_example() -> None:
    # tensorflow/python/framework/device.py's merge_device docstring.
    stack: list[Any] = []
    expected = [
        ("/device:GPU:0", "/device:GPU:0"),
        ("/job:worker", "/job:worker/device:GPU:0"),
        ("/device:CPU:0", "/job:worker/device:CPU:0"),
        ("/job:ps", "/job:ps/device:CPU:0"),
    ]
    for entry, device in expected:
        stack.append(merge_device(entry))
        assert apply_device_stack(stack, FakeOp()) == device


# --- apply_device_stack ----------------------------------------------------


def recorder(result: Any, seen: list[str]) -> Callable[[Any], Any]:
    def device_fn(op: Any) -> Any:
        seen.append(op.device)
        return result

    return device_fn


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        ([], ""),
        (["/job:ps/task:0/cpu:0"], "/job:ps/task:0/device:CPU:0"),
        # The seed example: inner scopes win field by field.
        (
            ["/job:ps/task:0/cpu:0", "/job:worker", "/gpu:1", "/task:1"],
            "/job:worker/task:1/device:GPU:1",
        ),
        (["/job:ps/task:0/cpu:0", "/gpu:1"], "/job:ps/task:0/device:GPU:1"),
        (["/job:worker/task:3/gpu:0", "/job:ps"], "/job:ps/task:3/device:GPU:0"),
        (["/job:a/gpu:0", "/gpu:*"], "/job:a/device:GPU:0"),
        (["/gpu:*", "/cpu:1"], "/device:CPU:1"),
        (["/job:ps/cpu:0", None, "/task:2"], "/task:2"),
        (["/job:ps/cpu:0", None], ""),
        (["/job:ps", None, "/job:wk", "/gpu:0"], "/job:wk/device:GPU:0"),
        (["/job:ps", "", DeviceSpec()], "/job:ps"),
        (
            [DeviceSpec(job="ps", task=1), DeviceSpec(device_type="GPU")],
            "/job:ps/task:1/device:GPU:*",
        ),
        ([merge_device("/job:ps"), "/cpu:0"], "/job:ps/device:CPU:0"),
    ],
)
def test_apply_device_stack_strings(entries: list[Any], expected: str) -> None:
    op = FakeOp()
    assert apply_device_stack(entries, op) == expected
    assert op.device == expected


def test_outer_function_sees_inner_result_and_replaces_it() -> None:
    seen: list[str] = []
    stack = [recorder("/job:ps/cpu:0", seen), "/gpu:1"]
    assert apply_device_stack(stack, FakeOp()) == "/job:ps/device:CPU:0"
    assert seen == ["/device:GPU:1"]


def test_inner_function_sees_only_inner_scopes_and_outer_strings_fill_in() -> None:
    seen: list[str] = []
    stack = ["/job:ps", "/job:worker/task:1", recorder("/gpu:0", seen)]
    assert apply_device_stack(stack, FakeOp()) == "/job:worker/task:1/device:GPU:0"
    assert seen == [""]


def test_function_between_strings() -> None:
    seen: list[str] = []
    stack = ["/job:a/replica:0", recorder("/task:3", seen), "/gpu:1"]
    # The function drops the inner "/gpu:1"; the outer scope fills job/replica.
    assert apply_device_stack(stack, FakeOp()) == "/job:a/replica:0/task:3"
    assert seen == ["/device:GPU:1"]


def test_two_functions_innermost_first() -> None:
    seen: list[str] = []
    stack = [recorder("/job:a", seen), recorder("/gpu:0", seen)]
    assert apply_device_stack(stack, FakeOp()) == "/job:a"
    assert seen == ["", "/device:GPU:0"]


def test_function_results_spec_none_and_noncanonical() -> None:
    spec_result = DeviceSpec(job="x", device_type="GPU")
    assert apply_device_stack([lambda op: spec_result], FakeOp()) == "/job:x/device:GPU:*"
    assert apply_device_stack(["/job:ps", lambda op: None], FakeOp()) == "/job:ps"
    assert apply_device_stack([lambda op: None, "/gpu:0"], FakeOp()) == ""
    assert apply_device_stack([lambda op: "/CPU:0/job:a"], FakeOp()) == ("/job:a/device:CPU:0")
    with pytest.raises(ValueError):
        apply_device_stack([lambda op: "/foo:bar"], FakeOp())


def test_function_hidden_by_none_is_not_called() -> None:
    seen: list[str] = []
    assert apply_device_stack([recorder("/cpu:0", seen), None], FakeOp()) == ""
    assert seen == []


def test_function_can_read_other_op_attributes() -> None:
    def matmul_on_gpu(op: Any) -> str:
        return "/device:GPU:0" if op.type == "MatMul" else "/cpu:0"

    stack = ["/job:worker", matmul_on_gpu]
    assert apply_device_stack(stack, FakeOp(type="MatMul")) == "/job:worker/device:GPU:0"
    assert apply_device_stack(stack, FakeOp(type="Add")) == "/job:worker/device:CPU:0"


def test_existing_op_device_wins_like_inner_scope() -> None:
    # Imported ops keep their NodeDef device; scopes only fill the gaps.
    op = FakeOp("/gpu:1")
    assert apply_device_stack(["/job:ps/cpu:0"], op) == "/job:ps/device:GPU:1"
    assert op.device == "/job:ps/device:GPU:1"
    assert apply_device_stack([], FakeOp("/cpu:0")) == "/device:CPU:0"


def test_bad_entry_type() -> None:
    with pytest.raises(TypeError):
        apply_device_stack([3], FakeOp())  # type: ignore[list-item]
    with pytest.raises(ValueError):
        apply_device_stack(["/foo:bar"], FakeOp())


# --- oracle: real TensorFlow -----------------------------------------------


@pytest.fixture(scope="module")
def tf() -> Any:
    return pytest.importorskip("tensorflow")


@pytest.mark.parametrize(("text", "fields", "canonical"), PARSE_CASES)
def test_oracle_parse(tf: Any, text: str, fields: tuple, canonical: str) -> None:
    theirs = tf.compat.v1.DeviceSpec.from_string(text)
    ours = DeviceSpec.from_string(text)
    assert ours.to_string() == theirs.to_string()
    assert (ours.job, ours.replica, ours.task, ours.device_type, ours.device_index) == (
        theirs.job,
        theirs.replica,
        theirs.task,
        theirs.device_type,
        theirs.device_index,
    )


@pytest.mark.parametrize(("text", "message"), BAD_CASES)
def test_oracle_bad_strings(tf: Any, text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        tf.compat.v1.DeviceSpec.from_string(text)
    assert str(info.value) == message


# Entries: a device string, None, ("spec", kwargs) for a DeviceSpec, or
# ("fn", result) for a device function that records the op.device it sees and
# returns `result` (a string, or ("spec", kwargs)).
ORACLE_CASES: list[list[Any]] = [
    ["/job:ps/task:0/cpu:0", "/job:worker", "/gpu:1", "/task:1"],
    ["/job:worker/task:3/gpu:0", "/job:ps"],
    ["/job:ps/replica:2", "/device:CPU:*", "/cpu:3"],
    ["/job:a/gpu:0", "/gpu:*"],
    ["/job:ps/cpu:0", None, "/task:2"],
    ["/job:ps/cpu:0", None],
    ["/job:ps", "", "/task:1"],
    [("spec", {"job": "ps", "task": 1}), ("spec", {"device_type": "GPU"})],
    [
        ("spec", {"job": "ps"}),
        None,
        ("spec", {"device_type": "cpu", "device_index": 2}),
    ],
    [("fn", "/job:ps/cpu:0"), "/gpu:1"],
    [("fn", "/cpu:0")],
    ["/job:worker/task:1", ("fn", "/gpu:0")],
    ["/job:a/replica:0", ("fn", "/task:3"), "/gpu:1"],
    [("fn", "/job:a"), ("fn", "/gpu:0")],
    ["/job:ps", "", ("fn", "/cpu:0")],
    [("fn", "/CPU:0/job:a"), "/task:4"],
    [("fn", ("spec", {"job": "x", "device_type": "GPU"})), "/task:0"],
    ["/job:w", ("fn", "/gpu:0"), None, ("fn", "/task:1"), "/cpu:0"],
    [("fn", ""), "/job:ps/gpu:0"],
]


def _build(entry: Any, make_spec: Callable[..., Any], seen: list[str]) -> Any:
    """Turns an ORACLE_CASES entry into a real scope value for one framework."""
    if isinstance(entry, tuple) and entry[0] == "spec":
        return make_spec(**entry[1])
    if isinstance(entry, tuple) and entry[0] == "fn":
        result = _build(entry[1], make_spec, seen)
        return recorder(result, seen)
    return entry


@pytest.mark.parametrize("case", ORACLE_CASES, ids=str)
def test_oracle_device_scopes(tf: Any, case: list[Any]) -> None:
    tf_seen: list[str] = []
    graph = tf.Graph()
    with graph.as_default(), ExitStack() as scopes:
        for entry in case:
            scope = _build(entry, tf.compat.v1.DeviceSpec, tf_seen)
            scopes.enter_context(graph.device(scope))
        tf_op = tf.compat.v1.no_op(name="probe")

    our_seen: list[str] = []
    entries = [_build(entry, DeviceSpec, our_seen) for entry in case]
    ours = apply_device_stack(entries, FakeOp())

    # TF keeps a device function's result verbatim; we canonicalise it.
    assert ours == canonical_name(tf_op.device)
    assert our_seen == [canonical_name(d) for d in tf_seen]
