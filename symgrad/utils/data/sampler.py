"""Samplers: the order in which a loader visits a dataset's indices, and batches of them.

Random samplers draw from symgrad's generator with PyTorch's algorithms (``randperm``, and
``randint`` as PyTorch's CPU kernel computes it from raw words), so for the same seed they
give PyTorch's order; :class:`WeightedRandomSampler` draws through ``multinomial``, whose
numbers are symgrad's own.

Examples
--------
>>> import symgrad as torch
>>> from symgrad.utils.data import BatchSampler, SequentialSampler
>>> list(BatchSampler(SequentialSampler(range(5)), batch_size=2, drop_last=False))
[[0, 1], [2, 3], [4]]
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Generic, TypeVar

import numpy as np

from ...api.creation import Generator, multinomial
from ...api.permutation import randperm, random64, random_words
from ...api.tensor import as_tensor
from ...ops import dtypes as _dt

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]

_T_co = TypeVar("_T_co", covariant=True)


class Sampler(Generic[_T_co]):
    """The base of samplers: ``__iter__`` yields indices (or lists of them)."""

    def __init__(self, data_source=None) -> None:
        pass

    def __iter__(self) -> Iterator[_T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``0, 1, ..., len(data_source) - 1``."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _randint_words(n: int, count: int, generator) -> list:
    """``torch.randint(high=n, size=(count,), generator=generator).tolist()`` as PyTorch's
    CPU kernel computes it: a word (two joined past 2**32) modulo ``n``."""
    if n >= 2 ** 32:
        words = random_words(2 * count, generator).reshape(-1, 2)
        return [((hi << 32) | lo) % n for hi, lo in words.tolist()]
    return (random_words(count, generator) % n).tolist()


def _check_positive(name: str, value) -> None:
    """PyTorch's error unless ``value`` (the argument ``name``) is a positive int."""
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got "
                         f"{name}={value}")


def _check_bool(name: str, value, error: type = ValueError) -> None:
    """PyTorch's error (``error``) unless ``value`` (the argument ``name``) is a bool."""
    if not isinstance(value, bool):
        raise error(f"{name} should be a boolean value, but got {name}={value}")


class RandomSampler(Sampler):
    """A random permutation of the indices (``replacement=False``) or ``num_samples``
    independent draws (``replacement=True``).  Without a generator, each iteration seeds
    a fresh one from the global generator, as PyTorch does."""

    def __init__(self, data_source, replacement: bool = False, num_samples=None,
                 generator=None) -> None:
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        _check_bool("replacement", self.replacement, TypeError)
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def _generator(self):
        if self.generator is not None:
            return self.generator
        return Generator().manual_seed(random64())

    def __iter__(self):
        yield from self._indices(self._generator())

    def _indices(self, generator) -> Iterator[int]:
        n = len(self.data_source)
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from _randint_words(n, 32, generator)
            yield from _randint_words(n, self.num_samples % 32, generator)
            return
        for _ in range(self.num_samples // n):
            yield from randperm(n, generator=generator).tolist()
        yield from randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self):
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices drawn with the given (unnormalised) weights."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator=None) -> None:
        _check_positive("num_samples", num_samples)
        _check_bool("replacement", replacement)
        weights = as_tensor(weights, dtype=_dt.float64)
        if len(weights.shape) != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights.shape)}")
        self.weights, self.num_samples = weights, num_samples
        self.replacement, self.generator = replacement, generator

    def __iter__(self):
        drawn = multinomial(self.weights, self.num_samples, self.replacement,
                            generator=self.generator)
        yield from iter(drawn.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler``; the last one shorter, or dropped
    when ``drop_last``."""

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        _check_positive("batch_size", batch_size)
        _check_bool("drop_last", drop_last)
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        it = iter(self.sampler)
        if self.drop_last:
            for batch in zip(*[it] * self.batch_size):
                yield [*batch]
            return
        batch = [*itertools.islice(it, self.batch_size)]
        while batch:
            yield batch
            batch = [*itertools.islice(it, self.batch_size)]

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


def _index_arrays(batch_sampler: BatchSampler) -> Iterator[np.ndarray] | None:
    """The batches of a default batch sampler over a sequential or random sampler as
    int64 arrays, drawn exactly as iterating it would draw them (the loader's fast path);
    ``None`` for any other sampler."""
    if type(batch_sampler) is not BatchSampler or type(batch_sampler.sampler) not in (
            SequentialSampler, RandomSampler):
        return None
    sampler = batch_sampler.sampler
    if type(sampler) is RandomSampler:
        order = np.fromiter(sampler._indices(sampler._generator()), dtype=np.int64)
    else:
        order = np.arange(len(sampler), dtype=np.int64)
    return _split(order, batch_sampler.batch_size, batch_sampler.drop_last)


def _split(order: np.ndarray, size: int, drop_last: bool) -> Iterator[np.ndarray]:
    end = len(order) - len(order) % size if drop_last else len(order)
    for start in range(0, end, size):
        yield order[start:start + size]
