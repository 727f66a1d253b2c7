# Copyright 2015 The TensorFlow Authors. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
# ==============================================================================
# ruff: noqa: UP031  (the code is TensorFlow's, kept as written)

"""Utilities for parsing PTB text files.

tensorflow/models' tutorials/rnn/ptb/reader.py (the feed_dict version of TF 0.11/0.12: ptb_raw_data and
ptb_iterator), with the Penn Treebank files replaced: without a data_path it builds a small synthetic corpus, text
from a seeded Markov chain over 100 words (each word has four likely successors), read by the original
vocabulary and id functions. It needs no TensorFlow.
"""

import collections
import os

import numpy as np

_SYNTHETIC_VOCAB = 100


def _synthetic_corpus(num_words, seed):
    """Lines of words 'w0'..'w99' from a Markov chain in which each word has four likely successors."""
    rng = np.random.RandomState(1234)
    successors = rng.randint(0, _SYNTHETIC_VOCAB, size=(_SYNTHETIC_VOCAB, 4))
    rng = np.random.RandomState(seed)
    word, words = 0, []
    for _ in range(num_words):
        word = successors[word, rng.randint(4)] if rng.uniform() < 0.9 else rng.randint(_SYNTHETIC_VOCAB)
        words.append("w%d" % word)
    lines = [" ".join(words[i : i + 20]) for i in range(0, len(words), 20)]
    return "\n".join(" " + line + " " for line in lines) + "\n"


def _read_words(filename):
    with open(filename) as f:
        return f.read().replace("\n", "<eos>").split()


def _build_vocab(filename):
    data = _read_words(filename)

    counter = collections.Counter(data)
    count_pairs = sorted(counter.items(), key=lambda x: (-x[1], x[0]))

    words, _ = list(zip(*count_pairs))
    word_to_id = dict(zip(words, range(len(words))))

    return word_to_id


def _file_to_word_ids(filename, word_to_id):
    data = _read_words(filename)
    return [word_to_id[word] for word in data if word in word_to_id]


def ptb_raw_data(data_path=None):
    """Load PTB raw data from data directory "data_path".

    Reads PTB text files, converts strings to integer ids,
    and performs mini-batching of the inputs.

    The PTB dataset comes from Tomas Mikolov's webpage:

    http://www.fit.vutbr.cz/~imikolov/rnnlm/simple-examples.tgz

    Here, without the files, a synthetic corpus is written to data_path first.

    Args:
      data_path: string path to the directory where simple-examples.tgz has
        been extracted.

    Returns:
      tuple (train_data, valid_data, test_data, vocabulary)
      where each of the data objects can be passed to PTBIterator.
    """
    train_path = os.path.join(data_path, "ptb.train.txt")
    valid_path = os.path.join(data_path, "ptb.valid.txt")
    test_path = os.path.join(data_path, "ptb.test.txt")
    for path, num_words, seed in ((train_path, 20000, 0), (valid_path, 1000, 1), (test_path, 200, 2)):
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write(_synthetic_corpus(num_words, seed))

    word_to_id = _build_vocab(train_path)
    train_data = _file_to_word_ids(train_path, word_to_id)
    valid_data = _file_to_word_ids(valid_path, word_to_id)
    test_data = _file_to_word_ids(test_path, word_to_id)
    vocabulary = len(word_to_id)
    return train_data, valid_data, test_data, vocabulary


def ptb_iterator(raw_data, batch_size, num_steps):
    """Iterate on the raw PTB data.

    This generates batch_size pointers into the raw PTB data, and allows
    minibatch iteration along these pointers.

    Args:
      raw_data: one of the raw data outputs from ptb_raw_data.
      batch_size: int, the batch size.
      num_steps: int, the number of unrolls.

    Yields:
      Pairs of the batched data, each a matrix of shape [batch_size, num_steps].
      The second element of the tuple is the same data time-shifted to the
      right by one.

    Raises:
      ValueError: if batch_size or num_steps are too high.
    """
    raw_data = np.array(raw_data, dtype=np.int32)

    data_len = len(raw_data)
    batch_len = data_len // batch_size
    data = np.zeros([batch_size, batch_len], dtype=np.int32)
    for i in range(batch_size):
        data[i] = raw_data[batch_len * i : batch_len * (i + 1)]

    epoch_size = (batch_len - 1) // num_steps

    if epoch_size == 0:
        raise ValueError("epoch_size == 0, decrease batch_size or num_steps")

    for i in range(epoch_size):
        x = data[:, i * num_steps : (i + 1) * num_steps]
        y = data[:, i * num_steps + 1 : (i + 1) * num_steps + 1]
        yield (x, y)
