"""TF1's RNN API against real TensorFlow: cells (``tf.nn.rnn_cell``), wrappers, ``dynamic_rnn``,
``bidirectional_dynamic_rnn``, ``raw_rnn``, ``static_rnn`` and ``static_bidirectional_rnn``.

Each case is built in both libraries; TF's initial variable values are loaded into ours, then variable names,
output/state shapes and values, and gradients with respect to the inputs and every variable are compared.
"""

from __future__ import annotations

import types
import warnings

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.framework import nest

pytestmark = [pytest.mark.tf_oracle, pytest.mark.filterwarnings("ignore:.*is deprecated")]


@pytest.fixture(scope="module")
def real():
    """Real TF1 with its RNN modules (``tf.compat.v1.nn.rnn_cell`` itself needs Keras 2)."""
    tf_real = pytest.importorskip("tensorflow")
    tf1 = tf_real.compat.v1
    tf1.disable_eager_execution()
    tf1.disable_control_flow_v2()
    tf1.logging.set_verbosity(tf1.logging.ERROR)
    warnings.filterwarnings("ignore", message=".*is deprecated.*")
    from tensorflow.python.keras.layers.legacy_rnn import rnn_cell_impl
    from tensorflow.python.ops import rnn

    return types.SimpleNamespace(tf=tf1, cells=rnn_cell_impl, rnn=rnn)


def _here():
    return types.SimpleNamespace(tf=tf, cells=tf.nn.rnn_cell, rnn=tf.nn)


def _rand(*shape, seed=0):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32)


def _run_both(real, build, feeds):
    """Builds ``build(m, *placeholders) -> (outputs, state)`` in both libraries; returns both runs' results.

    The loss is the sum of every output and state tensor times a fixed cosine weight, so that each gets a
    distinct gradient.
    """
    results, values = [], None
    for m in (real, _here()):
        t = m.tf
        with t.Graph().as_default():
            t.set_random_seed(3)
            phs = [t.placeholder(t.float32, x.shape) for x in feeds]
            outputs, state = build(m, *phs)
            flat = [x for x in nest.flatten([outputs, state]) if x is not None]
            weights = [t.reshape(t.cos(t.cast(t.range(t.size(x)), t.float32)), t.shape(x)) for x in flat]
            loss = t.add_n([t.reduce_sum(x * w) for x, w in zip(flat, weights)])
            variables = t.global_variables()
            grads = t.gradients(loss, phs + t.trainable_variables())
            info = {
                "names": [v.name for v in variables],
                "trainable": [v.name for v in t.trainable_variables()],
                "shapes": [x.shape.as_list() for x in flat],
            }
            with t.Session() as sess:
                sess.run(t.global_variables_initializer())
                if values is None:
                    values = sess.run(variables)
                else:
                    for v, value in zip(variables, values):
                        v.load(value, sess)
                feed = dict(zip(phs, feeds))
                info["values"] = sess.run(flat, feed)
                info["grads"] = sess.run([g for g in grads if g is not None], feed)
                info["grad_count"] = len([g for g in grads if g is not None])
            results.append(info)
    expected, got = results
    for key in ("names", "trainable", "shapes", "grad_count"):
        assert got[key] == expected[key], key
    for key in ("values", "grads"):
        for a, b in zip(got[key], expected[key]):
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5, err_msg=key)
    return expected, got


_CELLS = {
    "basic_rnn": lambda c: c.BasicRNNCell(4),
    "basic_rnn_relu": lambda c: c.BasicRNNCell(3, activation="relu"),
    "gru": lambda c: c.GRUCell(4),
    "basic_lstm": lambda c: c.BasicLSTMCell(4, forget_bias=0.5),
    "basic_lstm_concat": lambda c: c.BasicLSTMCell(3, state_is_tuple=False),
    "lstm": lambda c: c.LSTMCell(4),
    "lstm_peep_clip_proj": lambda c: c.LSTMCell(
        5, use_peepholes=True, cell_clip=0.3, num_proj=3, proj_clip=0.2, forget_bias=0.0
    ),
    "lstm_concat_proj": lambda c: c.LSTMCell(4, num_proj=2, state_is_tuple=False),
    "multi": lambda c: c.MultiRNNCell([c.GRUCell(3), c.BasicLSTMCell(4), c.LSTMCell(2, use_peepholes=True)]),
    "multi_concat": lambda c: c.MultiRNNCell([c.BasicRNNCell(3), c.GRUCell(2)], state_is_tuple=False),
}


@pytest.mark.parametrize("cell_name", sorted(_CELLS))
def test_dynamic_rnn_cells_values_gradients_names(real, cell_name):
    x = _rand(3, 6, 2, seed=1)

    def build(m, x):
        return m.rnn.dynamic_rnn(_CELLS[cell_name](m.cells), x, dtype=m.tf.float32)

    _run_both(real, build, [x])


@pytest.mark.parametrize("cell_name", ["basic_lstm", "gru", "multi", "lstm_peep_clip_proj"])
@pytest.mark.parametrize("time_major", [False, True])
def test_dynamic_rnn_sequence_length_zeroes_outputs_and_keeps_final_states(real, cell_name, time_major):
    x = _rand(6, 4, 3, seed=2) if time_major else _rand(4, 6, 3, seed=2)
    lengths = np.array([6, 2, 0, 4], np.int32)

    def build(m, x):
        return m.rnn.dynamic_rnn(
            _CELLS[cell_name](m.cells), x, sequence_length=lengths, time_major=time_major, dtype=m.tf.float32
        )

    _, got = _run_both(real, build, [x])
    outputs = got["values"][0]
    if time_major:
        outputs = outputs.transpose(1, 0, 2)
    for b, n in enumerate(lengths):
        assert not outputs[b, n:].any()


def test_dynamic_rnn_initial_state_placeholder_and_scope(real):
    x, c0, h0 = _rand(2, 5, 3, seed=3), _rand(2, 4, seed=4), _rand(2, 4, seed=5)

    def build(m, x, c, h):
        cell = m.cells.LSTMCell(4, use_peepholes=True)
        state = m.cells.LSTMStateTuple(c, h)
        return m.rnn.dynamic_rnn(cell, x, initial_state=state, scope="encoder", parallel_iterations=1)

    expected, _ = _run_both(real, build, [x, c0, h0])
    assert expected["names"][0] == "encoder/lstm_cell/kernel:0"


def test_dynamic_rnn_nested_inputs_through_a_custom_cell(real):
    a, b = _rand(2, 4, 3, seed=6), _rand(2, 4, 2, seed=7)

    def build(m, a, b):
        class PairCell(m.cells.RNNCell):
            @property
            def state_size(self):
                return 3

            @property
            def output_size(self):
                return (3, 2)

            def call(self, inputs, state):
                x, y = inputs
                w = m.tf.get_variable("w", [3, 3])
                new = m.tf.tanh(m.tf.matmul(state, w) + x)
                return (new, y * 2.0), new

        return m.rnn.dynamic_rnn(PairCell(), (a, b), sequence_length=[4, 2], dtype=m.tf.float32)

    expected, _ = _run_both(real, build, [a, b])
    assert expected["names"] == ["rnn/pair_cell/w:0"]


def test_bidirectional_dynamic_rnn_with_sequence_length(real):
    x = _rand(3, 5, 2, seed=8)

    def build(m, x):
        fw, bw = m.cells.BasicLSTMCell(3), m.cells.GRUCell(4)
        return m.rnn.bidirectional_dynamic_rnn(fw, bw, x, sequence_length=[5, 3, 1], dtype=m.tf.float32)

    expected, _ = _run_both(real, build, [x])
    assert expected["names"][0] == "bidirectional_rnn/fw/basic_lstm_cell/kernel:0"


def test_bidirectional_dynamic_rnn_time_major_without_lengths(real):
    x = _rand(5, 2, 3, seed=9)

    def build(m, x):
        fw, bw = m.cells.GRUCell(2), m.cells.GRUCell(2)
        return m.rnn.bidirectional_dynamic_rnn(fw, bw, x, time_major=True, dtype=m.tf.float32, scope="bi")

    _run_both(real, build, [x])


@pytest.mark.parametrize("with_lengths", [False, True])
def test_static_rnn_and_static_bidirectional_rnn(real, with_lengths):
    x = _rand(3, 4, 2, seed=10)
    lengths = [4, 1, 3] if with_lengths else None

    def build(m, x):
        steps = m.tf.unstack(x, axis=1)
        outs, state = m.rnn.static_rnn(
            m.cells.MultiRNNCell([m.cells.BasicLSTMCell(3), m.cells.GRUCell(2)]),
            steps,
            sequence_length=lengths,
            dtype=m.tf.float32,
        )
        bi_outs, fw_state, bw_state = m.rnn.static_bidirectional_rnn(
            m.cells.BasicRNNCell(2), m.cells.LSTMCell(3), steps, sequence_length=lengths, dtype=m.tf.float32
        )
        return [outs, bi_outs], [state, fw_state, bw_state]

    _run_both(real, build, [x])


def test_raw_rnn_matches_tf(real):
    x = _rand(5, 3, 2, seed=11)  # time-major
    lengths = np.array([5, 2, 3], np.int32)

    def build(m, x):
        t = m.tf
        cell = m.cells.LSTMCell(4)
        inputs_ta = t.TensorArray(t.float32, size=5).unstack(x)

        def loop_fn(time, cell_output, cell_state, loop_state):
            emit = cell_output
            state = cell.zero_state(3, t.float32) if cell_output is None else cell_state
            finished = time >= lengths
            next_input = t.cond(t.reduce_all(finished), lambda: t.zeros([3, 2]), lambda: inputs_ta.read(time))
            return finished, next_input, state, emit, loop_state

        emit_ta, final_state, _ = m.rnn.raw_rnn(cell, loop_fn)
        return emit_ta.stack(), final_state

    _run_both(real, build, [x])


def test_wrappers_residual_device_and_dropout_at_keep_one(real):
    x = _rand(2, 4, 3, seed=12)

    def build(m, x):
        c = m.cells
        cell = c.MultiRNNCell(
            [
                c.DropoutWrapper(c.GRUCell(3), input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0),
                c.ResidualWrapper(c.BasicLSTMCell(3)),
                c.DeviceWrapper(c.BasicRNNCell(3), "/cpu:0"),
            ]
        )
        return m.rnn.dynamic_rnn(cell, x, sequence_length=[4, 2], dtype=m.tf.float32)

    _run_both(real, build, [x])


def test_dropout_wrapper_drops_outputs_and_h_but_not_c():
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.DropoutWrapper(
            tf.nn.rnn_cell.BasicLSTMCell(200, forget_bias=5.0), output_keep_prob=0.5, state_keep_prob=0.5, seed=1
        )
        x = tf.ones([1, 3])
        out, state = cell(x, cell.zero_state(1, tf.float32))
        plain_out, plain_state = cell.cell(x, cell.zero_state(1, tf.float32))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            o, s, po, ps = sess.run([out, state, plain_out, plain_state])
    np.testing.assert_allclose(s.c, ps.c, rtol=1e-6)
    for dropped, plain in ((o, po), (s.h, ps.h)):
        kept = dropped != 0
        assert 0.3 < kept.mean() < 0.7
        np.testing.assert_allclose(dropped[kept], 2 * plain[kept], rtol=1e-5)


def test_variational_dropout_keeps_one_mask_across_steps():
    with tf.Graph().as_default():
        cell = tf.nn.rnn_cell.DropoutWrapper(
            tf.nn.rnn_cell.BasicRNNCell(100),
            input_keep_prob=0.5,
            output_keep_prob=0.5,
            variational_recurrent=True,
            input_size=3,
            dtype=tf.float32,
            seed=2,
        )
        outputs, _ = tf.nn.dynamic_rnn(cell, tf.ones([1, 5, 3]), dtype=tf.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = sess.run(outputs)
    masks = out[0] != 0
    assert (masks == masks[0]).all() and 0.2 < masks[0].mean() < 0.8


def test_cell_reuse_names_ops_and_collections(real):
    names = []
    for m in (real, _here()):
        t = m.tf
        with t.Graph().as_default():
            cell = m.cells.GRUCell(3)
            x = t.zeros([2, 4])
            h = cell.zero_state(2, t.float32)
            h1, _ = cell(x, h)
            h2, _ = cell(x, h1)
            static, _ = m.rnn.static_rnn(m.cells.BasicLSTMCell(2), [x, x], dtype=t.float32)
            names.append(
                (
                    [v.name for v in cell.trainable_weights],
                    h1.name,
                    h2.name,
                    [o.name for o in static],
                    [v.name for v in t.trainable_variables()],
                    h.name,
                )
            )
    assert names[1] == names[0]


def test_errors_match_tf(real):
    for m in (real, _here()):
        t = m.tf
        with t.Graph().as_default():
            x = t.zeros([2, 3, 4])
            with pytest.raises(ValueError, match="dtype"):
                m.rnn.dynamic_rnn(m.cells.GRUCell(2), x)
            with pytest.raises(TypeError, match="is not an RNNCell"):
                m.rnn.dynamic_rnn(object(), x, dtype=t.float32)
            with pytest.raises(ValueError, match="sequence_length must be a vector"):
                m.rnn.dynamic_rnn(m.cells.GRUCell(2), x, sequence_length=[[1]], dtype=t.float32)
            with pytest.raises(ValueError, match="Must specify at least one cell"):
                m.cells.MultiRNNCell([])
            with pytest.raises(TypeError, match="must be a sequence"):
                m.rnn.static_rnn(m.cells.GRUCell(2), x, dtype=t.float32)


def test_contrib_rnn_aliases():
    assert tf.contrib.rnn.LSTMCell is tf.nn.rnn_cell.LSTMCell
    assert tf.contrib.rnn.LSTMStateTuple is tf.nn.rnn_cell.LSTMStateTuple
    assert tf.contrib.rnn.static_bidirectional_rnn is tf.nn.static_bidirectional_rnn


def _language_model(m):
    """A two-layer LSTM language model (embedding, LSTMs with a shorter last sequence, softmax) with clipped SGD."""
    t = m.tf
    ids = t.placeholder(t.int32, [4, 8])
    embedding = t.get_variable("embedding", [20, 8])
    inputs = t.nn.embedding_lookup(embedding, ids[:, :-1])
    cell = m.cells.MultiRNNCell([m.cells.BasicLSTMCell(16), m.cells.LSTMCell(12, use_peepholes=True)])
    outputs, _ = m.rnn.dynamic_rnn(cell, inputs, sequence_length=[7, 7, 7, 4], dtype=t.float32)
    softmax_w = t.get_variable("softmax_w", [12, 20])
    softmax_b = t.get_variable("softmax_b", [20], initializer=t.zeros_initializer())
    logits = t.matmul(t.reshape(outputs, [-1, 12]), softmax_w) + softmax_b
    loss = t.reduce_mean(
        t.nn.sparse_softmax_cross_entropy_with_logits(labels=t.reshape(ids[:, 1:], [-1]), logits=logits)
    )
    grads, _ = t.clip_by_global_norm(t.gradients(loss, t.trainable_variables()), 5.0)
    train = t.train.GradientDescentOptimizer(1.0).apply_gradients(zip(grads, t.trainable_variables()))
    return ids, loss, train


def test_lstm_language_model_training_matches_tf(real):
    tokens = np.random.RandomState(0).randint(0, 20, size=(4, 8)).astype(np.int32)
    runs, values = [], None
    for m in (real, _here()):
        with m.tf.Graph().as_default():
            ids, loss, train = _language_model(m)
            variables = m.tf.global_variables()
            with m.tf.Session() as sess:
                sess.run(m.tf.global_variables_initializer())
                if values is None:
                    values = sess.run(variables)
                else:
                    for v, value in zip(variables, values):
                        v.load(value, sess)
                losses = [sess.run([train, loss], {ids: tokens})[1] for _ in range(5)]
                runs.append(([v.name for v in variables], losses))
    (names_tf, losses_tf), (names, losses) = runs
    assert names == names_tf
    np.testing.assert_allclose(losses, losses_tf, rtol=1e-4)
    assert losses[-1] < losses[0]


def test_stack_bidirectional_dynamic_rnn_matches_tf_composition(real):
    # TF 2 has no tf.contrib: its stack_bidirectional_dynamic_rnn is rebuilt here from TF's own pieces, as contrib
    # wrote it (a bidirectional_dynamic_rnn per layer in scope cell_i, outputs concatenated).
    x = _rand(3, 5, 2, seed=20)

    def build(m, x):
        fw = [m.cells.GRUCell(3), m.cells.BasicLSTMCell(2)]
        bw = [m.cells.GRUCell(3), m.cells.BasicLSTMCell(2)]
        if m.tf is tf:
            out, states_fw, states_bw = tf.contrib.rnn.stack_bidirectional_dynamic_rnn(
                fw, bw, x, sequence_length=[5, 2, 4], dtype=tf.float32
            )
            return out, (states_fw, states_bw)
        states_fw, states_bw, prev = [], [], x
        with m.tf.variable_scope("stack_bidirectional_rnn"):
            for i, (cell_fw, cell_bw) in enumerate(zip(fw, bw)):
                with m.tf.variable_scope(f"cell_{i}"):
                    outputs, (s_fw, s_bw) = m.rnn.bidirectional_dynamic_rnn(
                        cell_fw, cell_bw, prev, sequence_length=[5, 2, 4], dtype=m.tf.float32
                    )
                    prev = m.tf.concat(outputs, 2)
                states_fw.append(s_fw)
                states_bw.append(s_bw)
        return prev, (tuple(states_fw), tuple(states_bw))

    expected, _ = _run_both(real, build, [x])
    assert expected["names"][0] == "stack_bidirectional_rnn/cell_0/bidirectional_rnn/fw/gru_cell/gates/kernel:0"
