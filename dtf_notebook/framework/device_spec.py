"""Device specifications (``/job:ps/replica:0/task:0/device:CPU:0``) and scopes.

A :class:`DeviceSpec` is an immutable, possibly partial, device name. Parsing,
formatting, error messages and merging follow TensorFlow's
``tensorflow/python/framework/device_spec.py`` (checked against TF 2.21's
``DeviceSpecV1``); :func:`canonical_name` and :func:`merge_device` follow
``tensorflow/python/framework/device.py``.

Nesting rule of ``Graph.device`` scopes (:func:`apply_device_stack`)
--------------------------------------------------------------------
Found in TF's ``Graph._apply_device_functions`` (unchanged since TF 1.x) and
confirmed with ``tf.Graph`` experiments. Entries are walked from the INNERMOST
scope outwards, updating ``op.device`` after each one (it starts as the op's
own device, ``""`` for a freshly created op):

* ``None`` stops the walk, so every scope outside it is ignored.
* A string / :class:`DeviceSpec` entry only fills the fields the op's current
  device lacks (``spec.make_merged_spec(current)``). As inner entries ran
  first, inner scopes win field by field: ``"/job:ps"`` inside
  ``"/job:worker/task:3/gpu:0"`` gives ``/job:ps/task:3/device:GPU:0``.
  Empty specs are no-ops.
* A callable is called with the op, whose ``.device`` then holds what the
  scopes *inside* it produced (never the outer ones), and its result REPLACES
  the device wholesale; scopes outside it then fill the fields it left unset.
  So a function in an outer scope overrides everything inside it.

Two deliberate deviations from TF, both invisible up to :func:`canonical_name`:
TF stores a function's result verbatim (``"/cpu:0"`` stays ``"/cpu:0"``) while
we canonicalise it at once (``"/device:CPU:0"``, and bad names fail early); a
function returning ``None`` is a ``TypeError`` in TF and means ``""`` here.

Example:
    >>> spec = DeviceSpec.from_string("/job:worker/task:1/gpu:1")
    >>> spec.job, spec.task, spec.device_type, spec.device_index
    ('worker', 1, 'GPU', 1)
    >>> str(spec)
    '/job:worker/task:1/device:GPU:1'
    >>> class Op:
    ...     device = ""
    >>> apply_device_stack(["/job:ps/task:0/cpu:0", "/job:worker", "/gpu:1", "/task:1"], Op())
    '/job:worker/task:1/device:GPU:1'
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

__all__ = [
    "DeviceFunction",
    "DeviceSpec",
    "DeviceStackEntry",
    "MergeDevice",
    "apply_device_stack",
    "canonical_name",
    "merge_device",
]

# Short-form device names ("/cpu:0", "/TPU:1") are only recognised for these;
# anything else needs the long form "/device:<TYPE>:<index>". TF adds the
# pluggable device types it finds at runtime, which we do not have.
_VALID_DEVICE_TYPES = frozenset({"CPU", "GPU", "TPU", "CUSTOM", "EPU"})

_Components = tuple["str | None", "int | None", "int | None", "str | None", "int | None"]


def _as_str_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _as_int_or_none(value: Any) -> int | None:
    # int() rather than a type check: TF accepts "3" (from parsing) and 3 alike,
    # and its ValueError text is what TF users see for "/task:x".
    return None if value is None else int(value)


def _as_device_type_or_none(device_type: Any) -> str | None:
    # TF only upper-cases the two legacy lowercase spellings; "Gpu" or "tpu"
    # given as a device_type stay as written.
    if device_type in ("cpu", "gpu"):
        return device_type.upper()
    return _as_str_or_none(device_type)


@functools.lru_cache(maxsize=4096)
def _string_to_components(spec: str) -> _Components:
    # Mirrors DeviceSpecV2._string_to_components branch for branch, so odd
    # inputs ("//job:ps//", "/:0", "/job:ps/job:wk") behave exactly like TF.
    job: str | None = None
    replica: str | None = None
    task: str | None = None
    device_type: str | None = None
    device_index: int | None = None
    for part in (x.split(":") for x in spec.split("/")):
        n = len(part)
        if n == 2 and part[0] == "job":
            job = part[1]
        elif n == 2 and part[0] == "replica":
            replica = part[1]
        elif n == 2 and part[0] == "task":
            task = part[1]
        elif n in (1, 2) and part[0].upper() in _VALID_DEVICE_TYPES:
            if device_type is not None:
                _raise_multiple_device_types(spec)
            device_type = part[0].upper()
            if n == 2 and part[1] != "*":
                device_index = int(part[1])
        elif n == 3 and part[0] == "device":
            if device_type is not None:
                _raise_multiple_device_types(spec)
            device_type = part[1]
            if part[2] != "*":
                device_index = int(part[2])
        elif part[0] != "":
            raise ValueError(f"Unknown attribute '{part[0]}' is encountered while parsing the device spec: '{spec}'.")
    return (
        _as_str_or_none(job),
        _as_int_or_none(replica),
        _as_int_or_none(task),
        _as_device_type_or_none(device_type),
        device_index,
    )


def _raise_multiple_device_types(spec: str) -> NoReturn:
    raise ValueError(f"Multiple device types are not allowed while parsing the device spec: {spec}.")


def _components_to_string(
    job: str | None,
    replica: int | None,
    task: int | None,
    device_type: str | None,
    device_index: int | None,
) -> str:
    parts = []
    if job is not None:
        parts.append(f"/job:{job}")
    if replica is not None:
        parts.append(f"/replica:{replica}")
    if task is not None:
        parts.append(f"/task:{task}")
    if device_type is not None:
        index = "*" if device_index is None else str(device_index)
        parts.append(f"/device:{device_type}:{index}")
    return "".join(parts)


class DeviceSpec:
    """An immutable, possibly partial, device specification.

    Every field is optional; ``device_index=None`` with a device type means
    "any index" and prints as ``*``. Equality and hashing go through the
    canonical string, as in TF.

    Example:
        >>> spec = DeviceSpec(job="ps", task=0, device_type="cpu", device_index=0)
        >>> spec
        DeviceSpec(job='ps', replica=None, task=0, device_type='CPU', device_index=0)
        >>> spec.to_string()
        '/job:ps/task:0/device:CPU:0'
        >>> DeviceSpec(device_type="GPU").to_string()
        '/device:GPU:*'
        >>> spec == DeviceSpec.from_string("/job:ps/task:0/cpu:0")
        True
    """

    __slots__ = (
        "_device_index",
        "_device_type",
        "_hash",
        "_job",
        "_replica",
        "_string",
        "_task",
    )

    _job: str | None
    _replica: int | None
    _task: int | None
    _device_type: str | None
    _device_index: int | None
    _string: str
    _hash: int

    def __init__(
        self,
        job: str | None = None,
        replica: int | None = None,
        task: int | None = None,
        device_type: str | None = None,
        device_index: int | None = None,
    ) -> None:
        # object.__setattr__ because our own __setattr__ forbids mutation.
        init = object.__setattr__
        init(self, "_job", _as_str_or_none(job))
        init(self, "_replica", _as_int_or_none(replica))
        init(self, "_task", _as_int_or_none(task))
        init(self, "_device_type", _as_device_type_or_none(device_type))
        init(self, "_device_index", _as_int_or_none(device_index))
        string = _components_to_string(self._job, self._replica, self._task, self._device_type, self._device_index)
        init(self, "_string", string)
        init(self, "_hash", hash(string))

    @classmethod
    def from_string(cls, spec: str | None) -> DeviceSpec:
        """Parses ``/job:<name>/replica:<i>/task:<i>/device:<TYPE>:<i>`` (all parts optional).

        Short forms (``/cpu:0``, ``/GPU:1``, ``/gpu:*``) and a missing leading
        slash are accepted, like TF. Raises ``ValueError`` with TF's message on
        an unknown attribute, a second device type, or a non-integer index.

        Example:
            >>> DeviceSpec.from_string("/job:worker/task:1/gpu:*").to_string()
            '/job:worker/task:1/device:GPU:*'
            >>> DeviceSpec.from_string("job:ps").job
            'ps'
            >>> DeviceSpec.from_string("/foo:bar")
            Traceback (most recent call last):
            ...
            ValueError: Unknown attribute 'foo' is encountered while parsing the device spec: '/foo:bar'.
        """
        return cls(*_string_to_components(spec or ""))

    @classmethod
    def parse_from_string(cls, spec: str | None) -> DeviceSpec:
        """Alias of :meth:`from_string` (TF 2 semantics: returns a new spec).

        Example:
            >>> DeviceSpec.parse_from_string("/cpu:0").device_type
            'CPU'
        """
        return cls.from_string(spec)

    def to_string(self) -> str:
        """Returns the canonical string, listing only the fields that are set.

        Example:
            >>> DeviceSpec.from_string("/task:1/cpu:0").to_string()
            '/task:1/device:CPU:0'
            >>> DeviceSpec().to_string()
            ''
        """
        return self._string

    def make_merged_spec(self, dev: DeviceSpec | str) -> DeviceSpec:
        """Returns a new spec where the fields set in ``dev`` override ``self``'s.

        Example:
            >>> DeviceSpec.from_string("/job:ps/cpu:0").make_merged_spec("/gpu:1").to_string()
            '/job:ps/device:GPU:1'
        """
        other = _as_spec(dev)
        return DeviceSpec(
            other._job if other._job is not None else self._job,
            other._replica if other._replica is not None else self._replica,
            other._task if other._task is not None else self._task,
            other._device_type if other._device_type is not None else self._device_type,
            other._device_index if other._device_index is not None else self._device_index,
        )

    def merge_from(self, dev: DeviceSpec | str) -> DeviceSpec:
        """Same as :meth:`make_merged_spec`; returns the result since specs are immutable.

        TF1's ``DeviceSpecV1.merge_from`` mutated in place; callers here must
        use the return value.

        Example:
            >>> base = DeviceSpec(job="worker", task=3)
            >>> base.merge_from(DeviceSpec(job="ps")).to_string(), base.to_string()
            ('/job:ps/task:3', '/job:worker/task:3')
        """
        return self.make_merged_spec(dev)

    def replace(self, **kwargs: Any) -> DeviceSpec:
        """Returns a copy with the given constructor fields overridden (``None`` clears).

        Example:
            >>> DeviceSpec.from_string("/job:ps/gpu:0").replace(job=None, device_index=1).to_string()
            '/device:GPU:1'
        """
        fields: dict[str, Any] = {
            "job": self._job,
            "replica": self._replica,
            "task": self._task,
            "device_type": self._device_type,
            "device_index": self._device_index,
        }
        unknown = set(kwargs) - set(fields)
        if unknown:
            raise TypeError(f"DeviceSpec.replace() got unexpected fields: {sorted(unknown)}")
        fields.update(kwargs)
        return DeviceSpec(**fields)

    @property
    def job(self) -> str | None:
        """The job name, e.g. ``"ps"``.

        Example:
            >>> DeviceSpec.from_string("/job:ps").job
            'ps'
        """
        return self._job

    @property
    def replica(self) -> int | None:
        """The replica index.

        Example:
            >>> DeviceSpec.from_string("/replica:2").replica
            2
        """
        return self._replica

    @property
    def task(self) -> int | None:
        """The task index within the job.

        Example:
            >>> DeviceSpec.from_string("/task:1").task
            1
        """
        return self._task

    @property
    def device_type(self) -> str | None:
        """The device type, e.g. ``"CPU"`` or ``"GPU"``.

        Example:
            >>> DeviceSpec.from_string("/gpu:0").device_type
            'GPU'
        """
        return self._device_type

    @property
    def device_index(self) -> int | None:
        """The device index; ``None`` means any device of that type.

        Example:
            >>> DeviceSpec.from_string("/gpu:*").device_index is None
            True
        """
        return self._device_index

    def __str__(self) -> str:
        return self._string

    def __repr__(self) -> str:
        return (
            f"DeviceSpec(job={self._job!r}, replica={self._replica!r}, task={self._task!r}, "
            f"device_type={self._device_type!r}, device_index={self._device_index!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DeviceSpec):
            return NotImplemented
        return self._string == other._string

    def __hash__(self) -> int:
        return self._hash

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError(f"DeviceSpec is immutable; use replace() instead of setting {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"DeviceSpec is immutable; cannot delete {name!r}")

    def __reduce__(self) -> tuple[Any, ...]:
        # The default slot-state pickling would go through __setattr__.
        return (
            DeviceSpec,
            (
                self._job,
                self._replica,
                self._task,
                self._device_type,
                self._device_index,
            ),
        )


def _as_spec(device: DeviceSpec | str) -> DeviceSpec:
    if isinstance(device, DeviceSpec):
        return device
    if isinstance(device, str):
        return DeviceSpec.from_string(device)
    raise TypeError(f"Expected a device string or DeviceSpec, got {type(device).__name__}: {device!r}")


def canonical_name(device: str | DeviceSpec | None) -> str:
    """Returns the canonical string for a device name or spec (``None`` gives ``""``).

    Example:
        >>> canonical_name("/job:ps/cpu:0"), canonical_name(None)
        ('/job:ps/device:CPU:0', '')
        >>> canonical_name(DeviceSpec(device_type="GPU", device_index=1))
        '/device:GPU:1'
    """
    if device is None:
        return ""
    return _as_spec(device).to_string()


class MergeDevice:
    """Device function that fills in the fields an op's device does not set yet.

    The op's own (already set) fields win over this spec's; see
    :func:`merge_device`.

    Example:
        >>> class Op:
        ...     device = "/gpu:1"
        >>> MergeDevice("/job:ps/cpu:0")(Op())
        '/job:ps/device:GPU:1'
    """

    __slots__ = ("_spec",)

    def __init__(self, spec: str | DeviceSpec) -> None:
        self._spec = _as_spec(spec)

    @property
    def spec(self) -> DeviceSpec:
        """The wrapped spec.

        Example:
            >>> MergeDevice("/cpu:0").spec.to_string()
            '/device:CPU:0'
        """
        return self._spec

    @property
    def is_null_merge(self) -> bool:
        """True when the spec is empty, so applying it changes nothing.

        Example:
            >>> MergeDevice("").is_null_merge, MergeDevice("/cpu:0").is_null_merge
            (True, False)
        """
        return not self._spec.to_string()

    def __call__(self, op: Any) -> str:
        current = DeviceSpec.from_string(getattr(op, "device", "") or "")
        return self._spec.make_merged_spec(current).to_string()

    def __repr__(self) -> str:
        return f"MergeDevice({self._spec.to_string()!r})"


def merge_device(spec: str | DeviceSpec | MergeDevice) -> MergeDevice:
    """Returns a device function merging ``spec`` under the op's current device.

    This is what a string or :class:`DeviceSpec` scope does: given an object
    with a ``.device`` string, the fields it already has are kept and ``spec``
    fills the rest. Raises ``ValueError`` at once if ``spec`` is malformed.

    Example:
        >>> class Op:
        ...     device = "/job:ps"
        >>> merge_device("/job:worker/task:3/gpu:0")(Op())
        '/job:ps/task:3/device:GPU:0'
    """
    if isinstance(spec, MergeDevice):
        return spec
    return MergeDevice(spec)


# What a device scope may hold; exported for the Graph's device stack.
DeviceFunction = Callable[[Any], "str | DeviceSpec | None"]
DeviceStackEntry = str | DeviceSpec | DeviceFunction | None


def apply_device_stack(entries: Sequence[DeviceStackEntry], op: Any) -> str:
    """Computes an op's device from the graph's device scopes, ordered OUTERMOST first.

    Entries are applied innermost first as described in the module docstring;
    ``op.device`` is updated after each entry (device functions read it) and
    holds the returned canonical string at the end.

    Example:
        >>> class Op:
        ...     device = ""
        >>> apply_device_stack(["/job:worker/task:3/gpu:0", "/job:ps"], Op())
        '/job:ps/task:3/device:GPU:0'
        >>> apply_device_stack(["/job:ps/cpu:0", None, "/task:2"], Op())
        '/task:2'
        >>> apply_device_stack(["/job:worker", lambda op: "/gpu:0"], Op())
        '/job:worker/device:GPU:0'
    """
    device = canonical_name(getattr(op, "device", "") or "")
    op.device = device
    for entry in reversed(entries):
        if entry is None:
            break  # A None scope hides every scope outside it.
        if isinstance(entry, (str, DeviceSpec)):
            spec = _as_spec(entry)
            if not spec.to_string():
                continue  # TF skips null merges.
            device = spec.make_merged_spec(DeviceSpec.from_string(device)).to_string()
        elif callable(entry):
            device = canonical_name(entry(op))
        else:
            raise TypeError(
                "A device stack entry must be a device string, DeviceSpec, callable or None, "
                f"got {type(entry).__name__}: {entry!r}"
            )
        op.device = device
    return device
