"""``tf.train.Example`` & co.: TF's ``feature.proto`` and ``example.proto`` as protobuf message classes.

An ``Example`` maps feature names to lists of bytes, floats or int64s; a ``SequenceExample`` adds
named lists of such features (one per time step). These are the records of TFRecord input files.

Example:
    >>> example = Example(features=Features(feature={
    ...     "label": Feature(int64_list=Int64List(value=[7])),
    ...     "pixels": Feature(float_list=FloatList(value=[0.0, 0.5])),
    ... }))
    >>> Example.FromString(example.SerializeToString()).features.feature["label"].int64_list.value[0]
    7
"""

from __future__ import annotations

from dtf_notebook.protos import add_file, message_class

_OPTIONS = """
options {
  java_package: "org.tensorflow.example" java_outer_classname: "%s" java_multiple_files: true
  go_package: "github.com/tensorflow/tensorflow/tensorflow/go/core/example/example_protos_go_proto"
  cc_enable_arenas: true
}
"""

# tensorflow/core/example/feature.proto
add_file(
    """
name: "tensorflow/core/example/feature.proto" package: "tensorflow" syntax: "proto3"
message_type {
  name: "BytesList"
  field { name: "value" number: 1 label: LABEL_REPEATED type: TYPE_BYTES }
}
message_type {
  name: "FloatList"
  field { name: "value" number: 1 label: LABEL_REPEATED type: TYPE_FLOAT options { packed: true } }
}
message_type {
  name: "Int64List"
  field {
    name: "value" number: 1 label: LABEL_REPEATED type: TYPE_INT64 options { packed: true jstype: JS_STRING }
  }
}
message_type {
  name: "Feature"
  field { name: "bytes_list" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".tensorflow.BytesList"
          oneof_index: 0 }
  field { name: "float_list" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".tensorflow.FloatList"
          oneof_index: 0 }
  field { name: "int64_list" number: 3 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".tensorflow.Int64List"
          oneof_index: 0 }
  oneof_decl { name: "kind" }
}
message_type {
  name: "Features"
  field { name: "feature" number: 1 label: LABEL_REPEATED type: TYPE_MESSAGE
          type_name: ".tensorflow.Features.FeatureEntry" }
  nested_type {
    name: "FeatureEntry"
    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".tensorflow.Feature" }
    options { map_entry: true }
  }
}
message_type {
  name: "FeatureList"
  field { name: "feature" number: 1 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".tensorflow.Feature" }
}
message_type {
  name: "FeatureLists"
  field { name: "feature_list" number: 1 label: LABEL_REPEATED type: TYPE_MESSAGE
          type_name: ".tensorflow.FeatureLists.FeatureListEntry" }
  nested_type {
    name: "FeatureListEntry"
    field { name: "key" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
    field { name: "value" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".tensorflow.FeatureList" }
    options { map_entry: true }
  }
}
"""
    + _OPTIONS % "FeatureProtos"
)

# tensorflow/core/example/example.proto
add_file(
    """
name: "tensorflow/core/example/example.proto" package: "tensorflow" syntax: "proto3"
dependency: "tensorflow/core/example/feature.proto"
message_type {
  name: "Example"
  field { name: "features" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".tensorflow.Features" }
}
message_type {
  name: "SequenceExample"
  field { name: "context" number: 1 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".tensorflow.Features" }
  field { name: "feature_lists" number: 2 label: LABEL_OPTIONAL type: TYPE_MESSAGE
          type_name: ".tensorflow.FeatureLists" }
}
"""
    + _OPTIONS % "ExampleProtos"
)

BytesList = message_class("tensorflow.BytesList", __name__)
FloatList = message_class("tensorflow.FloatList", __name__)
Int64List = message_class("tensorflow.Int64List", __name__)
Feature = message_class("tensorflow.Feature", __name__)
Features = message_class("tensorflow.Features", __name__)
FeatureList = message_class("tensorflow.FeatureList", __name__)
FeatureLists = message_class("tensorflow.FeatureLists", __name__)
Example = message_class("tensorflow.Example", __name__)
SequenceExample = message_class("tensorflow.SequenceExample", __name__)

__all__ = [
    "BytesList",
    "Example",
    "Feature",
    "FeatureList",
    "FeatureLists",
    "Features",
    "FloatList",
    "Int64List",
    "SequenceExample",
]
