"""Whole queue-based input pipelines, the same program under real TensorFlow and here: CSV and TFRecord files
written by the test, read through producers, readers and decoders, batched with and without shuffling; the same
batches (in order without shuffling, the same multiset per epoch with it) and ``OutOfRangeError`` at the end."""

from __future__ import annotations

from collections import Counter

import pytest

import dtf_notebook.compat.v1 as tf
from tests.input.support import both, drain, error_message, write_csv_files, write_tfrecord_files


def _csv_pipeline(lib, names, num_epochs=2, shuffle=False, batch_size=4, threads=1):
    files = lib.train.string_input_producer(names, num_epochs=num_epochs, shuffle=shuffle, seed=3)
    key, line = lib.TextLineReader(skip_header_lines=1).read(files)
    ident, value, word = lib.decode_csv(line, [[0], [-1.0], ["?"]])
    if shuffle:
        return lib.train.shuffle_batch(
            [key, ident, value, word],
            batch_size,
            capacity=20,
            min_after_dequeue=5,
            num_threads=threads,
            allow_smaller_final_batch=True,
            seed=5,
        )
    return lib.train.batch([key, ident, value, word], batch_size, num_threads=threads, allow_smaller_final_batch=True)


def _rows(batches):
    """(id, value, word) of every example of ``batches`` (lists of columns), in order."""
    return [tuple(row[1:]) for b in batches for row in zip(*b)]


@pytest.mark.tf_oracle
def test_csv_pipeline_gives_tensorflows_batches_in_order(tmp_path):
    names = write_csv_files(tmp_path)
    ours, theirs = both(lambda lib: drain(lib, _csv_pipeline(lib, names)))
    assert ours[0] == theirs[0]
    assert len(ours[0]) == 8 and len(ours[0][-1][0]) == 2  # 2 epochs x 15 rows in batches of 4: 7 x 4 + 2
    assert error_message(ours[1]).startswith("FIFOQueue 'batch/fifo_queue' is closed and has insufficient elements")
    assert type(ours[1]) is tf.errors.OutOfRangeError


@pytest.mark.tf_oracle
def test_shuffled_csv_pipeline_gives_each_epoch_and_then_ends(tmp_path):
    names = write_csv_files(tmp_path)
    ours, theirs = both(lambda lib: drain(lib, _csv_pipeline(lib, names, shuffle=True, threads=2)))
    with tf.Graph().as_default():
        ordered = _rows(drain(tf, _csv_pipeline(tf, names))[0])
    assert Counter(_rows(ours[0])) == Counter(_rows(theirs[0])) == Counter(ordered)
    assert _rows(ours[0]) != ordered  # shuffled
    assert ours[1] is not None and theirs[1] is not None


@pytest.mark.tf_oracle
@pytest.mark.parametrize("compression", [None, "GZIP"])
def test_tfrecord_pipeline_with_parse_single_example_like_tensorflow(tmp_path, compression):
    names = write_tfrecord_files(tmp_path, files=2, rows=5, compression=compression)

    def run(lib):
        files = lib.train.string_input_producer(names, num_epochs=1, shuffle=False)
        options = lib.python_io.TFRecordOptions(compression) if compression else None
        _, record = lib.TFRecordReader(options=options).read(files)
        parsed = lib.parse_single_example(
            record,
            {
                "x": lib.FixedLenFeature([4], lib.float32),
                "label": lib.FixedLenFeature([], lib.int64),
                "tags": lib.VarLenFeature(lib.string),
            },
        )
        batch = lib.train.batch(parsed, batch_size=3, allow_smaller_final_batch=True)
        return drain(lib, batch)

    ours, theirs = both(run)
    assert ours[0] == theirs[0]
    assert len(ours[0]) == 4
    assert ours[0][0]["tags"][0] == "sparse" and ours[0][0]["label"] == [0, 1, 2]


@pytest.mark.tf_oracle
def test_batched_reads_and_parse_example_with_enqueue_many_like_tensorflow(tmp_path):
    names = write_tfrecord_files(tmp_path, files=3, rows=4)

    def run(lib):
        files = lib.train.string_input_producer(names, num_epochs=2, shuffle=False)
        _, records = lib.TFRecordReader().read_up_to(files, 3)
        parsed = lib.parse_example(
            records, {"x": lib.FixedLenFeature([4], lib.float32), "label": lib.FixedLenFeature([], lib.int64)}
        )
        return drain(lib, lib.train.batch(parsed, 5, enqueue_many=True, allow_smaller_final_batch=True))

    ours, theirs = both(run)
    assert ours[0] == theirs[0]
    assert sum(len(b["label"]) for b in ours[0]) == 24


@pytest.mark.tf_oracle
def test_shuffled_tfrecord_batches_hold_every_example_once_per_epoch(tmp_path):
    names = write_tfrecord_files(tmp_path, files=2, rows=10)

    def run(lib):
        files = lib.train.string_input_producer(names, num_epochs=3, shuffle=True, seed=1)
        _, record = lib.TFRecordReader().read(files)
        parsed = lib.parse_single_example(
            record, {"label": lib.FixedLenFeature([], lib.int64), "x": lib.FixedLenFeature([4], lib.float32)}
        )
        batch = lib.train.shuffle_batch(
            parsed, 7, capacity=30, min_after_dequeue=10, num_threads=2, allow_smaller_final_batch=True
        )
        return drain(lib, batch)

    ours, theirs = both(run)
    examples = Counter((int(x[0]), label) for b in ours[0] for x, label in zip(b["x"], b["label"]))
    assert examples == Counter((int(x[0]), label) for b in theirs[0] for x, label in zip(b["x"], b["label"]))
    assert set(examples.values()) == {3} and len(examples) == 20  # each of the 20 examples, once per epoch
    assert [len(b["label"]) for b in ours[0]] == [len(b["label"]) for b in theirs[0]] == [7] * 8 + [4]


@pytest.mark.tf_oracle
def test_join_slice_and_range_producers_like_tensorflow():
    def run(lib):
        images = lib.constant([[float(i), -float(i)] for i in range(6)])
        labels = lib.constant(list(range(6)))
        image, label = lib.train.slice_input_producer([images, labels], num_epochs=1, shuffle=False)
        joined = lib.train.batch_join(
            [[image, label], [image * 10, label + 100]], batch_size=4, allow_smaller_final_batch=True
        )
        ranged = lib.train.range_input_producer(3, num_epochs=2, shuffle=False).dequeue()
        first = drain(lib, joined)
        return first, drain(lib, ranged)

    ours, theirs = both(run)

    def rows(batches):
        # Both sources dequeue the one slice producer, and their two threads race for its rows: each row comes
        # once, from either source (the second one scales it), in any order.
        found = Counter()
        for b in batches:
            for x, y in zip(b[0], b[1]):
                source = 1 if y >= 100 else 0
                assert x == ([v * 10 for v in [y - 100, -(y - 100)]] if source else [float(y), -float(y)])
                found[y % 100] += 1
        return found

    assert rows(ours[0][0]) == rows(theirs[0][0]) == Counter(range(6))
    assert ours[1][0] == theirs[1][0] == [0, 1, 2, 0, 1, 2]


@pytest.mark.tf_oracle
def test_dynamic_pad_and_sparse_tensors_like_tensorflow():
    def run(lib):
        n = lib.train.range_input_producer(5, num_epochs=1, shuffle=False).dequeue()
        ragged = lib.range(n)  # [], [0], [0, 1], ...: padded per batch
        sparse = lib.SparseTensor(indices=[[0], [2]], values=lib.stack([n, 2 * n]), dense_shape=[3])
        batched = lib.train.batch([n, ragged, sparse], batch_size=2, dynamic_pad=True, allow_smaller_final_batch=True)
        return drain(lib, batched)

    ours, theirs = both(run)
    assert ours[0] == theirs[0]
    assert [b[0] for b in ours[0]] == [[0, 1], [2, 3], [4]]
    assert ours[0][1][1] == [[0, 1, 0], [0, 1, 2]]
    assert ours[0][1][2] == ("sparse", [[0, 0], [0, 2], [1, 0], [1, 2]], [2, 4, 3, 6], [2, 3])


@pytest.mark.tf_oracle
@pytest.mark.parametrize("enqueue_many", [False, True])
def test_maybe_batch_keeps_what_keep_input_says_like_tensorflow(enqueue_many):
    def run(lib):
        if enqueue_many:
            n = lib.range(8)
            keep = lib.not_equal(n % 3, 2)
        else:
            n = lib.train.range_input_producer(8, num_epochs=1, shuffle=False).dequeue()
            keep = lib.not_equal(n % 3, 2)
        batched = lib.train.maybe_batch(
            [n], keep, batch_size=3, enqueue_many=enqueue_many, allow_smaller_final_batch=not enqueue_many
        )
        return drain(lib, batched, limit=2)

    ours, theirs = both(run)
    assert ours[0] == theirs[0] == [[0, 1, 3], [4, 6, 7]]


@pytest.mark.tf_oracle
def test_producer_and_batching_arguments_are_checked_like_tensorflow():
    def run(lib):
        out = []
        for build in (
            lambda: lib.train.string_input_producer([]),
            lambda: lib.train.input_producer(lib.placeholder(lib.float32, [None, None])),
            lambda: lib.train.limit_epochs(lib.constant(1), 0),
            lambda: lib.train.shuffle_batch([lib.constant(1)], 2, capacity=5, min_after_dequeue=5),
            lambda: lib.train.batch([lib.placeholder(lib.float32)], 2),
            lambda: lib.train.maybe_batch([lib.constant(1)], [True], 2),
            lambda: lib.train.batch_join([[lib.constant(1)], [lib.constant(1.0)]], 2),
        ):
            try:
                build()
                out.append("built")
            except (ValueError, TypeError) as e:
                out.append((type(e).__name__, str(e).split(":")[0]))
        return out

    ours, theirs = both(run)
    assert ours == theirs
    assert "built" not in ours


def test_queue_runners_close_their_queues_and_a_stop_cancels_blocked_enqueues():
    with tf.Graph().as_default():
        n = tf.train.range_input_producer(100, shuffle=False).dequeue()  # endless
        batch = tf.train.batch([n], 5, capacity=10)
        runners = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        assert [r.name for r in runners] == ["input_producer", "batch/fifo_queue"]
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord)
            assert sess.run(batch).tolist() == [0, 1, 2, 3, 4]
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)  # the full queues' enqueues were cancelled
            assert not any(t.is_alive() for t in threads)


@pytest.mark.tf_oracle
def test_match_filenames_once_and_count_up_to_like_tensorflow(tmp_path):
    write_csv_files(tmp_path, files=3, rows=2)
    pattern = str(tmp_path / "part-*.csv")

    def run(lib):
        names = lib.train.match_filenames_once(pattern)
        # (TF 2.21 makes the variable a resource variable, which string_input_producer cannot test for emptiness
        # while building; TF1's reference variable it can, as here)
        files = lib.train.string_input_producer(lib.identity(names), num_epochs=1, shuffle=False)
        _, line = lib.TextLineReader(skip_header_lines=1).read(files)
        lines, error = drain(lib, line)
        counter = lib.Variable(3, dtype=lib.int64)
        step = counter.count_up_to(5)
        counts = []
        with lib.Session() as sess:
            sess.run(counter.initializer)
            for _ in range(3):
                try:
                    counts.append(int(sess.run(step)))
                except lib.errors.OutOfRangeError as e:
                    counts.append(error_message(e))
        return lines, type(error).__name__, counts, names.op.name, [v.op.name for v in lib.local_variables()]

    ours, theirs = both(run)
    assert ours == theirs
    assert ours[2] == [3, 4, "Reached limit of 5"]


@pytest.mark.tf_oracle
def test_monitored_session_starts_the_runners_and_ends_at_the_end_of_the_input(tmp_path):
    names = write_csv_files(tmp_path, files=2, rows=5)

    def run(lib):
        batch = _csv_pipeline(lib, names, num_epochs=1, batch_size=3)
        lib.train.get_or_create_global_step()
        seen = []
        with lib.train.MonitoredTrainingSession() as sess:  # its scaffold initialises the local epochs counter
            while not sess.should_stop():
                seen.append([v.tolist() for v in sess.run(batch)[1:]])
        return seen

    ours, theirs = both(run)
    assert ours == theirs
    assert sum(len(b[0]) for b in ours) == 10
