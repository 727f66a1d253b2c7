"""TF1's top-level string functions (``tf.string_join``, ``tf.substr``, ``tf.string_split``, ...).

Importing this module registers every string op (``dtf_notebook.ops.strings``); ``tf.strings`` gives
the same functions under their newer names.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.string_join(["a", "b"], separator="+")), sess.run(tf.string_to_number("2.5")))
    b'a+b' 2.5
"""

from __future__ import annotations

from dtf_notebook.ops.strings.conversion import as_string, regex_replace, string_to_number
from dtf_notebook.ops.strings.elementwise import (
    decode_base64,
    encode_base64,
    string_strip,
    string_to_hash_bucket,
    string_to_hash_bucket_fast,
    string_to_hash_bucket_strong,
    substr,
)
from dtf_notebook.ops.strings.joins import reduce_join, string_join
from dtf_notebook.ops.strings.split import string_split

__all__ = [
    "as_string",
    "decode_base64",
    "encode_base64",
    "reduce_join",
    "regex_replace",
    "string_join",
    "string_split",
    "string_strip",
    "string_to_hash_bucket",
    "string_to_hash_bucket_fast",
    "string_to_hash_bucket_strong",
    "string_to_number",
    "substr",
]
