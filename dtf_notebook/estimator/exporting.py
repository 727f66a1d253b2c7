"""``Estimator.export_saved_model``: the model of the latest checkpoint as a SavedModel for serving.

The ``model_fn`` is called in PREDICT mode on the features a serving input receiver makes; each of its
``export_outputs`` (default: one ``PredictOutput`` of its predictions, ``serving_default``) becomes a
``SignatureDef`` over the receiver's tensors; the checkpoint's values are restored and written with the graph by a
``SavedModelBuilder`` into ``<export_dir_base>/<timestamp>`` (built under a temporary name, renamed when complete).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from dtf_notebook.estimator.export import PredictOutput
from dtf_notebook.estimator.model_fn import ModeKeys
from dtf_notebook.framework import graph as ops
from dtf_notebook.framework.random_seed import set_random_seed
from dtf_notebook.lib.io import file_io
from dtf_notebook.platform import tf_logging as logging
from dtf_notebook.runtime.session import Session
from dtf_notebook.saved_model import builder as saved_model_builder
from dtf_notebook.saved_model import constants
from dtf_notebook.saved_model.signatures import is_valid_signature
from dtf_notebook.train.saver import Saver

__all__ = ["export_saved_model"]


def _timestamped_dir(export_dir_base: str) -> str:
    """``<export_dir_base>/<seconds since the Epoch>``, one that does not exist yet (TF's naming)."""
    for _ in range(10):
        candidate = file_io.join(export_dir_base, str(int(time.time())))
        if not file_io.exists(candidate):
            return candidate
        time.sleep(1)  # TF's policy too: a directory per second
    raise RuntimeError(f"Failed to obtain a unique export directory name under {export_dir_base} after 10 attempts.")


def _export_outputs(spec: Any) -> dict[str, Any]:
    """The spec's export outputs with TF's default: a ``PredictOutput`` of the predictions when there are none, and
    a lone output also serving as ``serving_default``.

    Raises:
        ValueError: several outputs and none is ``serving_default``.
    """
    outputs = dict(spec.export_outputs or {})
    default = constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
    if not outputs:
        return {default: PredictOutput(spec.predictions)}
    if default not in outputs:
        if len(outputs) > 1:
            raise ValueError(
                "Multiple export_outputs were provided, but none of them is specified as the default.  Do this by "
                "naming one of them with signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY."
            )
        outputs[default] = next(iter(outputs.values()))
    return outputs


def _signature_defs(export_outputs: Mapping[str, Any], receiver: Any) -> dict[str, Any]:
    """One signature per output and receiver (the alternatives' named ``<receiver>:<output>``); one that cannot be
    built from a receiver (a Classify output of a non-string input, say) is left out with a warning, as TF does."""
    receivers = [("", receiver.receiver_tensors)]
    receivers += [(f"{name}:", tensors) for name, tensors in (receiver.receiver_tensors_alternatives or {}).items()]
    signatures = {}
    for prefix, tensors in receivers:
        for key, output in export_outputs.items():
            try:
                signature = output.as_signature_def(tensors)
            except ValueError as e:
                logging.warning("Export includes no signature %s%s: %s", prefix, key, e)
                continue
            if is_valid_signature(signature):
                signatures[prefix + key] = signature
    return signatures


def export_saved_model(
    estimator: Any,
    export_dir_base: str,
    serving_input_receiver_fn: Callable[[], Any],
    assets_extra: Mapping[str, str] | None = None,
    as_text: bool = False,
    checkpoint_path: str | None = None,
    strip_default_attrs: bool = False,
) -> bytes:
    """Writes ``estimator``'s model for serving (see the module docstring); returns the export directory (bytes).

    Raises:
        ValueError: no checkpoint to export, or no ``serving_input_receiver_fn``.
    """
    if serving_input_receiver_fn is None:
        raise ValueError("An input_receiver_fn must be defined.")
    checkpoint = checkpoint_path or estimator.latest_checkpoint()
    if not checkpoint:
        raise ValueError(f"Couldn't find trained model at {estimator.model_dir}.")
    export_dir_base = os.fsdecode(export_dir_base)
    export_dir = _timestamped_dir(export_dir_base)
    temporary = file_io.join(export_dir_base, "temp-" + export_dir.rsplit("/", 1)[-1])
    with ops.Graph().as_default() as graph:
        set_random_seed(estimator.config.tf_random_seed)
        estimator._create_global_step(graph)
        receiver = serving_input_receiver_fn()
        spec = estimator._call_model_fn(receiver.features, None, ModeKeys.PREDICT, estimator.config)
        signatures = _signature_defs(_export_outputs(spec), receiver)
        local_init = spec.scaffold.local_init_op if spec.scaffold is not None else None
        saver = spec.scaffold.saver if spec.scaffold is not None and spec.scaffold.saver else Saver(sharded=True)
        with Session(config=estimator._session_config) as sess:
            saver.restore(sess, checkpoint)
            builder = saved_model_builder.SavedModelBuilder(temporary)
            builder.add_meta_graph_and_variables(
                sess,
                [constants.SERVING],
                signature_def_map=signatures,
                assets_collection=graph.get_collection(ops.GraphKeys.ASSET_FILEPATHS),
                main_op=local_init if local_init is not None else saved_model_builder.main_op(),
                strip_default_attrs=strip_default_attrs,
                saver=saver,
            )
            builder.save(as_text)
    for destination, source in (assets_extra or {}).items():
        target = file_io.join(temporary, constants.EXTRA_ASSETS_DIRECTORY, destination)
        file_io.makedirs(target.rsplit("/", 1)[0])
        file_io.copy(source, target, overwrite=True)
    file_io.rename(temporary, export_dir)
    return export_dir.encode("utf-8")
