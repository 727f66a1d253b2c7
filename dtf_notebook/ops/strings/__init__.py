"""TF's string ops; ``dtf_notebook.ops.string_ops`` gathers the TF1 top-level names, ``tf.strings`` the rest.

Modules: ``common`` (what the kernels share), ``hashes`` (farmhash, SipHash, TF's Hash64 in Python),
``elementwise`` (length, substr, case, strip, base64, hash buckets), ``conversion`` (regular expressions,
``as_string``, ``string_to_number``), ``joins`` (join, reduce_join, unsorted_segment_join), ``split``
(``tf.string_split``, ``tf.strings.split`` as ``SparseTensor``). Importing a module registers its ops.
"""
