"""``tf.summary.image`` and ``tf.summary.audio``: tags, scaling and encodings, checked against real TensorFlow."""

from __future__ import annotations

import io
import wave
import zlib

import numpy as np
import pytest

import dtf_notebook.compat.v1 as tf
from dtf_notebook.summary.media_summaries import encode_png
from tests.ops.nn.helpers import tf1


def decode_png(data: bytes) -> np.ndarray:
    """Pixels of a PNG written without filters (ours) or with any of PNG's filters (TF's), as [h, w, c]."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        assert zlib.crc32(kind + body) == int.from_bytes(data[pos + 8 + length : pos + 12 + length], "big")
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height = int.from_bytes(header[:4], "big"), int.from_bytes(header[4:8], "big")
    channels = {0: 1, 2: 3, 6: 4}[header[9]]
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + width * channels)
    out = np.zeros([height, width * channels], np.int32)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        prev = out[y - 1] if y else np.zeros_like(line)
        for x in range(len(line)):
            left = out[y, x - channels] if x >= channels else 0
            up, corner = prev[x], (prev[x - channels] if x >= channels else 0)
            if kind == 0:
                predictor = 0
            elif kind == 1:
                predictor = left
            elif kind == 2:
                predictor = up
            elif kind == 3:
                predictor = (left + up) // 2
            else:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                predictor = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
            out[y, x] = (line[x] + predictor) % 256
    return out.reshape(height, width, channels).astype(np.uint8)


def run_summary(make, *args, **kwargs):
    with tf.Graph().as_default():
        s = make(*args, **kwargs)
        with tf.Session() as sess:
            return tf.Summary.FromString(sess.run(s))


def tf_summary(make_name, *args, **kwargs):
    t = tf1()
    with t.Graph().as_default(), t.Session() as sess:
        s = getattr(t.summary, make_name)(*args, **kwargs)
        return tf.Summary.FromString(sess.run(s))


def test_png_round_trip_for_every_colour_type():
    rng = np.random.default_rng(0)
    for channels in (1, 3, 4):
        pixels = rng.integers(0, 256, [5, 7, channels], dtype=np.uint8)
        np.testing.assert_array_equal(decode_png(encode_png(pixels)), pixels)


IMAGES = {
    "positive floats": np.random.default_rng(1).random([2, 4, 5, 1]).astype(np.float32) * 3,
    "signed floats with a NaN": np.concatenate(
        [np.random.default_rng(2).normal(size=[1, 3, 3, 3]), np.full([1, 3, 3, 3], np.nan)], axis=2
    ).astype(np.float32),
    "uint8 rgba": np.random.default_rng(3).integers(0, 256, [4, 2, 3, 4]).astype(np.uint8),
    "all zero": np.zeros([1, 2, 2, 1], np.float64),
}


@pytest.mark.tf_oracle
@pytest.mark.parametrize("case", sorted(IMAGES))
@pytest.mark.parametrize("max_outputs", [1, 3])
def test_image_summaries_match_tensorflow(case, max_outputs):
    images = IMAGES[case]
    ours = run_summary(tf.summary.image, "batch", images, max_outputs=max_outputs)
    theirs = tf_summary("image", "batch", images, max_outputs=max_outputs)
    assert [v.tag for v in ours.value] == [v.tag for v in theirs.value]
    for mine, expected in zip(ours.value, theirs.value):
        assert (mine.image.height, mine.image.width, mine.image.colorspace) == (
            expected.image.height,
            expected.image.width,
            expected.image.colorspace,
        )
        np.testing.assert_array_equal(
            decode_png(mine.image.encoded_image_string), decode_png(expected.image.encoded_image_string)
        )


@pytest.mark.tf_oracle
@pytest.mark.parametrize("shape", [[2, 50], [3, 40, 2]])
@pytest.mark.parametrize("max_outputs", [1, 2])
def test_audio_summaries_match_tensorflow(shape, max_outputs):
    clips = np.random.default_rng(4).uniform(-1.3, 1.3, shape).astype(np.float32)
    ours = run_summary(tf.summary.audio, "voice", clips, 16000, max_outputs=max_outputs)
    theirs = tf_summary("audio", "voice", clips, 16000, max_outputs=max_outputs)
    assert [v.tag for v in ours.value] == [v.tag for v in theirs.value]
    for mine, expected in zip(ours.value, theirs.value):
        assert (mine.audio.sample_rate, mine.audio.num_channels, mine.audio.length_frames) == (
            expected.audio.sample_rate,
            expected.audio.num_channels,
            expected.audio.length_frames,
        )
        assert mine.audio.content_type == expected.audio.content_type == "audio/wav"
        with (
            wave.open(io.BytesIO(mine.audio.encoded_audio_string)) as a,
            wave.open(io.BytesIO(expected.audio.encoded_audio_string)) as b,
        ):
            assert (a.getnchannels(), a.getsampwidth(), a.getframerate()) == (
                b.getnchannels(),
                b.getsampwidth(),
                b.getframerate(),
            )
            assert a.readframes(10**6) == b.readframes(10**6)


def test_bad_image_and_audio_input_is_named():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="'tensor' has DataType int32"):
            tf.summary.image("bad", tf.zeros([1, 2, 2, 1], tf.int32))
        with pytest.raises(ValueError, match="max_outputs"):
            tf.summary.image("none", tf.zeros([1, 2, 2, 1]), max_outputs=0)
        wrong = tf.summary.image("two_channels", tf.zeros([1, 2, 2, 2]))
        flat = tf.summary.audio("flat", tf.zeros([4]), 8000)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="last dim 1, 3, or 4"):
                sess.run(wrong)
            with pytest.raises(tf.errors.InvalidArgumentError, match="3-D or 2-D"):
                sess.run(flat)


def test_media_summaries_join_merge_all_and_reach_an_event_file(tmp_path):
    with tf.Graph().as_default():
        tf.summary.image("img", tf.ones([1, 2, 2, 3]))
        tf.summary.audio("snd", tf.zeros([1, 10]), 8000, family="sounds")
        merged = tf.summary.merge_all()
        with tf.Session() as sess, tf.summary.FileWriter(str(tmp_path)) as writer:
            writer.add_summary(sess.run(merged), global_step=1)
    tags = [
        v.tag
        for path in tmp_path.iterdir()
        for event in tf.train.summary_iterator(str(path))
        for v in event.summary.value
    ]
    assert tags == ["img/image/0", "sounds/sounds/snd/audio/0"]
