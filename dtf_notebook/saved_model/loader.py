"""Loading a SavedModel into a session (TF1's ``tf.saved_model.loader``): the meta graph of a tag set is imported,
its variables restored from ``variables/``, its main op run with the asset files' paths fed.

Example:
    >>> maybe_saved_model_directory("memory://doc/loader/none")
    False
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework.graph import get_default_graph
from dtf_notebook.lib.io import file_io, tensor_bundle
from dtf_notebook.protos.saved_model_pb import SavedModel
from dtf_notebook.runtime import checkpoint_files
from dtf_notebook.saved_model import constants
from dtf_notebook.saved_model.builder import _join, variables_path
from dtf_notebook.saved_model.signatures import get_tensor_from_tensor_info

__all__ = ["contains_saved_model", "load", "maybe_saved_model_directory", "read_saved_model"]


def maybe_saved_model_directory(export_dir: Any) -> bool:
    """Whether ``export_dir`` holds a ``saved_model.pb`` or ``saved_model.pbtxt``."""
    export_dir = str(export_dir.decode() if isinstance(export_dir, bytes) else export_dir)
    return any(
        file_io.exists(_join(export_dir, name))
        for name in (constants.SAVED_MODEL_FILENAME_PB, constants.SAVED_MODEL_FILENAME_PBTXT)
    )


contains_saved_model = maybe_saved_model_directory


def read_saved_model(export_dir: str) -> Any:
    """The ``SavedModel`` message of ``export_dir`` (binary or text).

    Raises:
        OSError: neither file exists; IOError naming the file when it does not parse.
    """
    binary = _join(export_dir, constants.SAVED_MODEL_FILENAME_PB)
    text = _join(export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
    if file_io.exists(binary):
        data = checkpoint_files.read_bytes(binary)
        try:
            return SavedModel.FromString(data)
        except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and friends
            raise OSError(f"Cannot parse file {binary}: {e}") from None
    if file_io.exists(text):
        from google.protobuf import text_format

        try:
            return text_format.Parse(checkpoint_files.read_bytes(text).decode("utf-8"), SavedModel())
        except text_format.ParseError as e:
            raise OSError(f"Cannot parse file {text}: {e}") from None
    raise OSError(
        f"SavedModel file does not exist at: {export_dir}/{{{binary.rsplit('/', 1)[-1]}|{text.rsplit('/', 1)[-1]}}}"
    )


def load(sess: Any, tags: Sequence[str], export_dir: str, import_scope: str | None = None, **saver_kwargs: Any) -> Any:
    """Loads the meta graph tagged ``tags`` into ``sess``'s graph, restores its variables, runs its main op; returns
    the ``MetaGraphDef`` (its ``signature_def`` names the inputs and outputs to feed and fetch).

    Raises:
        RuntimeError: no meta graph has exactly these tags (the message lists the tag sets there are).
        OSError: ``export_dir`` holds no SavedModel.
    """
    from dtf_notebook.train.meta_graph import import_meta_graph

    export_dir = str(export_dir.decode() if isinstance(export_dir, bytes) else export_dir)
    model = read_saved_model(export_dir)
    wanted = set(tags)
    found = [m for m in model.meta_graphs if set(m.meta_info_def.tags) == wanted]
    if not found:
        available = [list(m.meta_info_def.tags) for m in model.meta_graphs]
        raise RuntimeError(
            f"MetaGraphDef associated with tags {sorted(wanted)!r} could not be found in SavedModel. To inspect "
            f"available tag-sets in the SavedModel, please use the SavedModel CLI: `saved_model_cli`\n"
            f"available_tags: {available}"
        )
    meta = found[0]
    graph = sess.graph if getattr(sess, "graph", None) is not None else get_default_graph()
    with graph.as_default():
        saver = import_meta_graph(meta, import_scope=import_scope, **saver_kwargs)
        checkpoint = variables_path(export_dir)
        if saver is not None and file_io.exists(tensor_bundle.index_filename(checkpoint)):
            saver.restore(sess, checkpoint)
        elif saver is not None and graph.get_collection("variables"):
            raise errors.NotFoundError(None, None, f"The SavedModel at {export_dir} has variables but no checkpoint")
        feed = {}
        for asset in meta.asset_file_def:
            tensor = get_tensor_from_tensor_info(asset.tensor_info, graph, import_scope)
            feed[tensor] = _join(export_dir, constants.ASSETS_DIRECTORY, asset.filename).encode("utf-8")
        scope = import_scope.rstrip("/") + "/" if import_scope else ""
        for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
            ops = meta.collection_def[key].node_list.value if key in meta.collection_def else []
            if ops:
                sess.run(graph.get_operation_by_name(scope + ops[0].split(":")[0]), feed_dict=feed or None)
                break
    return meta
