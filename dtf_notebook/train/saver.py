"""``tf.train.Saver``: saves and restores variables with ops that run where the variables live.

The constructor adds a filename tensor (``save/Const``), save ops and restore ops to the graph.
``save`` feeds the checkpoint prefix and runs the save tensor; ``restore`` runs ``restore_all``.

* Non-sharded: one ``SaveShard`` op on the saver's default device writes every variable into one
  shard file (variables on other tasks travel there, as with TF's single SaveV2).
* ``sharded=True``: the variables are grouped by device, one ``SaveShard`` per group placed on
  that group's device (CPU), so each task -- e.g. each parameter server -- writes its own shard
  from its own process, in parallel, and restores its own variables; tensors never pass through
  the client. On a cluster of several machines the checkpoint directory must be a filesystem or
  object store every task sees: a shared mount, or an fsspec URL such as ``s3://`` or ``gs://``.

Each shard is written under a temporary name; one ``MergeCheckpointShards`` op then moves the
shards into place and writes the index last, and ``save`` updates the ``checkpoint`` state file
only after that. A task that dies in the middle of a save therefore leaves the previous
checkpoint intact and ``latest_checkpoint`` pointing at it. Partitioned variables are saved as
slices of one full variable and restore whole or partitioned differently. The files are TF's V2 checkpoint format
(``P.index`` and ``P.data-NNNNN-of-MMMMM``), which real TF restores.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default():
    ...     w = tf.Variable([1.0, 2.0], name="w")
    ...     step = tf.train.get_or_create_global_step()
    ...     saver = tf.train.Saver(max_to_keep=2)
    ...     with tf.Session() as sess:
    ...         sess.run(tf.global_variables_initializer())
    ...         path = saver.save(sess, "memory://doc/saver/model.ckpt", global_step=step)
    ...         _ = sess.run(tf.assign(w, [0.0, 0.0]))
    ...         saver.restore(sess, tf.train.latest_checkpoint("memory://doc/saver"))
    ...         print(path, sess.run(w))
    memory://doc/saver/model.ckpt-0 [1. 2.]
"""

from __future__ import annotations

import contextlib
import logging
import math
import numbers
import os
import time
from collections.abc import Sequence
from typing import Any

from dtf_notebook import errors
from dtf_notebook.framework.graph import GraphKeys, get_collection
from dtf_notebook.ops.variables import global_variables
from dtf_notebook.runtime import checkpoint_files
from dtf_notebook.train import checkpoint_management, training_util
from dtf_notebook.train.checkpoint_management import (
    checkpoint_exists,
    get_checkpoint_mtimes,
    get_checkpoint_state,
    latest_checkpoint,
)
from dtf_notebook.train.meta_graph import export_meta_graph
from dtf_notebook.train.saver_builder import BulkSaverBuilder, SaverDef, saver_def_with

__all__ = ["Saver", "SaverDef", "checkpoint_exists", "get_checkpoint_state", "latest_checkpoint"]

_log = logging.getLogger(__name__)


def _wrap_restore_error(err: errors.OpError, cause: str) -> errors.OpError:
    message = (
        f"Restoring from checkpoint failed. This is most likely due to {cause} from the checkpoint. Please "
        f"ensure that you have not altered the graph expected based on the checkpoint. Original error:\n\n"
        f"{err.message}"
    )
    return type(err)(err.node_def, err.op, message)


class Saver:
    """Saves and restores variables (TF1's ``tf.train.Saver``).

    Args:
        var_list: Variables to save: a list (saved under their op names; partitioned variables under
            their full name) or a dict of saved names to variables. Default: every global variable and
            the ``SAVEABLE_OBJECTS`` collection.
        reshape: Restore a saved tensor of another shape with the same number of elements, reshaped.
        sharded: One shard per device, written by the task holding it (see the module docstring).
        max_to_keep: Keep this many recent checkpoints, deleting older ones (None or 0 keeps all).
        keep_checkpoint_every_n_hours: Additionally keep one checkpoint per this many hours.
        name: Name scope of the added ops (default ``save``).
        restore_sequentially: Restore one device's variables after another (lowers peak memory).
        saver_def: Reuse the ops a previous Saver added to this graph instead of adding new ones.
        builder: What adds the ops when there is no ``saver_def`` (default: a
            :class:`~dtf_notebook.train.saver_builder.BulkSaverBuilder`): an object with TF's
            ``build(names_to_saveables, reshape=, sharded=, max_to_keep=, keep_checkpoint_every_n_hours=, name=,
            restore_sequentially=, filename=)`` returning a ``SaverDef``, such as a BulkSaverBuilder subclass.
        defer_build: Add the ops when ``build()`` is called (``var_list`` must then be None).
        allow_empty: Build a no-op saver when there is nothing to save, instead of raising.
        write_version: Kept for TF's signature: TF's V2 format is written whatever it says (TF's V1 format
            is neither written nor read).
        pad_step_number: Zero-pad the step in checkpoint names to 8 digits.
        save_relative_paths: Write paths relative to the directory into the state file.
        filename: Default prefix when none is fed.

    Raises:
        ValueError: no variables to save (and not ``allow_empty``), ``defer_build`` with a ``var_list``,
            or names that collide.
        TypeError: ``var_list`` holds something that is not a variable.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default():
        ...     v = tf.Variable(1.0, name="v")
        ...     saver = tf.train.Saver({"renamed": v})
        >>> saver.saver_def.save_tensor_name, saver.saver_def.restore_op_name
        ('save/control_dependency:0', 'save/restore_all')
    """

    def __init__(
        self,
        var_list: Any = None,
        reshape: bool = False,
        sharded: bool = False,
        max_to_keep: int | None = 5,
        keep_checkpoint_every_n_hours: float = 10000.0,
        name: str | None = None,
        restore_sequentially: bool = False,
        saver_def: SaverDef | None = None,
        builder: Any = None,
        defer_build: bool = False,
        allow_empty: bool = False,
        write_version: int = SaverDef.V2,
        pad_step_number: bool = False,
        save_relative_paths: bool = False,
        filename: str | None = None,
    ) -> None:
        if defer_build and var_list:
            raise ValueError(
                "If `var_list` is provided then build cannot be deferred. Either set defer_build=False or "
                "var_list=None."
            )
        self._var_list = var_list
        self._reshape = reshape
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._name = name
        self._restore_sequentially = restore_sequentially
        self.saver_def = saver_def
        self._builder = builder
        self._is_built = False
        self._allow_empty = allow_empty
        self._is_empty: bool | None = None
        self._write_version = write_version
        self._pad_step_number = pad_step_number
        self._filename = filename
        self._save_relative_paths = save_relative_paths
        self._last_checkpoints: list[tuple[str, float]] = []
        self._checkpoints_to_be_deleted: list[tuple[str, float]] = []
        self._next_checkpoint_time = time.time() + keep_checkpoint_every_n_hours * 3600
        if not defer_build:
            self.build()

    # ---- building -------------------------------------------------------------------------------
    def build(self) -> None:
        """Adds the save and restore ops (once; later calls do nothing)."""
        if self._is_built:
            return
        self._is_built = True
        if self.saver_def is None:
            var_list = self._var_list
            if var_list is None:
                var_list = global_variables() + get_collection(GraphKeys.SAVEABLE_OBJECTS)
            if not var_list:
                if self._allow_empty:
                    self._is_empty = True
                    return
                raise ValueError("No variables to save")
            self._is_empty = False
            if self._builder is None:
                self._builder = BulkSaverBuilder(self._write_version)
            self.saver_def = self._builder.build(
                var_list,
                reshape=self._reshape,
                sharded=self._sharded,
                max_to_keep=self._max_to_keep,
                keep_checkpoint_every_n_hours=self._keep_checkpoint_every_n_hours,
                name=self._name,
                restore_sequentially=self._restore_sequentially,
                filename=self._filename,
            )
        else:
            self._is_empty = False
            if self._name:
                # A saver_def imported under a name scope: its names move into that scope (TF's rule).
                self.saver_def = saver_def_with(
                    self.saver_def,
                    filename_tensor_name=f"{self._name}/{self.saver_def.filename_tensor_name}",
                    save_tensor_name=f"{self._name}/{self.saver_def.save_tensor_name}",
                    restore_op_name=f"{self._name}/{self.saver_def.restore_op_name}",
                )
        if not self.saver_def.save_tensor_name or not self.saver_def.restore_op_name:
            raise ValueError(f"saver_def must name its save tensor and restore op: {self.saver_def}")
        self._next_checkpoint_time = time.time() + self.saver_def.keep_checkpoint_every_n_hours * 3600

    def as_saver_def(self) -> SaverDef | None:
        """The SaverDef of this saver."""
        return self.saver_def

    def to_proto(self, export_scope: str | None = None) -> SaverDef | None:
        """The SaverDef, with ``export_scope/`` stripped from its names (None when they lie outside it).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     saver = tf.train.Saver([tf.Variable(1.0)], name="outer/save")
            >>> saver.to_proto("outer").restore_op_name, saver.to_proto("elsewhere")
            ('save/restore_all', None)
        """
        if export_scope is None or self.saver_def is None:
            return self.saver_def
        scope = export_scope.rstrip("/") + "/"
        names = (self.saver_def.filename_tensor_name, self.saver_def.save_tensor_name, self.saver_def.restore_op_name)
        if not all(n.startswith(scope) for n in names):
            return None
        return saver_def_with(
            self.saver_def,
            filename_tensor_name=names[0][len(scope) :],
            save_tensor_name=names[1][len(scope) :],
            restore_op_name=names[2][len(scope) :],
        )

    @staticmethod
    def from_proto(saver_def: SaverDef, import_scope: str | None = None) -> Saver:
        """A Saver using the ops a previous saver (described by ``saver_def``) added to the graph."""
        return Saver(saver_def=saver_def, name=import_scope)

    # ---- the list of kept checkpoints -------------------------------------------------------------
    @property
    def last_checkpoints(self) -> list[str]:
        """Checkpoints not yet deleted, oldest first."""
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints: list[str]) -> None:
        """Sets the kept checkpoints (never deleted later: their time is +inf, as in TF)."""
        if not isinstance(last_checkpoints, list):
            raise TypeError(f"last_checkpoints must be a list, got {type(last_checkpoints).__name__}")
        self._last_checkpoints = [(s, math.inf) for s in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time: list[tuple[str, float]]) -> None:
        """Sets the kept checkpoints as ``(prefix, timestamp)`` pairs, oldest first."""
        if not isinstance(last_checkpoints_with_time, list):
            raise TypeError(f"last_checkpoints_with_time must be a list, got {type(last_checkpoints_with_time)}")
        self._last_checkpoints = [(str(p), float(t)) for p, t in last_checkpoints_with_time]

    def recover_last_checkpoints(self, checkpoint_paths: Sequence[str]) -> None:
        """Rebuilds the kept list after a restart from the checkpoints that still exist (index mtimes)."""
        found = []
        for path in checkpoint_paths:
            mtimes = get_checkpoint_mtimes([path])
            if mtimes:
                found.append((path, mtimes[0]))
        self.set_last_checkpoints_with_time(found)

    def _record_last_checkpoint(self, path: str) -> None:
        if not self.saver_def.max_to_keep:
            return
        self._last_checkpoints = [p for p in self._last_checkpoints if p[0] != path]
        self._last_checkpoints.append((path, time.time()))
        if len(self._last_checkpoints) > self.saver_def.max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _maybe_delete_old_checkpoints(self, meta_graph_suffix: str) -> None:
        if not self._checkpoints_to_be_deleted:
            return
        path, stamp = self._checkpoints_to_be_deleted.pop(0)
        if stamp > self._next_checkpoint_time:
            # keep_checkpoint_every_n_hours: this one is kept for good.
            self._next_checkpoint_time += self.saver_def.keep_checkpoint_every_n_hours * 3600
            return
        try:
            checkpoint_management.remove_checkpoint(path, self.saver_def.version, meta_graph_suffix)
        except errors.OpError as e:
            _log.warning("Ignoring: could not delete old checkpoint %s: %s", path, e)

    # ---- save / restore -------------------------------------------------------------------------
    def save(
        self,
        sess: Any,
        save_path: str,
        global_step: Any = None,
        latest_filename: str | None = None,
        meta_graph_suffix: str = "meta",
        write_meta_graph: bool = True,
        write_state: bool = True,
        strip_default_attrs: bool = False,
        save_debug_info: bool = False,
    ) -> str | None:
        """Saves the variables; returns the checkpoint prefix (``save_path-<step>`` with a global step).

        Args:
            sess: The session to run the save ops in.
            save_path: Prefix of the checkpoint files (a local path or fsspec URL).
            global_step: An int, or a tensor/variable/name whose value is appended to the prefix.
            latest_filename: Name of the state file in the directory (default ``checkpoint``).
            meta_graph_suffix: Suffix of the meta graph file.
            write_meta_graph: Also write ``<prefix>.meta``, the graph's ``MetaGraphDef`` (TF's format).
            write_state: Update the state file and delete checkpoints beyond ``max_to_keep``.
            strip_default_attrs: Leave out of the meta graph the node attrs equal to their op's default.
            save_debug_info: Also write ``<prefix>.debug``, where each node of the meta graph was created.

        Returns:
            The checkpoint prefix, or None for an empty saver.

        Raises:
            RuntimeError: ``build()`` was deferred and not called.
            TypeError: ``sess`` is not a session.
            ValueError: ``latest_filename`` has a directory part or collides with ``save_path``, or the
                directory does not exist.
            OpError: writing failed (the error names the file or the uninitialised variable).
        """
        if not self._is_built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        latest_filename = latest_filename or "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        save_path = os.fspath(save_path)
        if global_step is not None:
            if not isinstance(global_step, numbers.Integral):
                global_step = training_util.global_step(sess, global_step)
            step = f"{int(global_step):08d}" if self._pad_step_number else str(int(global_step))
            checkpoint_file = f"{save_path}-{step}"
        else:
            checkpoint_file = save_path
            if checkpoint_files.basename(save_path) == latest_filename and not self._sharded:
                raise ValueError(f"'latest_filename' collides with 'save_path': '{latest_filename}' and '{save_path}'")
        if not hasattr(sess, "run"):
            raise TypeError(f"'sess' must be a Session; {sess!r}")
        save_dir = checkpoint_files.dirname(save_path)
        model_checkpoint_path = None
        if not self._is_empty:
            try:
                result = sess.run(
                    self.saver_def.save_tensor_name, {self.saver_def.filename_tensor_name: checkpoint_file}
                )
            except (errors.FailedPreconditionError, errors.NotFoundError) as exc:
                if not checkpoint_files.isdir(save_dir):
                    raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.") from exc
                raise
            model_checkpoint_path = result.decode("utf-8") if isinstance(result, bytes) else str(result)
            if write_state:
                self._record_last_checkpoint(model_checkpoint_path)
                self._update_state(save_dir, model_checkpoint_path, latest_filename)
                self._maybe_delete_old_checkpoints(meta_graph_suffix)
        if write_meta_graph:
            meta_file = checkpoint_management.meta_graph_filename(checkpoint_file, meta_graph_suffix)
            graph = getattr(sess, "graph", None)
            with graph.as_default() if graph is not None else contextlib.nullcontext():
                self.export_meta_graph(
                    meta_file, strip_default_attrs=strip_default_attrs, save_debug_info=save_debug_info
                )
        return model_checkpoint_path

    def _update_state(self, save_dir: str, model_checkpoint_path: str, latest_filename: str) -> None:
        stamps = [t for _, t in self._last_checkpoints]
        if not stamps or not all(math.isfinite(t) for t in stamps):
            stamps = None  # TF's generator takes timestamps only as one finite time per kept path
        checkpoint_management.update_checkpoint_state_internal(
            save_dir=save_dir,
            model_checkpoint_path=model_checkpoint_path,
            all_model_checkpoint_paths=self.last_checkpoints,
            latest_filename=latest_filename,
            save_relative_paths=self._save_relative_paths,
            all_model_checkpoint_timestamps=stamps,
        )

    def export_meta_graph(
        self,
        filename: str | None = None,
        collection_list: Sequence[str] | None = None,
        as_text: bool = False,
        export_scope: str | None = None,
        clear_devices: bool = False,
        clear_extraneous_savers: bool = False,
        strip_default_attrs: bool = False,
        save_debug_info: bool = False,
    ) -> Any:
        """Writes the default graph's ``MetaGraphDef``, with this saver's ``SaverDef``, to ``filename`` (TF's
        binary format, or text with ``as_text``) and returns it (see ``tf.train.export_meta_graph``).

        Example:
            >>> import dtf_notebook as tf
            >>> with tf.Graph().as_default():
            ...     saver = tf.train.Saver([tf.Variable(1.0, name="v")])
            ...     saver.export_meta_graph().saver_def.restore_op_name
            'save/restore_all'
        """
        return export_meta_graph(
            filename,
            saver_def=self.saver_def,
            collection_list=collection_list,
            as_text=as_text,
            export_scope=export_scope,
            clear_devices=clear_devices,
            clear_extraneous_savers=clear_extraneous_savers,
            strip_default_attrs=strip_default_attrs,
            save_debug_info=save_debug_info,
        )

    def restore(self, sess: Any, save_path: str | None) -> None:
        """Restores the variables from the checkpoint ``save_path`` (restoring also initialises them).

        Raises:
            ValueError: ``save_path`` is None or names no checkpoint.
            NotFoundError: a variable is missing from the checkpoint (the message names it).
            InvalidArgumentError: a variable's shape or dtype differs from the saved one (names both and the file).
        """
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        prefix = os.fspath(save_path)
        if not checkpoint_exists(prefix):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {prefix}")
        _log.info("Restoring parameters from %s", prefix)
        try:
            sess.run(self.saver_def.restore_op_name, {self.saver_def.filename_tensor_name: prefix})
        except errors.NotFoundError as err:
            raise _wrap_restore_error(err, "a Variable name or other graph key that is missing") from None
        except errors.InvalidArgumentError as err:
            raise _wrap_restore_error(err, "a mismatch between the current graph and the graph") from None
