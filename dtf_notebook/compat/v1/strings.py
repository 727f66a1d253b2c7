"""``tf.strings``: TF1's string functions under their ``tf.strings.*`` names.

``split`` returns a ``SparseTensor`` (TF1's default ``result_type``); ``RaggedTensor`` results,
``bytes_split``, ``ngrams`` and the ``unicode_*`` functions are not available.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     print(sess.run(tf.strings.length(["abc", "é"], unit="UTF8_CHAR")))
    [3 1]
"""

from __future__ import annotations

from typing import Any

from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.ops.logging_ops import string_format as _string_format
from dtf_notebook.ops.strings.conversion import as_string, regex_full_match, regex_replace
from dtf_notebook.ops.strings.conversion import string_to_number as to_number
from dtf_notebook.ops.strings.elementwise import string_length as length
from dtf_notebook.ops.strings.elementwise import string_lower as lower
from dtf_notebook.ops.strings.elementwise import string_strip as strip
from dtf_notebook.ops.strings.elementwise import string_to_hash_bucket as to_hash_bucket
from dtf_notebook.ops.strings.elementwise import string_to_hash_bucket_fast as to_hash_bucket_fast
from dtf_notebook.ops.strings.elementwise import string_to_hash_bucket_strong as to_hash_bucket_strong
from dtf_notebook.ops.strings.elementwise import string_upper as upper
from dtf_notebook.ops.strings.elementwise import substr
from dtf_notebook.ops.strings.joins import reduce_join, unsorted_segment_join
from dtf_notebook.ops.strings.joins import string_join as join
from dtf_notebook.ops.strings.split import strings_split as split

__all__ = [
    "as_string",
    "format",
    "join",
    "length",
    "lower",
    "reduce_join",
    "regex_full_match",
    "regex_replace",
    "split",
    "strip",
    "substr",
    "to_hash_bucket",
    "to_hash_bucket_fast",
    "to_hash_bucket_strong",
    "to_number",
    "unsorted_segment_join",
    "upper",
]


def format(template: str, inputs: Any, placeholder: str = "{}", summarize: int = 3, name: str | None = None) -> Tensor:  # noqa: A001
    """A scalar string: ``template`` with each ``placeholder`` replaced by the next input's text (``StringFormat``).

    Raises:
        ValueError: the template has not as many placeholders as there are inputs.

    Example:
        >>> import dtf_notebook.compat.v1 as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.strings.format("x={}, y={}", [tf.constant(1), tf.constant([2.5])])))
        b'x=1, y=[2.5]'
    """
    if isinstance(inputs, Tensor):
        inputs = [inputs]
    if template.count(placeholder) != len(inputs):
        raise ValueError(
            f"The template expects {template.count(placeholder)} tensors, but the inputs only has {len(inputs)}. "
            "Please ensure the number of placeholders in template matches inputs length."
        )
    return _string_format(list(inputs), template, placeholder, summarize, name=name)
