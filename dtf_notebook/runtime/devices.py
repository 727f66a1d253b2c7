"""The devices of one process: ``CPU:0``, CUDA GPUs, and CPU-backed virtual GPUs.

:func:`local_devices` applies a ``ConfigProto`` to what torch sees:
``gpu_options.visible_device_list`` picks and orders CUDA devices,
``device_count={"GPU": n}`` caps their number, the memory fraction becomes
torch's per-process limit, and ``virtual_gpus=K`` (or ``DTF_VIRTUAL_GPUS``)
replaces the GPUs by K devices that run on the CPU.

Example:
    >>> from dtf_notebook.runtime.config import ConfigProto
    >>> [d.name.rsplit("/", 1)[1] for d in local_devices(ConfigProto(virtual_gpus=2))]
    ['device:CPU:0', 'device:GPU:0', 'device:GPU:1']
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from dtf_notebook import errors
from dtf_notebook.lazy_modules import torch


@dataclass(frozen=True)
class LocalDevice:
    """One device of this process.

    Attributes:
        name: Full name, e.g. ``/job:worker/replica:0/task:1/device:GPU:0``.
        device_type: ``"CPU"`` or ``"GPU"``.
        index: Index within its type.
        torch_device: Where its tensors live.
        virtual: True for a GPU device backed by the CPU.
        memory_limit: Bytes this process may use on it (0 = unknown).

    Example:
        >>> d = LocalDevice("/job:localhost/replica:0/task:0/device:GPU:0", "GPU", 0, torch.device("cpu"), virtual=True)
        >>> d.device_type, d.virtual, d.describe()["torch_device"]
        ('GPU', True, 'cpu')
    """

    name: str
    device_type: str
    index: int
    torch_device: torch.device
    virtual: bool = False
    memory_limit: int = 0

    @property
    def memory_limit_bytes(self) -> int:
        """TF1's name for :attr:`memory_limit` (``sess.list_devices()[i].memory_limit_bytes``).

        Example:
            >>> LocalDevice("/device:CPU:0", "CPU", 0, torch.device("cpu"), memory_limit=1024).memory_limit_bytes
            1024
        """
        return self.memory_limit

    def describe(self) -> dict[str, Any]:
        """Plain data about this device (for listings and the wire)."""
        return {
            "name": self.name,
            "device_type": self.device_type,
            "index": self.index,
            "torch_device": str(self.torch_device),
            "virtual": self.virtual,
            "memory_limit": self.memory_limit,
        }


def virtual_gpu_count(config: Any) -> int:
    """How many CPU-backed GPUs a config asks for (``virtual_gpus``, else ``DTF_VIRTUAL_GPUS``).

    Raises:
        InvalidArgumentError: ``DTF_VIRTUAL_GPUS`` is not a whole number.

    Example:
        >>> from dtf_notebook.runtime.config import ConfigProto
        >>> virtual_gpu_count(ConfigProto(virtual_gpus=2))
        2
    """
    count = int(getattr(config, "virtual_gpus", 0) or 0)
    if count:
        return count
    raw = os.environ.get("DTF_VIRTUAL_GPUS", "").strip()
    if not raw:
        return 0
    try:
        return max(0, int(raw))
    except ValueError:
        raise errors.InvalidArgumentError(None, None, f"DTF_VIRTUAL_GPUS must be a whole number, got {raw!r}") from None


def _device_count(config: Any) -> dict[str, int]:
    """``ConfigProto.device_count``: devices per type (a type it leaves out keeps its default)."""
    return getattr(config, "device_count", None) or {}


def _cuda_indices(config: Any) -> list[int]:
    if not torch.cuda.is_available():
        return []
    available = list(range(torch.cuda.device_count()))
    visible = getattr(getattr(config, "gpu_options", None), "visible_device_list", "") or ""
    if visible:
        try:
            wanted = [int(x) for x in visible.split(",") if x.strip()]
        except ValueError:
            raise errors.InvalidArgumentError(
                None, None, f"Could not parse entry in 'visible_device_list': '{visible}'"
            ) from None
        for idx in wanted:
            if idx not in available:
                raise errors.InvalidArgumentError(
                    None,
                    None,
                    f"'visible_device_list' listed an invalid GPU id '{idx}' but visible device count is "
                    f"{len(available)}",
                )
        available = wanted
    cap = _device_count(config).get("GPU")
    return available if cap is None else available[: max(0, int(cap))]


def local_devices(config: Any = None, job: str = "localhost", replica: int = 0, task: int = 0) -> list[LocalDevice]:
    """Devices of this process under ``config``, CPU first.

    ``ConfigProto(device_count={"CPU": n})`` makes ``n`` CPU devices (``/cpu:0`` ... ``/cpu:n-1``, all on the
    host's CPU, as in TF1), and ``{"GPU": n}`` caps the GPUs.

    Raises:
        InvalidArgumentError: the GPU options name GPUs that do not exist.
        NotFoundError: ``device_count`` allows no CPU device.

    Example:
        >>> local_devices()[0].name
        '/job:localhost/replica:0/task:0/device:CPU:0'
        >>> from dtf_notebook.runtime.config import ConfigProto
        >>> [d.name[-5:] for d in local_devices(ConfigProto(device_count={"CPU": 2}))]
        ['CPU:0', 'CPU:1']
    """
    prefix = f"/job:{job}/replica:{replica}/task:{task}/device:"
    cpus = int(_device_count(config).get("CPU", 1))
    if cpus < 1:
        raise errors.NotFoundError(None, None, "No CPU devices are available in this process")
    devices = [LocalDevice(f"{prefix}CPU:{i}", "CPU", i, torch.device("cpu")) for i in range(cpus)]
    n_virtual = virtual_gpu_count(config)
    if n_virtual:
        devices += [
            LocalDevice(f"{prefix}GPU:{i}", "GPU", i, torch.device("cpu"), virtual=True) for i in range(n_virtual)
        ]
        return devices
    fraction = float(getattr(getattr(config, "gpu_options", None), "per_process_gpu_memory_fraction", 0.0) or 0.0)
    for i, cuda_index in enumerate(_cuda_indices(config)):
        total = torch.cuda.get_device_properties(cuda_index).total_memory
        limit = total
        if 0.0 < fraction <= 1.0:
            torch.cuda.set_per_process_memory_fraction(fraction, cuda_index)
            limit = int(total * fraction)
        elif fraction > 1.0:
            # TF allows >1 to oversubscribe with unified memory; torch cannot, so cap at the card.
            torch.cuda.set_per_process_memory_fraction(1.0, cuda_index)
        devices.append(LocalDevice(f"{prefix}GPU:{i}", "GPU", i, torch.device("cuda", cuda_index), memory_limit=limit))
    return devices
