"""``tf.estimator.Exporter`` and its kinds: what ``train_and_evaluate`` exports after an evaluation
(``EvalSpec(exporters=...)``), each into ``<model_dir>/export/<exporter name>/<timestamp>``.

* :class:`LatestExporter` exports after every evaluation and keeps the newest ``exports_to_keep``;
* :class:`FinalExporter` exports once, after the evaluation of the last training step's checkpoint;
* :class:`BestExporter` exports when an evaluation beats the best so far (``compare_fn``, by default a smaller
  loss), the best read first from the evaluation event files already in the model directory.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> receiver = tf.estimator.export.build_raw_serving_input_receiver_fn({"x": tf.placeholder(tf.float32)})
    >>> tf.estimator.LatestExporter("latest", receiver, exports_to_keep=2).name
    'latest'
"""

from __future__ import annotations

import abc
import inspect
import os
from collections.abc import Callable, Mapping
from typing import Any

from dtf_notebook import errors
from dtf_notebook.lib.io import file_io
from dtf_notebook.lib.io.matching_paths import glob
from dtf_notebook.platform import tf_logging as logging
from dtf_notebook.summary.summary_iterator import summary_iterator

__all__ = ["Exporter", "LatestExporter", "FinalExporter", "BestExporter"]


class Exporter(abc.ABC):
    """What an ``EvalSpec`` calls after each evaluation (TF's ``tf.estimator.Exporter``)."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """The directory under ``<model_dir>/export`` this exporter writes to."""

    @abc.abstractmethod
    def export(
        self,
        estimator: Any,
        export_path: str,
        checkpoint_path: str,
        eval_result: Mapping[str, Any],
        is_the_final_export: bool,
    ) -> Any:
        """Exports ``estimator`` at ``checkpoint_path`` into ``export_path``; returns what it wrote (or None)."""


class _SavedModelExporter(Exporter):
    """What the exporters share: a name, and a SavedModel written by ``estimator.export_saved_model``, after which
    only the ``exports_to_keep`` newest exports stay (None: all)."""

    def __init__(
        self,
        name: str,
        serving_input_receiver_fn: Callable[[], Any],
        assets_extra: Mapping[str, str] | None = None,
        as_text: bool = False,
        exports_to_keep: int | None = None,
    ) -> None:
        self._name = name
        self._serving_input_receiver_fn = serving_input_receiver_fn
        self._assets_extra = assets_extra
        self._as_text = as_text
        _check_exports_to_keep(exports_to_keep)
        self._exports_to_keep = exports_to_keep

    @property
    def name(self) -> str:
        return self._name

    def _write(self, estimator: Any, export_path: str, checkpoint_path: str) -> bytes:
        result = estimator.export_saved_model(
            export_path,
            self._serving_input_receiver_fn,
            assets_extra=self._assets_extra,
            as_text=self._as_text,
            checkpoint_path=checkpoint_path,
        )
        _garbage_collect_exports(export_path, self._exports_to_keep)
        return result


def export_path(estimator: Any, name: str) -> str:
    """Where ``train_and_evaluate`` and an ``Experiment`` have the exporter or strategy ``name`` write:
    ``<model_dir>/export/<name>``."""
    return file_io.join(os.fsdecode(estimator.model_dir), "export", name)


def _check_exports_to_keep(exports_to_keep: int | None) -> None:
    if exports_to_keep is not None and exports_to_keep <= 0:
        raise ValueError(f"`exports_to_keep`, if provided, must be a positive number. Got {exports_to_keep}")


def _garbage_collect_exports(export_dir_base: str, exports_to_keep: int | None) -> None:
    """Deletes all but the newest ``exports_to_keep`` exports (directories named by their 10-digit timestamp)."""
    if exports_to_keep is None or not file_io.isdir(export_dir_base):
        return
    versions = sorted(
        int(name)
        for name in (n.rstrip("/") for n in file_io.listdir(export_dir_base))
        if len(name) == 10 and name.isdigit()
    )
    for version in versions[:-exports_to_keep]:
        path = file_io.join(export_dir_base, str(version))
        try:
            file_io.rmtree(path)
        except errors.NotFoundError as e:
            logging.warning("Can not delete %s recursively: %s", path, e)


class LatestExporter(_SavedModelExporter):
    """Exports after every evaluation, keeping the ``exports_to_keep`` newest exports (None: all).

    Raises:
        ValueError: ``exports_to_keep`` is not positive.

    Example:
        >>> LatestExporter("latest", lambda: None, exports_to_keep=0)
        Traceback (most recent call last):
        ValueError: `exports_to_keep`, if provided, must be a positive number. Got 0
    """

    def __init__(
        self,
        name: str,
        serving_input_receiver_fn: Callable[[], Any],
        assets_extra: Mapping[str, str] | None = None,
        as_text: bool = False,
        exports_to_keep: int | None = 5,
    ) -> None:
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text, exports_to_keep)

    def export(
        self,
        estimator: Any,
        export_path: str,
        checkpoint_path: str,
        eval_result: Mapping[str, Any],
        is_the_final_export: bool,
    ) -> bytes:
        return self._write(estimator, export_path, checkpoint_path)


class FinalExporter(_SavedModelExporter):
    """Exports once: after the evaluation of the checkpoint of the last training step (``TrainSpec.max_steps``).

    Example:
        >>> FinalExporter("final", lambda: None).export(None, "unused", "unused", {}, False) is None
        True
    """

    def export(
        self,
        estimator: Any,
        export_path: str,
        checkpoint_path: str,
        eval_result: Mapping[str, Any],
        is_the_final_export: bool,
    ) -> bytes | None:
        if not is_the_final_export:
            return None
        logging.info("Performing the final export in the end of training.")
        return self._write(estimator, export_path, checkpoint_path)


def _loss_smaller(best_eval_result: Mapping[str, Any], current_eval_result: Mapping[str, Any]) -> bool:
    """True when the current evaluation's ``loss`` is below the best's (TF's default ``compare_fn``)."""
    if not best_eval_result or "loss" not in best_eval_result:
        raise ValueError("best_eval_result cannot be empty or no loss is found in it.")
    if not current_eval_result or "loss" not in current_eval_result:
        raise ValueError("current_eval_result cannot be empty or no loss is found in it.")
    return best_eval_result["loss"] > current_eval_result["loss"]


def _check_compare_fn(compare_fn: Callable[..., bool] | None) -> None:
    if compare_fn is None:
        raise ValueError("`compare_fn` must not be None.")
    args = set(inspect.signature(compare_fn).parameters)
    for needed in ("best_eval_result", "current_eval_result"):
        if needed not in args:
            raise ValueError(f"compare_fn ({compare_fn}) must include {needed} argument.")
    extra = sorted(args - {"best_eval_result", "current_eval_result"})
    if extra:
        raise ValueError(f"compare_fn ({compare_fn}) has following not expected args: {extra}")


class BestExporter(_SavedModelExporter):
    """Exports when an evaluation is better than every one before it: ``compare_fn(best_eval_result=...,
    current_eval_result=...)`` says so (default: a smaller ``loss``). The best so far is first read from the
    evaluation summaries already written under the model directory (``event_file_pattern``), so a restarted
    evaluator exports only what beats the earlier runs too (the current evaluation's own summary aside). Keeps
    the ``exports_to_keep`` newest exports.

    Raises:
        ValueError: ``compare_fn`` is None or takes other arguments, or ``exports_to_keep`` is not positive.

    Example:
        >>> BestExporter(compare_fn=lambda best_eval_result: True)
        Traceback (most recent call last):
        ValueError: compare_fn (<function <lambda> at ...>) must include current_eval_result argument.
    """

    def __init__(
        self,
        name: str = "best_exporter",
        serving_input_receiver_fn: Callable[[], Any] | None = None,
        event_file_pattern: str | None = "eval/*.tfevents.*",
        compare_fn: Callable[..., bool] | None = _loss_smaller,
        assets_extra: Mapping[str, str] | None = None,
        as_text: bool = False,
        exports_to_keep: int | None = 5,
    ) -> None:
        _check_compare_fn(compare_fn)
        self._compare_fn = compare_fn
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text, exports_to_keep)
        self._event_file_pattern = event_file_pattern
        self._model_dir: str | None = None
        self._best_eval_result: Mapping[str, Any] | None = None

    def export(
        self,
        estimator: Any,
        export_path: str,
        checkpoint_path: str,
        eval_result: Mapping[str, Any],
        is_the_final_export: bool,
    ) -> bytes | None:
        if self._model_dir != estimator.model_dir and self._event_file_pattern:
            logging.info("Loading best metric from event files.")
            self._model_dir = estimator.model_dir
            pattern = os.path.join(self._model_dir, self._event_file_pattern)
            self._best_eval_result = self._best_in_events(pattern, eval_result.get("global_step"))
        if self._best_eval_result is not None and not self._compare_fn(
            best_eval_result=self._best_eval_result, current_eval_result=eval_result
        ):
            return None
        logging.info("Performing best model export.")
        self._best_eval_result = eval_result
        return self._write(estimator, export_path, checkpoint_path)

    def _best_in_events(self, pattern: str, current_step: Any) -> dict[str, float] | None:
        """The best evaluation among the scalar summaries of the event files matching ``pattern``, leaving out the
        current evaluation's (at ``current_step``: it is written before the exporters run, and would otherwise
        stop the first export; TF guards against that too)."""
        best: dict[str, float] | None = None
        for path in glob(pattern):
            for event in summary_iterator(path):
                if not event.HasField("summary") or (current_step is not None and event.step == int(current_step)):
                    continue
                result = {v.tag: v.simple_value for v in event.summary.value if v.HasField("simple_value")}
                if result and (best is None or self._compare_fn(best_eval_result=best, current_eval_result=result)):
                    best = result
        return best
