"""File I/O on fsspec (``tf.gfile``, ``tf.io.gfile``: :mod:`.file_io`) and TFRecord files (:mod:`.tf_record`).

Example:
    >>> from dtf_notebook.lib.io import file_io
    >>> file_io.makedirs("memory://lib_io_doc/run")
    >>> file_io.isdir("memory://lib_io_doc/run")
    True
    >>> file_io.rmtree("memory://lib_io_doc")
"""
