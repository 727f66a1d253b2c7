"""Writing a SavedModel: ``SavedModelBuilder`` (TF1's ``tf.saved_model.builder``), ``simple_save`` and the main op.

``add_meta_graph_and_variables`` saves the session's variables as a TF V2 checkpoint in ``variables/`` (a sharded
``Saver``, as TF's builder, so each task writes its own variables) and records the graph's ``MetaGraphDef`` with its
tags, signatures, assets and main op; ``add_meta_graph`` adds another tag set over the same variables; ``save``
writes ``saved_model.pb`` (or ``.pbtxt``). Real TF loads the result (tested with ``tf.saved_model.loader.load``).

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> from dtf_notebook.saved_model import loader, signatures
    >>> with tf.Graph().as_default():
    ...     x = tf.placeholder(tf.float32, [None], name="x")
    ...     w = tf.Variable(3.0, name="w")
    ...     y = tf.identity(x * w, name="y")
    ...     with tf.Session() as sess:
    ...         sess.run(w.initializer)
    ...         simple_save(sess, "memory://doc/saved_model/m", {"x": x}, {"y": y})
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     meta = loader.load(sess, ["serve"], "memory://doc/saved_model/m")
    ...     signature = meta.signature_def["serving_default"]
    ...     sess.run(signature.outputs["y"].name, {signature.inputs["x"].name: [1.0, 2.0]})
    array([3., 6.], dtype=float32)
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from typing import Any

from dtf_notebook.framework.graph import GraphKeys, get_default_graph
from dtf_notebook.lib.io import file_io
from dtf_notebook.ops import identity_ops, lookup_ops, variables
from dtf_notebook.protos.saved_model_pb import SavedModel
from dtf_notebook.runtime import checkpoint_files
from dtf_notebook.saved_model import constants
from dtf_notebook.saved_model.signatures import build_tensor_info, predict_signature_def

__all__ = ["SavedModelBuilder", "main_op", "main_op_with_restore", "simple_save"]


def _join(directory: str, *names: str) -> str:
    return checkpoint_files.join(directory, posixpath.join(*names))


def variables_path(export_dir: str) -> str:
    """The checkpoint prefix of a SavedModel's variables: ``<export_dir>/variables/variables``."""
    return _join(export_dir, constants.VARIABLES_DIRECTORY, constants.VARIABLES_FILENAME)


class SavedModelBuilder:
    """Builds a SavedModel in ``export_dir`` (see the module docstring).

    Raises:
        AssertionError: ``export_dir`` exists already (TF's check: a SavedModel is never written over another).
    """

    def __init__(self, export_dir: str) -> None:
        export_dir = str(export_dir.decode() if isinstance(export_dir, bytes) else export_dir)
        if file_io.exists(export_dir):
            if file_io.listdir(export_dir):
                raise AssertionError(
                    f"Export directory already exists, and isn't empty. Please choose a different export directory, "
                    f"or delete all the contents of the specified directory: {export_dir}"
                )
        else:
            file_io.makedirs(export_dir)
        self._export_dir = export_dir
        self._saved_model = SavedModel(saved_model_schema_version=constants.SAVED_MODEL_SCHEMA_VERSION)
        self._has_saved_variables = False
        self._assets: dict[str, str] = {}  # name in assets/ -> the file copied there

    # ---- one tag set -----------------------------------------------------------------------------------
    def _meta_graph(
        self,
        saver: Any,
        tags: Sequence[str],
        signature_def_map: Mapping[str, Any] | None,
        assets_collection: Sequence[Any] | None,
        main_op: Any,
        legacy_init_op: Any,
        train_op: Any,
        clear_devices: bool,
        strip_default_attrs: bool,
    ) -> None:
        for key, signature in (signature_def_map or {}).items():
            for kind, infos in (("inputs", signature.inputs), ("outputs", signature.outputs)):
                for name, info in infos.items():
                    if info.WhichOneof("encoding") is None:
                        raise AssertionError(
                            f"All TensorInfo protos used in the SignatureDefs must have the name and dtype fields "
                            f"set: {key}.{kind}[{name!r}] has no tensor name"
                        )
        graph = get_default_graph()
        init = main_op if main_op is not None else legacy_init_op
        if init is not None:
            key = constants.MAIN_OP_KEY if main_op is not None else constants.LEGACY_INIT_OP_KEY
            for existing in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
                if graph.get_collection(existing):
                    raise ValueError(f"Graph already contains one or more main ops under the collection {existing}.")
            graph.add_to_collection(key, init if hasattr(init, "node_def") else init.op)
        if train_op is not None:
            graph.add_to_collection(constants.TRAIN_OP_KEY, train_op)
        meta = saver.export_meta_graph(clear_devices=clear_devices, strip_default_attrs=strip_default_attrs)
        meta.meta_info_def.tags.extend(tags)
        for key, signature in (signature_def_map or {}).items():
            meta.signature_def[key].CopyFrom(signature)
        self._save_assets(meta, assets_collection)
        self._saved_model.meta_graphs.append(meta)

    def _save_assets(self, meta: Any, assets_collection: Sequence[Any] | None) -> None:
        """Copies each asset file (a string constant naming it) into ``assets/`` and records it in the meta
        graph's ``asset_file_def``; a loader feeds the copy's path to the same tensor."""
        if not assets_collection:
            return
        directory = _join(self._export_dir, constants.ASSETS_DIRECTORY)
        file_io.makedirs(directory)
        for tensor in assets_collection:
            source = tensor.op.get_attr("value").item()
            source = source.decode() if isinstance(source, bytes) else str(source)
            name = self._asset_name(source)
            destination = _join(directory, name)
            if not file_io.exists(destination):
                file_io.copy(source, destination, overwrite=False)
            asset = meta.asset_file_def.add(filename=name)
            asset.tensor_info.CopyFrom(build_tensor_info(tensor))

    def _asset_name(self, source: str) -> str:
        """The name of ``source`` in ``assets/``: its own, or with ``_1``, ``_2``, ... when a file of other bytes took
        that name already (TF's rule); the same file added twice keeps one copy."""
        base = posixpath.basename(source)
        name, suffix = base, 0
        while name in self._assets:
            known = self._assets[name]
            if known == source or file_io.read_file_to_string(known, True) == file_io.read_file_to_string(source, True):
                return name
            suffix += 1
            name = f"{base}_{suffix}"
        self._assets[name] = source
        return name

    def add_meta_graph_and_variables(
        self,
        sess: Any,
        tags: Sequence[str],
        signature_def_map: Mapping[str, Any] | None = None,
        assets_collection: Sequence[Any] | None = None,
        legacy_init_op: Any = None,
        clear_devices: bool = False,
        main_op: Any = None,
        strip_default_attrs: bool = False,
        saver: Any = None,
        init_op: Any = None,
        train_op: Any = None,
    ) -> None:
        """Saves the variables of ``sess`` and the current graph under ``tags`` (once per builder).

        Args:
            sess: The session holding the variables' values.
            tags: The tag set of this meta graph (``[tf.saved_model.tag_constants.SERVING]``).
            signature_def_map: Signature key -> ``SignatureDef``.
            assets_collection: String constants naming asset files (copied into ``assets/``).
            legacy_init_op, main_op, init_op: An op the loader runs after restoring (``main_op`` wins).
            clear_devices: Leave out the ops' device requests (the model is served elsewhere).
            strip_default_attrs: Leave out attrs at their default values.
            saver: The Saver to save with (default: a sharded Saver of every saveable variable, empty allowed).
            train_op: An op recorded under ``saved_model_train_op``.

        Raises:
            AssertionError: variables were saved already (use :meth:`add_meta_graph`).
        """
        if self._has_saved_variables:
            raise AssertionError(
                "Graph state including variables and assets has already been saved. Please invoke "
                "`add_meta_graph()` instead."
            )
        saver = saver or _default_saver()
        file_io.makedirs(_join(self._export_dir, constants.VARIABLES_DIRECTORY))
        saver.save(sess, variables_path(self._export_dir), write_meta_graph=False, write_state=False)
        self._meta_graph(
            saver,
            tags,
            signature_def_map,
            assets_collection,
            main_op if main_op is not None else init_op,
            legacy_init_op,
            train_op,
            clear_devices,
            strip_default_attrs,
        )
        self._has_saved_variables = True

    def add_meta_graph(
        self,
        tags: Sequence[str],
        signature_def_map: Mapping[str, Any] | None = None,
        assets_collection: Sequence[Any] | None = None,
        legacy_init_op: Any = None,
        clear_devices: bool = False,
        main_op: Any = None,
        strip_default_attrs: bool = False,
        saver: Any = None,
    ) -> None:
        """Records the current graph under another tag set, over the variables already saved.

        Raises:
            AssertionError: no variables were saved yet (call :meth:`add_meta_graph_and_variables` first).
        """
        if not self._has_saved_variables:
            raise AssertionError(
                "Graph state including variables and assets has not been saved yet. Please invoke "
                "`add_meta_graph_and_variables()` first."
            )
        self._meta_graph(
            saver or _default_saver(),
            tags,
            signature_def_map,
            assets_collection,
            main_op,
            legacy_init_op,
            None,
            clear_devices,
            strip_default_attrs,
        )

    def save(self, as_text: bool = False) -> bytes:
        """Writes ``saved_model.pb`` (``saved_model.pbtxt`` with ``as_text``); returns its path (bytes, as TF)."""
        if as_text:
            from google.protobuf import text_format

            path = _join(self._export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
            checkpoint_files.write_atomic(path, text_format.MessageToString(self._saved_model).encode("utf-8"))
        else:
            path = _join(self._export_dir, constants.SAVED_MODEL_FILENAME_PB)
            checkpoint_files.write_atomic(path, self._saved_model.SerializeToString())
        return path.encode("utf-8")


def _default_saver() -> Any:
    from dtf_notebook.train.saver import Saver

    saveables = get_default_graph().get_collection(GraphKeys.GLOBAL_VARIABLES)
    saveables += get_default_graph().get_collection(GraphKeys.SAVEABLE_OBJECTS)
    return Saver(saveables or None, sharded=True, allow_empty=True)


def simple_save(
    session: Any, export_dir: str, inputs: Mapping[str, Any], outputs: Mapping[str, Any], legacy_init_op: Any = None
) -> None:
    """Writes a SavedModel for serving in one call: the ``serve`` tag, one Predict signature (``serving_default``)
    of ``inputs`` and ``outputs`` (name -> tensor), the graph's asset files, devices cleared (TF1's
    ``tf.saved_model.simple_save``)."""
    builder = SavedModelBuilder(export_dir)
    builder.add_meta_graph_and_variables(
        session,
        tags=[constants.SERVING],
        signature_def_map={constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: predict_signature_def(inputs, outputs)},
        assets_collection=get_default_graph().get_collection(GraphKeys.ASSET_FILEPATHS),
        main_op=legacy_init_op,
        clear_devices=True,
    )
    builder.save()


def main_op() -> Any:
    """The op a loader runs after restoring: initializes the local variables and the lookup tables."""
    return identity_ops.group(variables.local_variables_initializer(), lookup_ops.tables_initializer(), name="main_op")


def main_op_with_restore(restore_op_name: str) -> Any:
    """:func:`main_op`, then the restore op named ``restore_op_name``."""
    with get_default_graph().control_dependencies([main_op()]):
        return identity_ops.group(restore_op_name, name="main_op_with_restore")
