"""TF's ``SavedModel`` message (``saved_model.pb``): the schema version and the ``MetaGraphDef`` of each tag set,
with TF's names and field numbers.

Example:
    >>> model = SavedModel(saved_model_schema_version=1)
    >>> model.meta_graphs.add().meta_info_def.tags.append("serve")
    >>> SavedModel.FromString(model.SerializeToString()).meta_graphs[0].meta_info_def.tags[:]
    ['serve']
"""

from __future__ import annotations

from dtf_notebook.protos import graph_pb as _graph_pb  # noqa: F401 - puts meta_graph.proto in the pool
from dtf_notebook.protos import message_class
from dtf_notebook.protos.spec import add_spec_file

__all__ = ["SavedModel"]

add_spec_file(
    "tensorflow/core/protobuf/saved_model.proto",
    ["tensorflow/core/protobuf/meta_graph.proto"],
    [
        (
            "SavedModel",
            [("saved_model_schema_version", 1, "int64"), ("meta_graphs", 2, "repeated tensorflow.MetaGraphDef")],
        )
    ],
)

SavedModel = message_class("tensorflow.SavedModel", __name__)
