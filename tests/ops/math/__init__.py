"""Tests of the math ops (``dtf_notebook.ops.math``), one file per family."""
