"""The runtime side of ``tf.data``: pipelines compiled and run where their iterator's op runs (see
:mod:`dtf_notebook.data`)."""
