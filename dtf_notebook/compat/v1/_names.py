"""The flat TF1 namespace (``tf.constant``, ``tf.Session``, ``tf.float32``, ...), assembled from the package."""

from dtf_notebook.compat.v1._graph_api import *  # noqa: F403
from dtf_notebook.compat.v1._script_aliases import *  # noqa: F403
from dtf_notebook.compat.v1._switches import *  # noqa: F403
from dtf_notebook.data.structure import SparseTensorSpec
from dtf_notebook.framework.aggregation_method import AggregationMethod
from dtf_notebook.framework.convert import convert_to_tensor, register_tensor_conversion_function
from dtf_notebook.framework.device_spec import DeviceSpec
from dtf_notebook.framework.dtypes import (
    QUANTIZED_DTYPES,
    DType,
    as_dtype,
    bfloat16,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    qint8,
    qint16,
    qint32,
    quint8,
    quint16,
    resource,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
    variant,
)
from dtf_notebook.framework.gradients import gradients
from dtf_notebook.framework.graph import (
    Graph,
    GraphKeys,
    add_to_collection,
    add_to_collections,
    colocate_with,
    container,
    control_dependencies,
    device,
    get_collection,
    get_collection_ref,
    get_default_graph,
    get_name_scope,
    name_scope,
    reset_default_graph,
)
from dtf_notebook.framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from dtf_notebook.framework.operation import Operation
from dtf_notebook.framework.random_seed import *  # noqa: F403
from dtf_notebook.framework.sparse_tensor import SparseTensor, SparseTensorValue
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import Dimension, TensorShape
from dtf_notebook.ops.array.array_extras import *  # noqa: F403
from dtf_notebook.ops.array.matrix_diag import *  # noqa: F403
from dtf_notebook.ops.array.reverse_roll import *  # noqa: F403
from dtf_notebook.ops.array.scatter_nd import *  # noqa: F403
from dtf_notebook.ops.array.scatter_variables import *  # noqa: F403
from dtf_notebook.ops.array.sets import *  # noqa: F403
from dtf_notebook.ops.array.space_depth import *  # noqa: F403
from dtf_notebook.ops.array_ops import *  # noqa: F403
from dtf_notebook.ops.assert_op import *  # noqa: F403
from dtf_notebook.ops.check_ops import *  # noqa: F403
from dtf_notebook.ops.complex_ops import *  # noqa: F403
from dtf_notebook.ops.constant_op import *  # noqa: F403
from dtf_notebook.ops.control_flow_ops import *  # noqa: F403
from dtf_notebook.ops.create_partitioned_variables import *  # noqa: F403
from dtf_notebook.ops.custom_gradient import *  # noqa: F403
from dtf_notebook.ops.data_flow_ops import *  # noqa: F403
from dtf_notebook.ops.file_ops import *  # noqa: F403
from dtf_notebook.ops.functional_ops import *  # noqa: F403
from dtf_notebook.ops.identity_ops import *  # noqa: F403
from dtf_notebook.ops.image.crops import extract_image_patches
from dtf_notebook.ops.init_ops import *  # noqa: F403
from dtf_notebook.ops.io import *  # noqa: F403
from dtf_notebook.ops.linalg.composites import *  # noqa: F403
from dtf_notebook.ops.linalg.decompositions import *  # noqa: F403
from dtf_notebook.ops.linalg.solvers import *  # noqa: F403
from dtf_notebook.ops.logging_ops import *  # noqa: F403
from dtf_notebook.ops.math.bitwise import *  # noqa: F403
from dtf_notebook.ops.math.clip_norm import *  # noqa: F403
from dtf_notebook.ops.math.einsum import *  # noqa: F403
from dtf_notebook.ops.math.reductions import *  # noqa: F403
from dtf_notebook.ops.math.safe_div import *  # noqa: F403
from dtf_notebook.ops.math.scan import *  # noqa: F403
from dtf_notebook.ops.math.segment import *  # noqa: F403
from dtf_notebook.ops.math.select_v2 import *  # noqa: F403
from dtf_notebook.ops.math.sequences import *  # noqa: F403
from dtf_notebook.ops.math.sorting import *  # noqa: F403
from dtf_notebook.ops.math.special import *  # noqa: F403
from dtf_notebook.ops.math.trig import *  # noqa: F403
from dtf_notebook.ops.math_ops import *  # noqa: F403
from dtf_notebook.ops.numerics_ops import *  # noqa: F403
from dtf_notebook.ops.partitioners import *  # noqa: F403
from dtf_notebook.ops.placeholder_ops import *  # noqa: F403
from dtf_notebook.ops.random_distribution_ops import random_gamma, random_poisson
from dtf_notebook.ops.random_ops import *  # noqa: F403
from dtf_notebook.ops.script_ops import *  # noqa: F403
from dtf_notebook.ops.serialization_ops import *  # noqa: F403
from dtf_notebook.ops.sparse import *  # noqa: F403
from dtf_notebook.ops.spectral_ops import *  # noqa: F403
from dtf_notebook.ops.state_ops import *  # noqa: F403
from dtf_notebook.ops.string_ops import *  # noqa: F403
from dtf_notebook.ops.template import *  # noqa: F403
from dtf_notebook.ops.tensor_array_ops import *  # noqa: F403
from dtf_notebook.ops.variable_creator import *  # noqa: F403
from dtf_notebook.ops.variable_scope import *  # noqa: F403
from dtf_notebook.ops.variables import *  # noqa: F403
from dtf_notebook.platform.tf_logging import get_logger
from dtf_notebook.protos.config_pb import (
    ConfigProto,
    GPUOptions,
    GraphOptions,
    OptimizerOptions,
    RunMetadata,
    RunOptions,
)
from dtf_notebook.runtime.session import InteractiveSession, Session, get_default_session
