"""Libraries below the graph API that TF1 programs use directly: file I/O and TFRecord files (``lib.io``).

Example:
    >>> from dtf_notebook.lib.io import file_io
    >>> file_io.exists("memory://lib_doc/none")
    False
"""
