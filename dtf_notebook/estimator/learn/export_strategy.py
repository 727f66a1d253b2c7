"""``tf.contrib.learn``'s ``ExportStrategy`` and ``make_export_strategy``: what an ``Experiment`` exports after its
evaluations (``Experiment(export_strategies=...)``), into ``<model_dir>/export/<strategy name>/<timestamp>``.

Example:
    >>> import dtf_notebook.compat.v1 as tf
    >>> receiver = tf.estimator.export.build_raw_serving_input_receiver_fn({"x": tf.placeholder(tf.float32)})
    >>> tf.contrib.learn.make_export_strategy(receiver, exports_to_keep=2).name
    'Servo'
"""

from __future__ import annotations

import collections
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from dtf_notebook.estimator.estimator import Estimator
from dtf_notebook.estimator.exporter import _check_exports_to_keep, _garbage_collect_exports

__all__ = ["ExportStrategy", "make_export_strategy"]


class ExportStrategy(collections.namedtuple("ExportStrategy", ["name", "export_fn", "strip_default_attrs"])):
    """A named export function; :meth:`export` passes it what it takes of the checkpoint, the evaluation result and
    ``strip_default_attrs`` (TF1's ``tf.contrib.learn.ExportStrategy``).

    Example:
        >>> strategy = ExportStrategy("mine", lambda estimator, export_path: export_path)
        >>> strategy.export(None, "/tmp/exports/mine")
        '/tmp/exports/mine'
    """

    def __new__(cls, name: str, export_fn: Callable[..., Any], strip_default_attrs: bool | None = None):
        return super().__new__(cls, name, export_fn, strip_default_attrs)

    def export(
        self, estimator: Any, export_path: str, checkpoint_path: str | None = None, eval_result: Any = None
    ) -> Any:
        """Runs the export function with those of the checkpoint, the evaluation result and
        ``strip_default_attrs`` it takes (TF's rule: the others are not passed).

        Raises:
            ValueError: the function takes ``eval_result`` but not ``checkpoint_path``.
        """
        params = inspect.signature(self.export_fn).parameters
        kwargs: dict[str, Any] = {}
        if "checkpoint_path" in params:
            kwargs["checkpoint_path"] = checkpoint_path
        if "eval_result" in params:
            if "checkpoint_path" not in params:
                raise ValueError("An export_fn accepting eval_result must also accept checkpoint_path.")
            kwargs["eval_result"] = eval_result
        if "strip_default_attrs" in params:
            kwargs["strip_default_attrs"] = self.strip_default_attrs
        return self.export_fn(estimator, export_path, **kwargs)


def make_export_strategy(
    serving_input_fn: Callable[[], Any],
    default_output_alternative_key: str | None = None,
    assets_extra: Mapping[str, str] | None = None,
    as_text: bool = False,
    exports_to_keep: int | None = 5,
    strip_default_attrs: bool | None = None,
) -> ExportStrategy:
    """An ``ExportStrategy`` named ``Servo`` that exports a SavedModel with ``Estimator.export_savedmodel`` from
    ``serving_input_fn`` (a function returning a ``ServingInputReceiver``), keeping the ``exports_to_keep`` newest.

    Raises:
        ValueError: ``default_output_alternative_key`` (only contrib.learn's own Estimator takes it, and it is not
            built here) or a non-positive ``exports_to_keep``.

    Example:
        >>> make_export_strategy(lambda: None, default_output_alternative_key="head")
        Traceback (most recent call last):
        ValueError: default_output_alternative_key is not supported in core Estimator. Given: head
    """
    if default_output_alternative_key is not None:
        given = default_output_alternative_key
        raise ValueError(f"default_output_alternative_key is not supported in core Estimator. Given: {given}")
    _check_exports_to_keep(exports_to_keep)

    def export_fn(
        estimator: Any, export_dir_base: str, checkpoint_path: str | None = None, strip_default_attrs: bool = False
    ) -> bytes:
        if not isinstance(estimator, Estimator):
            raise TypeError(f"Export needs a tf.estimator.Estimator, given {type(estimator)}")
        result = estimator.export_savedmodel(
            export_dir_base,
            serving_input_fn,
            assets_extra=assets_extra,
            as_text=as_text,
            checkpoint_path=checkpoint_path,
            strip_default_attrs=bool(strip_default_attrs),
        )
        _garbage_collect_exports(export_dir_base, exports_to_keep)
        return result

    return ExportStrategy("Servo", export_fn, strip_default_attrs)
