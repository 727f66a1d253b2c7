"""TF1's graph-API utilities against real TensorFlow: tensor protos (bytes both ways), static values, predicates,
gradient registration and override maps, init_scope, import_graph_def, dtypes and constants."""

from __future__ import annotations

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from tests.ops.sparse.support import real_tf, same

oracle = pytest.mark.tf_oracle


# ---- TensorProto -------------------------------------------------------------------------------------------------
PROTO_VALUES = [
    (3.0, None, None),
    ([1, 2, 3], None, None),
    ([[1.5, 2.5]], "float64", None),
    ([7], "int32", [2, 2]),
    (np.arange(6, dtype=np.int64).reshape(2, 3), None, None),
    ([True, False], None, None),
    (["a", b"bc"], None, None),
    ([1 + 2j, 3j], "complex64", None),
    (np.array([0.5, -1], np.float16), None, None),
    ([5], "uint32", None),
    ([2**40], None, None),
    (np.zeros((0, 3), np.float32), None, None),
    ([(4,), (5,)], "qint8", None),
]


@oracle
@pytest.mark.parametrize("value,dtype,shape", PROTO_VALUES)
def test_make_tensor_proto_bytes_equal_tensorflow(value, dtype, shape):
    tf1 = real_tf()
    theirs = tf1.make_tensor_proto(value, dtype=dtype, shape=shape)
    mine = tf.make_tensor_proto(value, dtype=dtype, shape=shape)
    assert mine.SerializeToString() == theirs.SerializeToString()
    parsed_by_tf = tf1.make_ndarray(type(theirs).FromString(mine.SerializeToString()))
    mine_back = tf.make_ndarray(mine)
    assert mine_back.dtype == parsed_by_tf.dtype
    np.testing.assert_array_equal(mine_back, parsed_by_tf)
    np.testing.assert_array_equal(tf.make_ndarray(theirs), parsed_by_tf)


@oracle
def test_make_tensor_proto_errors_like_tensorflow():
    tf1 = real_tf()
    for args, kwargs in [
        ((None,), {}),
        (([1, 2, 3],), {"shape": [2]}),
        (([1.5],), {"dtype": "int32"}),
        (([[1, 2], [3]],), {}),
        (([1, 2],), {"shape": [3], "verify_shape": True}),
    ]:
        kinds = []
        for m in (tf1, tf):
            with pytest.raises((TypeError, ValueError)) as info:
                m.make_tensor_proto(*args, **kwargs)
            kinds.append(info.type)
        assert kinds[0] == kinds[1], (args, kwargs)


# ---- static values and predicates --------------------------------------------------------------------------------
@oracle
def test_get_static_value_matches_tensorflow():
    tf1 = real_tf()

    def values(m):
        with m.Graph().as_default():
            p = m.placeholder(m.float32, [None, 3])
            q = m.placeholder(m.float32, [2, 3])
            cases = [
                m.shape(q),
                m.size(q),
                m.rank(p),
                m.shape(p),
                m.cast(m.shape(q), m.float32),
                m.range(1, 7, 2),
                m.concat([m.shape(q), [4]], 0),
                m.stack([m.shape(q)[0], 5]),
                m.fill([2, 2], 7),
                m.equal(m.constant([1, 2]), m.constant([1, 3])),
                m.identity(m.constant("s")),
                m.stop_gradient(m.constant(1.5)),
                p * 2.0,
            ]
            out = [m.get_static_value(t) for t in cases] + [m.get_static_value(4), m.get_static_value([1.0])]
            return out

    for a, b in zip(values(tf), values(tf1)):
        if b is None:
            assert a is None
        else:
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
            assert np.asarray(a).dtype == np.asarray(b).dtype


@oracle
def test_predicates_and_dimensions_match_tensorflow():
    tf1 = real_tf()

    def answers(m):
        with m.Graph().as_default():
            items = [m.constant(1.0), m.Variable(1.0), m.SparseTensor([[0]], [1.0], [2]), 1.0, np.ones(2)]
            items.append(m.IndexedSlices(m.constant([1.0]), m.constant([0])))
            return (
                [m.is_tensor(x) for x in items],
                [m.is_symbolic_tensor(x) for x in items[:4]],
                m.dimension_value(m.Dimension(3)),
                m.dimension_value(None),
                m.dimension_at_index(m.TensorShape([4, None]), 0).value,
                m.dimension_at_index(m.TensorShape(None), 2).value,
            )

    assert answers(tf) == answers(tf1)


@oracle
def test_convert_to_tensor_or_sparse_and_indexed():
    same(lambda m: m.convert_to_tensor_or_sparse_tensor(m.SparseTensorValue([[0]], [1.0], [2])))
    same(lambda m: m.convert_to_tensor_or_sparse_tensor([1, 2]))
    same(lambda m: m.convert_to_tensor_or_indexed_slices(m.constant([1.0])))
    with tf.Graph().as_default():
        rows = tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0]))
        assert tf.convert_to_tensor_or_indexed_slices(rows) is rows
        with pytest.raises(RuntimeError):
            tf.convert_to_tensor_or_sparse_tensor(tf.SparseTensor([[0]], [1.0], [2]), dtype=tf.int32)


# ---- gradient registration --------------------------------------------------------------------------------------
_SQUARE_GRAD_USES = {}


@oracle
def test_register_gradient_and_override_map_match_tensorflow():
    def build(m):
        name = f"TestTripleGrad_{m.__name__.replace('.', '_')}"
        if name not in _SQUARE_GRAD_USES:
            _SQUARE_GRAD_USES[name] = m.RegisterGradient(name)(lambda op, grad: [3.0 * grad])
        x = m.constant([1.0, 2.0])
        g = m.get_default_graph()
        with g.gradient_override_map({"Square": name}):
            y = m.square(x)
        z = m.square(x)
        return [y, m.gradients(y, x)[0], m.gradients(z, x)[0]]

    same(build)


def test_gradient_override_attr_and_errors():
    with tf.Graph().as_default() as g:
        with g.gradient_override_map({"Identity": "NoSuchGradientAnywhere"}):
            y = tf.identity(tf.constant(1.0))
        assert y.op.get_attr("_gradient_op_type") == "NoSuchGradientAnywhere"
        with pytest.raises(LookupError, match="NoSuchGradientAnywhere"):
            tf.gradients(y, y.op.inputs[0])
        with pytest.raises(TypeError):
            with g.gradient_override_map({"Identity": 3}):
                pass
    with pytest.raises(KeyError, match="Registering two gradient"):
        tf.RegisterGradient("MatMul")(lambda op, grad: None)


@oracle
def test_no_gradient_registration_matches_tensorflow():
    tf1 = real_tf()
    for m in (tf1, tf):
        m.no_gradient(f"TestNoGradientOp_{m.__name__.replace('.', '_')}")
        with pytest.raises(KeyError):
            m.NotDifferentiable(f"TestNoGradientOp_{m.__name__.replace('.', '_')}")
        with pytest.raises(TypeError):
            m.no_gradient(3)
    assert tf.NoGradient is tf.no_gradient


# ---- scopes ------------------------------------------------------------------------------------------------------
@oracle
def test_init_scope_and_op_scope_match_tensorflow():
    def build(m):
        a = m.constant(1.0, name="a")
        with m.name_scope("outer"), m.control_dependencies([a]):
            with m.init_scope():
                b = m.constant(2.0, name="b")
            c = m.constant(3.0, name="c")
        with m.op_scope([a], None, "fallback") as scope:
            d = m.constant(4.0, name="d")
        return [
            b.op.name,
            [x.name for x in b.op.control_inputs],
            [x.name for x in c.op.control_inputs],
            scope,
            d.op.name,
        ]

    results = []
    for m in (real_tf(), tf):
        with m.Graph().as_default():
            results.append(build(m))
    assert results[0] == results[1]


# ---- import_graph_def --------------------------------------------------------------------------------------------
def _source_graph(m):
    with m.Graph().as_default() as g:
        x = m.placeholder(m.float32, [None, 2], name="x")
        w = m.constant([[1.0], [2.0]], name="w")
        y = m.matmul(x, w, name="y")
        m.identity(m.subtract(y, -1.0), name="out")
    return g


@oracle
def test_import_graph_def_matches_tensorflow():
    tf1 = real_tf()

    def run(m, graph_def):
        with m.Graph().as_default() as g:
            with m.name_scope("outer"):
                new_x = m.constant([[1.0, 1.0], [0.5, 2.0]], name="new_x")
                out, y_op = m.import_graph_def(graph_def, {"x:0": new_x}, ["out:0", "y"], name="model")
            m.import_graph_def(graph_def, {"x": new_x})
            m.import_graph_def(graph_def, {"x:0": new_x})
            names = sorted(op.name for op in g.get_operations())
            with m.Session() as sess:
                return out.name, y_op.name, names, sess.run(out)

    theirs = run(tf1, _source_graph(tf1).as_graph_def())
    mine = run(tf, _source_graph(tf).as_graph_def())
    assert mine[:3] == theirs[:3]
    np.testing.assert_allclose(mine[3], theirs[3])


@oracle
def test_import_graph_def_from_protos():
    """A GraphDef proto -- this package's class, or TF's own -- imports here."""
    tf1 = real_tf()

    ours = tf.GraphDef.FromString(_source_graph(tf).as_graph_def().SerializeToString())
    theirs = _source_graph(tf1).as_graph_def()
    for graph_def in (ours, theirs):
        with tf.Graph().as_default(), tf.Session() as sess:
            (out,) = tf.import_graph_def(graph_def, {"x:0": tf.constant([[1.0, 2.0]])}, ["out:0"], name="")
            assert out.name == "out:0"
            np.testing.assert_allclose(sess.run(out), [[6.0]])


def test_import_graph_def_errors():
    graph_def = _source_graph(tf).as_graph_def()
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="not found in graph_def"):
            tf.import_graph_def(graph_def, {"nope:0": tf.constant(1.0)})
        with pytest.raises(ValueError, match="type"):
            tf.import_graph_def(graph_def, {"x:0": tf.constant([[1, 2]])})
        with pytest.raises(ValueError, match="return_element"):
            tf.import_graph_def(graph_def, return_elements=["missing:0"])
        with pytest.raises(TypeError):
            tf.import_graph_def(42)


@oracle
def test_graph_protos_interoperate_with_tensorflow():
    tf1 = real_tf()
    node = tf.NodeDef(name="c", op="Const")
    node.attr["dtype"].type = 1
    node.attr["value"].tensor.CopyFrom(tf.make_tensor_proto([1.0, 2.0]))
    graph = tf.GraphDef(node=[node])
    meta = tf.MetaGraphDef(graph_def=graph)
    meta.signature_def["serve"].outputs["y"].CopyFrom(tf.TensorInfo(name="c:0", dtype=1))
    theirs = tf1.MetaGraphDef.FromString(meta.SerializeToString())
    assert theirs.signature_def["serve"].outputs["y"].name == "c:0"
    np.testing.assert_array_equal(tf1.make_ndarray(theirs.graph_def.node[0].attr["value"].tensor), [1.0, 2.0])
    assert tf.MetaGraphDef.FromString(theirs.SerializeToString()) == meta
    assert (
        tf.AttrValue(list=tf.AttrValue.ListValue(i=[1])).SerializeToString()
        == tf1.AttrValue(list=tf1.AttrValue.ListValue(i=[1])).SerializeToString()
    )
    assert tf.NameAttrList(name="f").SerializeToString() == tf1.NameAttrList(name="f").SerializeToString()


# ---- dtypes and constants ----------------------------------------------------------------------------------------
@oracle
def test_new_dtypes_match_tensorflow():
    tf1 = real_tf()
    names = "uint16 uint32 uint64 complex64 complex128 qint8 quint8 qint16 quint16 qint32 variant".split()
    for name in names:
        mine, theirs = getattr(tf, name), getattr(tf1, name)
        assert mine.name == theirs.name and mine.as_datatype_enum == theirs.as_datatype_enum
        for prop in ("is_complex", "is_quantized", "is_integer", "is_floating", "is_unsigned", "size"):
            assert getattr(mine, prop) == getattr(theirs, prop), (name, prop)
        if theirs.is_numpy_compatible:
            assert np.dtype(mine.as_numpy_dtype) == np.dtype(theirs.as_numpy_dtype), name
        assert tf.DType(theirs.as_datatype_enum) is mine
        assert tf.as_dtype(name) is mine
    assert tf.complex64.real_dtype is tf.float32 and tf.complex128.real_dtype is tf.float64
    assert {d.name for d in tf.QUANTIZED_DTYPES} == {d.name for d in tf1.QUANTIZED_DTYPES if "_ref" not in d.name}
    with pytest.raises(TypeError):
        tf.DType(99)


@oracle
def test_new_dtypes_through_sessions():
    same(lambda m: [m.constant([1, 2], m.uint32), m.cast(m.constant([1.5, 2.5]), m.uint16), m.constant([1 + 2j])])
    same(lambda m: m.cast(m.constant([2**40], m.uint64), m.float64))
    same(lambda m: m.identity(m.placeholder(m.uint64)), feed=lambda m: {"Placeholder:0": [7, 9]})


def test_version_constants():
    tf1 = real_tf()
    for name in (
        "VERSION",
        "GIT_VERSION",
        "COMPILER_VERSION",
        "CXX11_ABI_FLAG",
        "CXX_VERSION",
        "MONOLITHIC_BUILD",
        "GRAPH_DEF_VERSION",
        "GRAPH_DEF_VERSION_MIN_CONSUMER",
        "GRAPH_DEF_VERSION_MIN_PRODUCER",
    ):
        assert type(getattr(tf, name)) is type(getattr(tf1, name)), name
    assert tf.VERSION.startswith("1.15")
    assert tf.get_default_graph().as_graph_def().versions.producer == tf.GRAPH_DEF_VERSION


@oracle
def test_enums_and_aliases():
    tf1 = real_tf()
    for name in ("UnconnectedGradients", "VariableAggregation", "VariableSynchronization"):
        assert [m.name for m in getattr(tf, name)] == [m.name for m in getattr(tf1, name)]
        assert [m.value for m in getattr(tf, name)] == [m.value for m in getattr(tf1, name)]
    same(lambda m: m.gradients(m.constant(1.0), [m.constant(2.0)], unconnected_gradients=m.UnconnectedGradients.ZERO))
    assert tf.OpError is tf.errors.OpError
    with tf.Graph().as_default():
        a = tf.Variable(1.0)
        assert tf.initialize_variables([a]).type == "NoOp"
        tf.add_to_collection(tf.GraphKeys.TABLE_INITIALIZERS, tf.no_op(name="t"))
        assert [op.name for op in tf.tables_initializer().control_inputs] == ["t"]
        assert tf.initialize_all_tables(name="x").name == "x"
    for bad in ("float32", 99):
        kinds = []
        for m in (tf1, tf):
            with pytest.raises((TypeError, ValueError)) as info:
                m.DType(bad)
            kinds.append(info.type)
        assert kinds[0] == kinds[1]
