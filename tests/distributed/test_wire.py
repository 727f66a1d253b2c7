"""Wire format: tensor, message, error and graph codecs, their validation, and a fuzz test (one process)."""

from __future__ import annotations

import random

import ml_dtypes
import msgpack
import numpy as np
import pytest
import torch
import zmq

import dtf_notebook.compat.v1 as tf
from dtf_notebook import errors
from dtf_notebook.distributed import wire
from dtf_notebook.distributed.wire import WireError, WireLimits
from dtf_notebook.framework import dtypes
from dtf_notebook.framework.tensor_shape import TensorShape

NUMERIC = ["float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool"]


def sample(name: str, shape=(3, 4), seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name == "bool":
        return rng.random(shape) > 0.5
    if name in ("float16", "float32", "float64", "bfloat16"):
        return (rng.standard_normal(shape) * 100).astype(ml_dtypes.bfloat16 if name == "bfloat16" else name)
    info = np.iinfo(name)
    return rng.integers(info.min, info.max, shape, dtype=name, endpoint=True)


def assert_same(a, b, where="value"):
    """Equal values of identical types, recursively (arrays: same dtype, shape and bits)."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        if a.dtype == object:
            assert a.tolist() == b.tolist(), where
        else:
            assert a.tobytes() == b.tobytes(), where
    elif isinstance(a, dict):
        assert list(a) == list(b), where
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.generic | float) and a != a:
        assert b != b, where  # NaN
    else:
        assert a == b, where


def round_trip(value, **kw):
    meta, buffers = wire.encode_tensor(value, **kw)
    return meta, buffers, wire.decode_tensor(meta, [bytes(b) for b in buffers])


# ---- tensor codec ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NUMERIC)
def test_numeric_round_trip_numpy_and_torch(name):
    value = sample(name)
    meta, _, out = round_trip(value)
    assert meta == {"dtype": name, "shape": [3, 4], "nbytes": value.nbytes, "chunks": 1}
    assert_same(value, out)
    assert out.flags.writeable and out.flags.c_contiguous
    t = torch.from_numpy(value.view(np.int16)).view(torch.bfloat16) if name == "bfloat16" else torch.from_numpy(value)
    back = wire.decode_tensor_torch(*wire.encode_tensor(t))
    assert back.dtype == t.dtype and torch.equal(back, t)


def test_strings_scalars_and_empty():
    strings = np.array([[b"", b"a\x00b"], ["h\u00e9llo", b"\xff" * 300]], dtype=object)
    meta, _, out = round_trip(strings)
    assert meta["dtype"] == "string" and meta["shape"] == [2, 2]
    assert out.dtype == object and out.tolist() == [[b"", b"a\x00b"], ["h\u00e9llo".encode(), b"\xff" * 300]]
    assert round_trip(np.array([b"ab", b"c"]))[2].tolist() == [b"ab", b"c"]  # fixed-width numpy bytes
    assert_same(round_trip(b"hi")[2], np.array(b"hi", dtype=object))
    meta, buffers, out = round_trip(np.float32(2.5))
    assert meta["shape"] == [] and out.shape == () and out.dtype == np.float32 and out[()] == 2.5
    for empty in (np.zeros((0, 5), np.float32), np.array([], dtype=object).reshape(0, 3)):
        meta, buffers, out = round_trip(empty)
        assert (meta["nbytes"], meta["chunks"], buffers) == (0, 0, [])
        assert out.shape == empty.shape and out.dtype == empty.dtype
    assert wire.decode_tensor(*wire.encode_tensor(torch.zeros(0, 2))).shape == (0, 2)


def test_large_tensor_travels_in_chunks():
    value = np.random.default_rng(1).random(2 << 20, dtype=np.float32)  # 8 MiB
    meta, buffers, out = round_trip(value)
    assert meta["chunks"] == 8 and [len(b) for b in buffers] == wire.chunk_sizes(8 << 20, 8) == [1 << 20] * 8
    assert_same(value, out)
    meta, buffers = wire.encode_tensor(value[:1001], chunk_bytes=1000)
    assert [len(b) for b in buffers] == wire.chunk_sizes(4004, 5) == [801, 801, 801, 801, 800]
    assert_same(value[:1001], wire.decode_tensor(meta, buffers))


def test_non_contiguous_inputs_and_byte_order():
    t = torch.arange(12.0).reshape(3, 4).t()
    assert not t.is_contiguous()
    assert_same(wire.decode_tensor(*wire.encode_tensor(t)), t.contiguous().numpy())
    a = np.arange(24, dtype=np.int64).reshape(4, 6)[::2, 1::2]
    assert_same(wire.decode_tensor(*wire.encode_tensor(a)), np.ascontiguousarray(a))
    big_endian = np.arange(5, dtype=">f4")
    assert_same(wire.decode_tensor(*wire.encode_tensor(big_endian)), np.arange(5, dtype=np.float32))
    grad = torch.ones(2, requires_grad=True) * 3
    assert wire.decode_tensor(*wire.encode_tensor(grad)).tolist() == [3.0, 3.0]


def test_encode_is_zero_copy_for_contiguous_cpu_values():
    a = np.arange(1 << 18, dtype=np.float32)
    _, buffers = wire.encode_tensor(a)
    assert all(np.shares_memory(np.frombuffer(b, np.uint8), a) for b in buffers)
    t = torch.arange(1 << 18, dtype=torch.bfloat16)
    _, buffers = wire.encode_tensor(t)
    assert np.frombuffer(buffers[0], np.uint8).ctypes.data == t.data_ptr()


def test_decode_is_zero_copy_from_one_writable_frame():
    meta, buffers = wire.encode_tensor(np.arange(1000, dtype=np.int32))
    frame = bytearray(buffers[0])
    out = wire.decode_tensor(meta, [frame])
    assert np.shares_memory(out, np.frombuffer(frame, np.uint8)) and out.flags.writeable
    assert wire.decode_tensor_torch(meta, [frame]).data_ptr() == out.ctypes.data
    copied = wire.decode_tensor(meta, [bytes(frame)])  # read-only frame: the one copy happens here
    assert not np.shares_memory(copied, np.frombuffer(frame, np.uint8)) and copied.flags.writeable
    unaligned = bytearray(4001)
    unaligned[1:] = frame
    aligned_out = wire.decode_tensor(meta, [memoryview(unaligned)[1:]])
    assert aligned_out.flags.aligned and aligned_out.tolist() == list(range(1000))


def test_zmq_frames_received_without_copy_decode_in_place():
    ctx = zmq.Context.instance()
    a, b = ctx.socket(zmq.PAIR), ctx.socket(zmq.PAIR)
    try:
        a.bind("inproc://test-wire-zero-copy")
        b.connect("inproc://test-wire-zero-copy")
        value = np.arange(1 << 16, dtype=np.float64)  # 512 KiB: one frame
        a.send_multipart(wire.encode_message({"step": 1}, [value]), copy=False)
        frames = b.recv_multipart(copy=False)
        header, (out,) = wire.decode_message([f.buffer for f in frames])
        assert header == {"step": 1} and np.array_equal(out, value) and out.flags.writeable
        assert np.shares_memory(out, np.frombuffer(frames[1].buffer, np.uint8))
    finally:
        a.close(0)
        b.close(0)


@pytest.mark.parametrize(
    "value, match",
    [
        (np.zeros(2, np.complex256), "complex256"),
        (np.zeros(2, "datetime64[D]"), "datetime64"),
        ([1.0, 2.0], "list"),
        (np.array([b"a", 3], dtype=object), "element 1 is a int"),
        (torch.zeros(2, dtype=torch.complex32), "complex32"),
    ],
)
def test_encode_rejects_values_that_cannot_travel(value, match):
    with pytest.raises(WireError, match=match):
        wire.encode_tensor(value)


# ---- messages --------------------------------------------------------------------------------------
def test_message_round_trip():
    header = {"id": 3, "method": "RunGraph", "f": 1.5, "none": None, "ok": True, "raw": b"\x00\x01", "l": [1, [2]]}
    tensors = [np.ones((2, 2), np.float32), np.array([b"x"], dtype=object), np.zeros(0, np.int64), torch.ones(3)]
    frames = wire.encode_message(header, tensors, chunk_bytes=8)
    assert len(frames) == 1 + 2 + 2 + 0 + 2
    out_header, arrays = wire.decode_message(frames)
    assert_same(out_header, header)
    assert [a.tolist() for a in arrays] == [[[1, 1], [1, 1]], [b"x"], [], [1.0, 1.0, 1.0]]
    assert wire.decode_message(wire.encode_message({"t": (1, 2)}))[0] == {"t": [1, 2]}  # tuples travel as lists
    header, parts = wire.unpack_message(frames)
    assert [meta["dtype"] for meta, _ in parts] == ["float32", "string", "int64", "float32"]


@pytest.mark.parametrize(
    "header, match",
    [
        ([1], "must be a dict"),
        ({"tensors": 1}, "reserved"),
        ({"x": np.int64(1)}, "int64, which is not plain data"),
        ({"x": object()}, "not plain data"),
        ({1: "a"}, "non-string key 1"),
        ({"x": 2**64}, "not plain data"),
    ],
)
def test_encode_message_rejects_bad_headers(header, match):
    with pytest.raises(WireError, match=match):
        wire.encode_message(header)


def test_encode_message_enforces_limits():
    with pytest.raises(WireError, match="exceeds the limit of 100"):
        wire.encode_message({"x": "y" * 200}, limits=WireLimits(max_header_bytes=100))
    with pytest.raises(WireError, match="5 frames exceeds the limit of 4"):
        wire.encode_message({}, [np.zeros(4, np.uint8)], chunk_bytes=1, limits=WireLimits(max_frames=4))


def frames_of(metas, payloads=(), **header):
    return [msgpack.packb({**header, "tensors": metas}), *payloads]


F32 = {"dtype": "float32", "shape": [2], "nbytes": 8, "chunks": 1}
BAD_MESSAGES = [
    ([], "1 to 65536 frames, got 0"),
    (b"\x80", "must be a list of frames"),
    ([msgpack.packb([1, 2])], "must be a msgpack map, got list"),
    ([b"\xc1"], "not valid msgpack"),
    ([b"\x81\xa1a"], "not valid msgpack"),
    ([msgpack.packb({"tensors": []}) + b"\x00"], "not valid msgpack"),
    ([b"\x81\xa1a\xa2\xff\xfe"], "invalid UTF-8"),
    ([msgpack.packb({"x": msgpack.ExtType(5, b"z"), "tensors": []})], "extension type 5"),
    ([msgpack.packb({"x": msgpack.Timestamp(1), "tensors": []})], "Timestamp, which is not plain data"),
    ([msgpack.packb({1: 2, "tensors": []})], "not valid msgpack"),
    ([msgpack.packb({b"k": 2, "tensors": []})], "non-string key"),
    ([msgpack.packb({"x": [[[[1]]]], "tensors": []})], "nested deeper than 3"),
    ([msgpack.packb({"a": 1})], "'tensors' entry must be a list"),
    (["not bytes"], "not a bytes-like object"),
    (frames_of([F32]), "needs frames up to 2, message has 1"),
    (frames_of([F32], [b"\x00" * 8, b"extra"]), "account for 2 frames, message has 3"),
    (frames_of([{**F32, "chunks": 2}], [b"\x00" * 4, b"\x00" * 5]), "announces 8 bytes but its frames hold 9"),
    (frames_of([{**F32, "dtype": "float8_e5m2"}], [b"\x00" * 8]), "Unknown tensor dtype 'float8_e5m2'"),
    (frames_of([{**F32, "shape": [-2]}], [b"\x00" * 8]), "bad dim -2"),
    (frames_of([{**F32, "shape": [2**40, 0], "nbytes": 0, "chunks": 0}]), "bad dim"),
    (frames_of([{**F32, "shape": [0, 2**20, 2**20], "nbytes": 0, "chunks": 0}]), "too large"),
    (frames_of([{**F32, "shape": [1] * 4}], [b"\x00" * 8]), "at most 3 dims"),
    (frames_of([{**F32, "shape": [3]}], [b"\x00" * 8]), "needs a different size than 8"),
    (frames_of([{**F32, "shape": "2"}], [b"\x00" * 8]), "is not a list"),
    (frames_of([{**F32, "nbytes": True}], [b"\x00" * 8]), "nbytes True"),
    (frames_of([{**F32, "nbytes": 2**40}], [b"\x00" * 8]), "nbytes"),
    (frames_of([{**F32, "chunks": 0}], []), "cannot travel in 0 frames"),
    (frames_of([{**F32, "chunks": 9}], [b"\x00"] * 8), "chunks 9"),
    (frames_of([{**F32, "extra": 1}], [b"\x00" * 8]), "must be a map with keys"),
    (frames_of([[1]], [b"\x00" * 8]), "must be a map with keys"),
    (frames_of([{"dtype": "bool", "shape": [2], "nbytes": 2, "chunks": 1}], [b"\x01\x02"]), "other than 0 and 1"),
    (frames_of([{"dtype": "string", "shape": [2], "nbytes": 8, "chunks": 1}], [b"\x00" * 8]), "cannot fit"),
    (
        frames_of([{"dtype": "string", "shape": [2], "nbytes": 17, "chunks": 1}], [b"\x05" + b"\x00" * 15 + b"a"]),
        "do not add up",
    ),
    (
        frames_of([{"dtype": "string", "shape": [2], "nbytes": 16, "chunks": 1}], [b"\x00" * 7 + b"\x80" * 9]),
        "do not add up",
    ),
    (frames_of([{"dtype": "string", "shape": [0], "nbytes": 1, "chunks": 1}], [b"a"]), "do not add up"),
]


@pytest.mark.parametrize("frames, match", BAD_MESSAGES)
def test_decode_message_rejects_malformed_messages(frames, match):
    limits = WireLimits(max_tensor_bytes=1 << 30, max_rank=3, max_depth=3)
    with pytest.raises(WireError, match=match) as info:
        wire.decode_message(frames, limits)
    assert isinstance(info.value, errors.InvalidArgumentError) and info.value.error_code == errors.INVALID_ARGUMENT


def test_decode_message_limits():
    with pytest.raises(WireError, match="Header of 16 bytes exceeds the limit of 12"):
        wire.decode_message(wire.encode_message({"a": "bcd"}), WireLimits(max_header_bytes=12))
    with pytest.raises(WireError, match="1 to 2 frames, got 3"):
        wire.decode_message(wire.encode_message({}, [np.zeros(2)], chunk_bytes=8), WireLimits(max_frames=2))
    with pytest.raises(WireError, match="Tensor 1: Tensor nbytes 400"):
        wire.decode_message(wire.encode_message({}, [np.zeros(2), np.zeros(50)]), WireLimits(max_tensor_bytes=399))


# ---- errors ----------------------------------------------------------------------------------------
def test_error_round_trip():
    for code in range(1, 17):
        original = errors.error_from_code(code, f"failure {code}")
        back = wire.decode_error(
            wire.decode_message(wire.encode_message({"error": wire.encode_error(original)}))[0]["error"]
        )
        assert type(back) is type(original) and back.message == f"failure {code}" and back.error_code == code
    assert wire.encode_error(WireError(None, None, "bad")) == {"code": errors.INVALID_ARGUMENT, "message": "bad"}
    assert wire.encode_error(RuntimeError("boom")) == {"code": errors.UNKNOWN, "message": "RuntimeError: boom"}
    unknown = wire.decode_error({"code": 42, "message": "odd"})
    assert type(unknown) is errors.UnknownError and unknown.message == "odd (error code 42)"
    for bad in ({"code": "3", "message": "x"}, {"code": 3}, {"code": True, "message": "x"}, [3, "x"]):
        with pytest.raises(WireError, match="encoded error"):
            wire.decode_error(bad)


# ---- graph defs ------------------------------------------------------------------------------------
def build_model_graph() -> tf.Graph:
    """An MLP trained by Adam, with variable scopes, strings, placeholders with None dims and colocation."""
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        tf.placeholder(tf.string, None, name="any_strings")
        tf.constant([b"a", b"", b"\xff"], name="strings")
        tf.constant(np.arange(6, dtype=ml_dtypes.bfloat16).reshape(2, 3), name="bf16")
        tf.constant(np.zeros(1 << 18, np.float32), name="big")  # 1 MiB: must travel as raw frames
        with tf.variable_scope("layer"):
            w = tf.get_variable("w", [4, 8], initializer=tf.glorot_uniform_initializer(seed=1))
            b = tf.get_variable("b", [8], initializer=tf.zeros_initializer())
        with tf.device("/job:worker/task:0"):
            h = tf.nn.relu(tf.matmul(x, w) + b)
        with tf.variable_scope("out"):
            w2 = tf.Variable(np.ones((8, 3), np.float32), name="w")
        logits = tf.matmul(h, w2)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        tf.train.AdamOptimizer(0.01).minimize(loss, global_step=tf.train.get_or_create_global_step())
        tf.global_variables_initializer()
        img = tf.placeholder(tf.float32, [None, 8, 8, 1], name="img")
        conv = tf.nn.conv2d(img, tf.ones([3, 3, 1, 2]), strides=[1, 1, 1, 1], padding="SAME")
        tf.squeeze(tf.reshape(conv, [-1, 128])[:, 1:5], axis=[0])
    return g


def test_graph_def_round_trip_is_exact():
    graph_def = build_model_graph().as_graph_def_dict()
    attrs = [n["attr"] for n in graph_def["node"]]
    assert any("_class" in a for a in attrs) and any(a.get("shape") == (None, 4) for a in attrs)
    assert any(n["device"] for n in graph_def["node"])
    plain, tensors = wire.encode_graph_def(graph_def)
    frames = wire.encode_message({"graph": plain}, tensors)
    assert len(frames[0]) < 20_000  # the 1 MiB constant is a raw frame, not header bytes
    header, arrays = wire.decode_message(frames)
    assert_same(wire.decode_graph_def(header["graph"], arrays), graph_def)


def test_every_kind_of_attr_value_round_trips():
    attrs = {
        "i": -(2**63),
        "u": 2**64 - 1,
        "f": float("inf"),
        "nan": float("nan"),
        "s": "text",
        "b": b"\x00raw",
        "none": None,
        "flag": False,
        "shape": (None, 784),
        "unknown_rank": None,
        "nested": [(1, None), [2, (3,)], []],
        "empty_tuple": (),
        "dtype": dtypes.bfloat16,
        "dtypes": [dtypes.int64, dtypes.string],
        "tensor_shape": TensorShape([None, 3]),
        "unknown_shape": TensorShape(None),
        "scalar": np.float32(1.5),
        "int_scalar": np.int64(-3),
        "array": np.array([[1, 2]], np.int8),
        "strings": np.array([b"a", b"bc"], dtype=object),
        "bf16": np.ones(2, ml_dtypes.bfloat16),
        "map": {"k": (1, 2), "m": {"deep": [dtypes.float32]}},
    }
    graph_def = {"node": [{"name": "n", "op": "NoOp", "input": ["^a"], "device": "/job:ps", "attr": attrs}]}
    plain, tensors = wire.encode_graph_def(graph_def)
    header, arrays = wire.decode_message(wire.encode_message({"g": plain}, tensors))
    out = wire.decode_graph_def(header["g"], arrays)
    assert_same(out, graph_def)
    assert out["node"][0]["attr"]["dtypes"][1] is dtypes.string
    assert out["node"][0]["attr"]["tensor_shape"] == TensorShape([None, 3])  # TensorShape compares by dims


def test_graph_codec_appends_to_a_tensor_list():
    feeds = [np.zeros(2)]
    graph_def = {"node": [{"name": "c", "op": "Const", "attr": {"value": np.ones(3)}}]}
    plain, tensors = wire.encode_graph_def(graph_def, feeds)
    assert tensors is feeds and len(feeds) == 2 and plain["node"][0]["attr"]["value"] == {"__tensor__": 1}
    assert wire.decode_graph_def(plain, feeds)["node"][0]["attr"]["value"] is feeds[1]


@pytest.mark.parametrize(
    "graph_def, match",
    [
        ({"nodes": []}, "'node' list"),
        ({"node": [{"op": "NoOp"}]}, "string 'name'"),
        ({"node": [{"name": "n", "op": "NoOp", "extra": 1}]}, "unknown keys"),
        ({"node": [{"name": "n", "op": 3}]}, "string 'op'"),
        ({"node": [{"name": "n", "op": "NoOp", "input": [1]}]}, "list of strings"),
        ({"node": [{"name": "n", "op": "NoOp", "attr": {"x": object()}}]}, "attr 'x' of node 'n'.*object"),
        ({"node": [{"name": "n", "op": "NoOp", "attr": {"x": {1, 2}}}]}, "type set"),
        ({"node": [{"name": "n", "op": "NoOp", "attr": {"x": 2**64}}]}, "does not fit in 64 bits"),
        ({"node": [{"name": "n", "op": "NoOp", "attr": {3: 1}}]}, "must be strings"),
    ],
)
def test_encode_graph_def_rejects_bad_graph_defs(graph_def, match):
    with pytest.raises(WireError, match=match):
        wire.encode_graph_def(graph_def)


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def node(**attr):
    return {"node": [{"name": "n", "op": "NoOp", "input": [], "device": "", "attr": attr}]}


@pytest.mark.parametrize(
    "plain, match",
    [
        ([], "'node' list"),
        ({"node": [{"name": "n"}]}, "must be a map with keys"),
        ({"node": [{"name": "n", "op": "NoOp", "input": "a", "device": "", "attr": {}}]}, "list of strings"),
        ({"node": [{"name": "n", "op": "NoOp", "input": [], "device": 1, "attr": {}}]}, "string 'op' and 'device'"),
        (node(x={"__nope__": 1}), "Unknown or malformed tag '__nope__'"),
        (node(x={"__tuple__": [], "__dtype__": "float32"}), "one-key tag"),
        (node(x={"__tuple__": 3}), "malformed tag"),
        (node(x={"__dtype__": "float8_e5m2"}), "Unknown dtype 'float8_e5m2' in attr 'x' of node 'n'"),
        (node(x={"__tensor__": 1}), "index 1 .* out of range"),
        (node(x={"__tensor__": -1}), "out of range"),
        (node(x={"__scalar__": 0}), "not 0-d"),
        (node(x={"__shape__": [-1]}), "Bad TensorShape"),
        (node(x={"__dict__": {"k": {"bad": 1}}}), "malformed tag 'bad'"),
        (node(x=nested(70)), "deeper than 64"),
    ],
)
def test_decode_graph_def_rejects_malformed_data(plain, match):
    with pytest.raises(WireError, match=match):
        wire.decode_graph_def(plain, [np.zeros(2)])


# ---- fuzzing ---------------------------------------------------------------------------------------
def valid_messages() -> list[list[bytes]]:
    nodes = [n for n in build_model_graph().as_graph_def_dict()["node"] if n["name"] != "big"]
    plain, tensors = wire.encode_graph_def({"node": nodes[::3]})
    samples = [
        ({"id": 1, "method": "Ping"}, []),
        ({"id": 2, "nested": {"a": [1, 2.5, None, b"x", {"b": "c"}]}}, [sample("float32"), np.zeros(0, np.int8)]),
        ({"id": 3}, [np.array([b"ab", b"", b"cde"], dtype=object), sample("bool", (5,)), sample("bfloat16", ())]),
        ({"graph": plain}, tensors),
    ]
    return [[bytes(f) for f in wire.encode_message(h, t, chunk_bytes=16)] for h, t in samples]


JUNK = [
    None,
    3,
    -1,
    99,
    "s",
    "float32",
    b"b",
    [],
    [{}],
    [1, "a"],
    {"dtype": []},
    {"__tensor__": 7},
    {"__tuple__": 1},
    {"__dtype__": "nope"},
    {"__scalar__": 0},
    {"__shape__": [None, -3]},
    {"__dict__": {"k": {}}},
    {"a": 1, "b": 2},
]


def mutate(rng: random.Random, messages: list[list[bytes]]) -> list:
    frames = list(rng.choice(messages))
    kind = rng.randrange(8)
    if kind == 0:  # random bytes altogether
        prefix = rng.choice([b"", b"\x81", b"\x82\xa7tensors\x91", b"\x81\xa7tensors\x91\x84"])
        return [prefix + rng.randbytes(rng.randrange(64)) for _ in range(rng.randrange(1, 4))]
    i = rng.randrange(len(frames))
    if kind == 1:  # truncate a frame
        frames[i] = frames[i][: rng.randrange(len(frames[i]) + 1)]
    elif kind == 2:  # flip bytes
        data = bytearray(frames[i])
        for _ in range(rng.randrange(1, 4)):
            if data:
                data[rng.randrange(len(data))] = rng.randrange(256)
        frames[i] = bytes(data)
    elif kind == 3:  # drop, duplicate or truncate the frame list
        frames = rng.choice([frames[:i] + frames[i + 1 :], frames + [frames[i]], frames[:i]])
    elif kind == 4:  # make one meta field wrong in a well-formed header
        header = msgpack.unpackb(frames[0])
        if header["tensors"]:
            meta = rng.choice(header["tensors"])
            key = rng.choice(sorted(meta))
            meta[key] = rng.choice([-1, 0, 1, 2**63, 2**40, True, None, "float32", "string", [], [2**31] * 3, [-5]])
            frames[0] = msgpack.packb(header)
    elif kind == 5:  # put junk into the header, or into one node of the graph it carries
        header = msgpack.unpackb(frames[0])
        junk = rng.choice(JUNK)
        if "graph" in header and rng.random() < 0.8:
            target = rng.choice(header["graph"]["node"])
            target = rng.choice([target, target["attr"]])
            target[rng.choice([*target, "__tensor__"])] = junk
        else:
            header[rng.choice(["tensors", "x"])] = junk
        frames[0] = msgpack.packb(header)
    elif kind == 6:  # non-bytes frames
        frames[i] = rng.choice([None, 5, "text", object(), [1]])
    else:  # shuffle
        rng.shuffle(frames)
    return frames


def test_fuzzed_messages_only_ever_raise_wire_error():
    rng = random.Random(20240611)
    messages = valid_messages()
    limits = [wire.DEFAULT_LIMITS, WireLimits(max_header_bytes=16384, max_tensor_bytes=1 << 16, max_frames=64)]
    outcomes = {"ok": 0, "rejected": 0}
    for n in range(2000):
        frames = mutate(rng, messages)
        try:
            header, arrays = wire.decode_message(frames, limits[n % 2])
            if "graph" in header:
                wire.decode_graph_def(header["graph"], arrays)
            outcomes["ok"] += 1
        except WireError:
            outcomes["rejected"] += 1
    assert outcomes["rejected"] > 1000 and outcomes["ok"] > 50, outcomes


def test_check_meta_fast_path_agrees_with_the_detailed_checks():
    """Every meta gets from check_meta what the detailed checks give it: the same result or the same error."""
    from dtf_notebook.distributed.tensor_codec import _check_meta_slowly, check_meta

    good = {"dtype": "float32", "shape": [341, 20], "nbytes": 341 * 20 * 4, "chunks": 1}
    variants = [good, {**good, "chunks": 2}, {**good, "dtype": "bool", "nbytes": 341 * 20}]
    for key, values in {
        "dtype": ["float64", "string", "complex64", 3, None, b"float32"],
        "shape": [[], [0, 5], [341, 20.0], [341, True], [-1, -6820], [341], (341, 20), [1 << 40, 1]],
        "nbytes": [0, 27279, 27281, True, 27280.0, -27280, 1 << 40],
        "chunks": [0, True, 27281, 1 << 20, -1],
    }.items():
        variants += [{**good, key: value} for value in values]
    variants += [{**good, "extra": 1}, {k: v for k, v in good.items() if k != "chunks"}, [good], None]
    limits = [wire.DEFAULT_LIMITS, WireLimits(max_rank=1), WireLimits(max_tensor_bytes=1000), WireLimits(max_frames=1)]
    for meta in variants:
        for limit in limits:
            try:
                expected = ("ok", _check_meta_slowly(meta, limit))
            except WireError as e:
                expected = ("error", e.message)
            try:
                got = ("ok", check_meta(meta, limit))
            except WireError as e:
                got = ("error", e.message)
            assert got == expected, (meta, limit)
            if got[0] == "ok":
                assert [type(d) for d in got[1][1]] == [int] * len(got[1][1])
