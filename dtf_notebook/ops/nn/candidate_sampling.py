"""Candidate samplers of ``tf.nn`` (``tf.random``): uniform, log-uniform (Zipfian), fixed and learned unigram, and
all-candidates sampling, plus ``compute_accidental_hits`` — TF's ops of the same names.

Each sampler op draws ``num_sampled`` class ids from ``[0, range_max)`` and gives the expected count of every
sampled and true class: ``p * num_sampled`` when drawing with replacement, and TF's approximation
``1 - (1 - p) ** num_tries`` for unique draws, ``num_tries`` being how many draws it took to find
``num_sampled`` distinct ids. Probabilities and counts are computed in float32 as TF's kernels compute them;
the random stream is torch's, so seeded draws differ from TF's.

Example:
    >>> import dtf_notebook as tf
    >>> with tf.Graph().as_default(), tf.Session() as sess:
    ...     sampled, true_count, sampled_count = log_uniform_candidate_sampler(
    ...         [[0], [3]], 1, 4, unique=False, range_max=10, seed=1)
    ...     print(sess.run(true_count).round(4))
    [[1.1563]
     [0.3722]]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dtf_notebook import errors
from dtf_notebook.framework import dtypes, op_registry, random_seed
from dtf_notebook.framework.convert import convert_to_tensor
from dtf_notebook.framework.tensor import Tensor
from dtf_notebook.framework.tensor_shape import TensorShape
from dtf_notebook.lazy_modules import torch
from dtf_notebook.lib.io.gfile import GFile
from dtf_notebook.ops.nn.common import with_rank
from dtf_notebook.ops.op_helpers import make_op

__all__ = [
    "uniform_candidate_sampler",
    "log_uniform_candidate_sampler",
    "learned_unigram_candidate_sampler",
    "fixed_unigram_candidate_sampler",
    "all_candidate_sampler",
    "compute_accidental_hits",
]

_FLT_MAX = float(np.finfo(np.float32).max)


# ---- the samplers: probabilities and draws --------------------------------------------------------------------------
class _Sampler:
    """A distribution over ``[0, range)``: float32 probabilities and draws from a torch generator."""

    def __init__(self, range_max: int) -> None:
        self.range = range_max

    def probability(self, values: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def draw(self, count: int, gen: torch.Generator) -> np.ndarray:
        raise NotImplementedError

    def possible(self) -> int:
        """How many ids can be drawn at all (unique draws need at least ``num_sampled``)."""
        return self.range

    def update(self, true_classes: np.ndarray) -> None:
        """Learns from the true classes of a batch (only the learned unigram sampler does)."""


class _UniformSampler(_Sampler):
    def probability(self, values: np.ndarray) -> np.ndarray:
        return np.full(values.shape, np.float32(1.0 / self.range), np.float32)

    def draw(self, count: int, gen: torch.Generator) -> np.ndarray:
        return torch.randint(0, self.range, (count,), generator=gen, dtype=torch.int64).numpy()


class _LogUniformSampler(_Sampler):
    def __init__(self, range_max: int) -> None:
        super().__init__(range_max)
        self.log_range = math.log1p(range_max)

    def probability(self, values: np.ndarray) -> np.ndarray:
        v = values.astype(np.float64)
        return (np.log((v + 2.0) / (v + 1.0)) / self.log_range).astype(np.float32)

    def draw(self, count: int, gen: torch.Generator) -> np.ndarray:
        u = torch.rand(count, generator=gen, dtype=torch.float64).numpy()
        return (np.exp(u * self.log_range).astype(np.int64) - 1) % self.range


class _WeightedSampler(_Sampler):
    """Draws in proportion to float32 ``weights`` (one per id)."""

    def __init__(self, range_max: int, weights: np.ndarray) -> None:
        super().__init__(range_max)
        self.set_weights(weights)

    def set_weights(self, weights: np.ndarray) -> None:
        self.weights = weights.astype(np.float32)
        # TF sums the weights in float, one at a time.
        self.total = np.cumsum(self.weights, dtype=np.float32)[-1] if len(self.weights) else np.float32(0)
        self.cdf = np.cumsum(self.weights.astype(np.float64))

    def probability(self, values: np.ndarray) -> np.ndarray:
        inside = (values >= 0) & (values < len(self.weights))
        picked = self.weights[np.where(inside, values, 0)]
        return np.where(inside, picked / self.total, np.float32(0)).astype(np.float32)

    def possible(self) -> int:
        return int(np.count_nonzero(self.weights))

    def draw(self, count: int, gen: torch.Generator) -> np.ndarray:
        u = torch.rand(count, generator=gen, dtype=torch.float64).numpy() * self.cdf[-1]
        return np.minimum(np.searchsorted(self.cdf, u, side="right"), len(self.weights) - 1).astype(np.int64)


class _LearnedUnigramSampler(_WeightedSampler):
    """Every id starts with weight 1; each true class seen adds 1 (after the batch's draws), as in TF."""

    def __init__(self, range_max: int) -> None:
        super().__init__(range_max, np.ones(range_max, np.float32))

    def update(self, true_classes: np.ndarray) -> None:
        weights = self.weights.copy()
        np.add.at(weights, true_classes.reshape(-1), 1.0)
        self.set_weights(weights)


def _expected_count(p: np.ndarray, batch_size: int, num_tries: int) -> np.ndarray:
    if num_tries == batch_size:
        return (p * np.float32(batch_size)).astype(np.float32)
    return -np.expm1(np.float32(num_tries) * np.log1p(-p)).astype(np.float32)


def _sample_batch(sampler: _Sampler, num_sampled: int, unique: bool, gen: torch.Generator) -> tuple[np.ndarray, int]:
    """``(sampled ids, num_tries)``: unique draws keep drawing until ``num_sampled`` distinct ids were seen."""
    if not unique:
        return sampler.draw(num_sampled, gen), num_sampled
    draws = np.zeros(0, np.int64)
    chunk = max(2 * num_sampled, 64)
    while True:
        draws = np.concatenate([draws, sampler.draw(chunk, gen)])
        _, first = np.unique(draws, return_index=True)
        if len(first) >= num_sampled:
            order = np.sort(first)[:num_sampled]
            return draws[order], int(order[-1]) + 1
        chunk *= 2


# ---- ops ------------------------------------------------------------------------------------------------------------
def _range_sampler(cls: Callable[[int], _Sampler]) -> Callable[[Any, Any], _Sampler]:
    def make(op: Any, files: Any) -> _Sampler:
        range_max = op.get_attr("range_max")
        if range_max <= 0:
            raise errors.InvalidArgumentError(None, op, "range_max must be positive")
        return cls(range_max)

    return make


def _sampler_infer(op: Any) -> list:
    true_classes = op.inputs[0]
    n = op.get_attr("num_sampled")
    shape = with_rank(true_classes.shape, 2)
    return [
        (dtypes.int64, TensorShape([n])),
        (dtypes.float32, TensorShape([shape[0].value, op.get_attr("num_true")])),
        (dtypes.float32, TensorShape([n])),
    ]


def _checked_true_classes(op: Any, true_classes: torch.Tensor, num_true: int, range_max: int) -> np.ndarray:
    """The true classes as numpy, after TF's checks: a ``[batch, num_true]`` matrix of ids in ``[0, range_max)``."""
    if true_classes.dim() != 2:
        raise errors.InvalidArgumentError(None, op, "true_classes must be a matrix")
    if true_classes.shape[1] != num_true:
        raise errors.InvalidArgumentError(
            None, op, f"true_classes must have num_true columns, expected: {true_classes.shape[1]} was: {num_true}"
        )
    true = true_classes.cpu().numpy()
    outside = true[(true < 0) | (true >= range_max)]
    if outside.size:
        raise errors.InvalidArgumentError(
            None, op, f"`true_candidate` out of range [0, {range_max}), received {int(outside[0])}"
        )
    return true


def _sampler_kernel(make_sampler: Callable[[Any, Any], _Sampler]):
    def kernel(op: Any, ctx: Any):
        gen = ctx.generator(op.get_attr("seed"), op.get_attr("seed2"))
        # One sampler per node and session, as TF's kernel holds it: the learned one keeps learning across runs.
        sampler = ctx.resources.lookup_or_create("", f"{op.name}/sampler", lambda: make_sampler(op, ctx.state.files))
        num_true, num_sampled, unique = op.get_attr("num_true"), op.get_attr("num_sampled"), op.get_attr("unique")

        def run(true_classes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
            if unique and num_sampled > sampler.possible():
                raise errors.InvalidArgumentError(None, op, "Sampler's range is too small.")
            true = _checked_true_classes(op, true_classes, num_true, sampler.range)
            sampled, num_tries = _sample_batch(sampler, num_sampled, unique, gen)
            true_count = _expected_count(sampler.probability(true), num_sampled, num_tries)
            sampled_count = _expected_count(sampler.probability(sampled), num_sampled, num_tries)
            sampler.update(true)
            device = true_classes.device
            return (
                torch.from_numpy(sampled).to(device),
                torch.from_numpy(true_count).to(device),
                torch.from_numpy(sampled_count).to(device),
            )

        return run

    return kernel


def _all_sampler_kernel(op: Any, ctx: Any):
    num_true, num_sampled = op.get_attr("num_true"), op.get_attr("num_sampled")

    def run(true_classes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        _checked_true_classes(op, true_classes, num_true, num_sampled)
        device = true_classes.device
        return (
            torch.arange(num_sampled, dtype=torch.int64, device=device),
            torch.ones(true_classes.shape, dtype=torch.float32, device=device),
            torch.ones(num_sampled, dtype=torch.float32, device=device),
        )

    return run


def _read_vocab_weights(path: str) -> list[float]:
    weights = []
    with GFile(path, "r") as f:
        for line in f:
            cols = line.rstrip("\r\n").split(",")
            if not line.strip():
                continue
            try:
                weights.append(float(cols[-1]))
            except ValueError:
                raise errors.InvalidArgumentError(None, None, f"Wrong vocabulary format at line: {line}") from None
    return weights


def _fixed_unigram_sampler(op: Any, files: Any) -> _Sampler:
    num_shards, shard = op.get_attr("num_shards"), op.get_attr("shard")
    distortion = op.get_attr("distortion")
    reserved = [0.0 for word_id in range(op.get_attr("num_reserved_ids")) if word_id % num_shards == shard]
    vocab_file, unigrams = op.get_attr("vocab_file"), list(op.get_attr("unigrams"))
    if not vocab_file and not unigrams:
        raise errors.InvalidArgumentError(None, op, "Must provide either vocab_file or unigrams.")
    if vocab_file and unigrams:
        raise errors.InvalidArgumentError(None, op, "Must only provide one of vocab_file and unigrams.")
    if vocab_file:
        # read on the task: the file must lie inside its file roots, as any file a kernel opens
        unigrams = _read_vocab_weights(files.check(vocab_file, "read"))
    first_id = op.get_attr("num_reserved_ids")
    # Only the ids of this shard, each weight raised to `distortion` (TF's float rounding of a double pow).
    shard_weights = [
        np.float32(math.pow(np.float32(w), distortion))
        for word_id, w in enumerate(unigrams, start=first_id)
        if word_id % num_shards == shard
    ]
    weights = np.array(reserved + shard_weights, np.float32)
    range_max = op.get_attr("range_max")
    if range_max != len(weights):
        raise errors.InvalidArgumentError(
            None, op, f"range is {range_max} must be equal to weights size  {len(weights)}"
        )
    return _WeightedSampler(range_max, weights)


_SAMPLERS = {
    "UniformCandidateSampler": _range_sampler(_UniformSampler),
    "LogUniformCandidateSampler": _range_sampler(_LogUniformSampler),
    "LearnedUnigramCandidateSampler": _range_sampler(_LearnedUnigramSampler),
    "FixedUnigramCandidateSampler": _fixed_unigram_sampler,
}
for _type, _make in _SAMPLERS.items():
    op_registry.register_op(
        _type,
        infer=_sampler_infer,
        kernel=_sampler_kernel(_make),
        grad=op_registry.NOT_DIFFERENTIABLE,
        stateful=True,
    )
op_registry.register_op(
    "AllCandidateSampler",
    infer=_sampler_infer,
    kernel=_all_sampler_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
    stateful=True,
)


def _accidental_hits_kernel(op: Any, ctx: Any):
    num_true = op.get_attr("num_true")

    def run(true_classes: torch.Tensor, sampled: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if true_classes.dim() != 2 or true_classes.shape[1] != num_true:
            raise errors.InvalidArgumentError(None, op, "true_candidates must be a batch_size * num_true matrix")
        if sampled.dim() != 1:
            raise errors.InvalidArgumentError(
                None, op, "sampled_candidates must be a vector, which is typically an output from CandidateSampler"
            )
        # A repeated sampled id maps to its last position, as in TF's kernel.
        position = {int(v): i for i, v in enumerate(sampled.tolist())}
        indices, ids = [], []
        for i, row in enumerate(true_classes.tolist()):
            for label in row:
                pos = position.get(int(label))
                if pos is not None:
                    indices.append(i)
                    ids.append(pos)
        device = true_classes.device
        return (
            torch.tensor(indices, dtype=torch.int32, device=device),
            torch.tensor(ids, dtype=torch.int64, device=device),
            torch.full((len(ids),), -_FLT_MAX, dtype=torch.float32, device=device),
        )

    return run


op_registry.register_op(
    "ComputeAccidentalHits",
    infer=lambda op: [
        (dtypes.int32, TensorShape([None])),
        (dtypes.int64, TensorShape([None])),
        (dtypes.float32, TensorShape([None])),
    ],
    kernel=_accidental_hits_kernel,
    grad=op_registry.NOT_DIFFERENTIABLE,
)


# ---- builders -------------------------------------------------------------------------------------------------------
def _true_classes(true_classes: Any, num_true: int, op_type: str) -> Tensor:
    t = convert_to_tensor(true_classes, dtype=dtypes.int64, name="true_classes")
    shape = with_rank(t.shape, 2)
    if shape[1].value is not None and shape[1].value != num_true:
        raise ValueError(f"{op_type}: true_classes must have num_true={num_true} columns, got shape {t.shape}")
    return t


def _sampler_op(
    op_type: str,
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    seed: int | None,
    name: str | None,
    **attrs: Any,
) -> tuple[Tensor, Tensor, Tensor]:
    t = _true_classes(true_classes, num_true, op_type)
    if num_sampled < 1 or num_true < 1:
        raise ValueError(f"{op_type}: num_true and num_sampled must be positive, got {num_true} and {num_sampled}")
    seed1, seed2 = random_seed.get_seed(seed)
    all_attrs = {
        "num_true": int(num_true),
        "num_sampled": int(num_sampled),
        "unique": bool(unique),
        "seed": seed1 or 0,
        "seed2": seed2 or 0,
        **attrs,
    }
    op = make_op(op_type, [t], all_attrs, name=name or op_type)
    return op.outputs[0], op.outputs[1], op.outputs[2]


_SAMPLER_ARGS = """Args:
        true_classes: int64 ``[batch_size, num_true]``, the target classes.
        num_true: Targets per example.
        num_sampled: How many classes to sample.
        unique: Sample without replacement (in one batch).
        range_max: The number of classes.
        seed: Op seed (with the graph seed, see ``tf.set_random_seed``).
        name: Op name.

    Returns:
        ``(sampled_candidates, true_expected_count, sampled_expected_count)``: int64 ``[num_sampled]``, float32
        ``[batch_size, num_true]`` and float32 ``[num_sampled]``."""


def uniform_candidate_sampler(
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    seed: int | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Samples classes uniformly from ``[0, range_max)``.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     _, true_count, _ = tf.nn.uniform_candidate_sampler([[1]], 1, 5, False, 10, seed=2)
        ...     print(sess.run(true_count))
        [[0.5]]
    """
    return _sampler_op(
        "UniformCandidateSampler", true_classes, num_true, num_sampled, unique, seed, name, range_max=int(range_max)
    )


def log_uniform_candidate_sampler(
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    seed: int | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Samples classes from the log-uniform (Zipfian) distribution
    ``P(class) = (log(class + 2) - log(class + 1)) / log(range_max + 1)``: small ids (frequent words) more often.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     sampled, _, _ = tf.nn.log_uniform_candidate_sampler([[1]], 1, 6, True, 100, seed=3)
        ...     values = sess.run(sampled)
        >>> len(set(values.tolist())), bool((values < 100).all())
        (6, True)
    """
    return _sampler_op(
        "LogUniformCandidateSampler", true_classes, num_true, num_sampled, unique, seed, name, range_max=int(range_max)
    )


def learned_unigram_candidate_sampler(
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    seed: int | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Samples classes in proportion to how often each was a target so far (every class starts at 1).

    Raises:
        ValueError: ``range_max`` above 2**31 - 1.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     _, true_count, _ = tf.nn.learned_unigram_candidate_sampler([[2]], 1, 4, False, 4, seed=1)
        ...     print(sess.run(true_count), sess.run(true_count))
        [[1.]] [[1.6]]
    """
    if range_max > 2147483647:
        raise ValueError(f"Value of range_max:{range_max} is too large to handle")
    return _sampler_op(
        "LearnedUnigramCandidateSampler",
        true_classes,
        num_true,
        num_sampled,
        unique,
        seed,
        name,
        range_max=int(range_max),
    )


def fixed_unigram_candidate_sampler(
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    range_max: int,
    vocab_file: str = "",
    distortion: float = 1.0,
    num_reserved_ids: int = 0,
    num_shards: int = 1,
    shard: int = 0,
    unigrams: Sequence[float] = (),
    seed: int | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Samples classes from a fixed distribution: ``unigrams`` (or the last CSV column of ``vocab_file``) raised
    to ``distortion``, after ``num_reserved_ids`` ids of weight 0; with ``num_shards``, only the ids of
    ``shard`` (``id % num_shards == shard``), renumbered from 0.

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     _, true_count, _ = tf.nn.fixed_unigram_candidate_sampler(
        ...         [[0], [2]], 1, 2, False, 3, unigrams=[1.0, 1.0, 2.0], seed=1)
        ...     print(sess.run(true_count))
        [[0.5]
         [1. ]]
    """
    return _sampler_op(
        "FixedUnigramCandidateSampler",
        true_classes,
        num_true,
        num_sampled,
        unique,
        seed,
        name,
        range_max=int(range_max),
        vocab_file=str(vocab_file),
        distortion=float(distortion),
        num_reserved_ids=int(num_reserved_ids),
        num_shards=int(num_shards),
        shard=int(shard),
        unigrams=[float(u) for u in unigrams],
    )


def all_candidate_sampler(
    true_classes: Any,
    num_true: int,
    num_sampled: int,
    unique: bool,
    seed: int | None = None,
    name: str | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Returns every class ``0 .. num_sampled - 1`` as the sample, each with expected count 1 (for testing).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     print(sess.run(tf.nn.all_candidate_sampler([[1]], 1, 3, True)[0]))
        [0 1 2]
    """
    return _sampler_op("AllCandidateSampler", true_classes, num_true, num_sampled, unique, seed, name)


for _fn in (
    uniform_candidate_sampler,
    log_uniform_candidate_sampler,
    learned_unigram_candidate_sampler,
    fixed_unigram_candidate_sampler,
):
    _summary, _rest = _fn.__doc__.split("\n\n", 1)
    _fn.__doc__ = f"{_summary}\n\n    {_SAMPLER_ARGS}\n\n{_rest}"


def compute_accidental_hits(
    true_classes: Any, sampled_candidates: Any, num_true: int, seed: int | None = None, name: str | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """Where sampled candidates are true classes: ``(indices, ids, weights)`` — the example (row), the position in
    ``sampled_candidates``, and ``-FLT_MAX``, one entry per hit (a sampled id that repeats counts at its last
    position).

    Example:
        >>> import dtf_notebook as tf
        >>> with tf.Graph().as_default(), tf.Session() as sess:
        ...     hits = tf.nn.compute_accidental_hits([[1, 2], [3, 4]], [4, 7, 1], num_true=2)
        ...     print(sess.run(list(hits[:2])))
        [array([0, 1], dtype=int32), array([2, 0])]
    """
    t = _true_classes(true_classes, num_true, "ComputeAccidentalHits")
    s = convert_to_tensor(sampled_candidates, dtype=dtypes.int64, name="sampled_candidates")
    with_rank(s.shape, 1)
    seed1, seed2 = random_seed.get_seed(seed)
    attrs = {"num_true": int(num_true), "seed": seed1 or 0, "seed2": seed2 or 0}
    op = make_op("ComputeAccidentalHits", [t, s], attrs, name=name or "ComputeAccidentalHits")
    return op.outputs[0], op.outputs[1], op.outputs[2]
