"""``randperm`` and the raw draws PyTorch's data loading takes from a generator.

symgrad's :class:`~symgrad.api.creation.Generator` runs PyTorch's CPU engine (an MT19937
seeded as PyTorch seeds it), so a permutation built here from its raw 32-bit words, with
PyTorch's algorithm, is the permutation PyTorch draws for the same seed.
"""
from __future__ import annotations

import numpy as np

from ..ops import dtypes as _dt
from .creation import _finish, _is_index, _rng, _tname
from .device import resolve

__all__ = ["randperm", "random_words", "random64"]

# PyTorch's CPU kernel shuffles by Fisher-Yates below this size and differently above it.
_FISHER_YATES_LIMIT = (2 ** 32 - 1) // 20
# The largest n a float type numbers exactly (PyTorch refuses more).
_EXACT = {"float16": 2049, "float32": 2 ** 24 + 1, "float64": 2 ** 53 + 1}


def random_words(count: int, generator=None) -> np.ndarray:
    """The next ``count`` raw 32-bit words of ``generator`` (default: the global one), as
    PyTorch's ``generator->random()`` returns them, in an int64 array."""
    return _rng(generator).bit_generator.random_raw(count).astype(np.int64)


def random64(generator=None) -> int:
    """One draw of ``torch.empty((), dtype=torch.int64).random_(generator=generator)``:
    two words joined (high first) and reduced below 2**63, as PyTorch's CPU kernel does."""
    hi, lo = random_words(2, generator).tolist()
    return ((hi << 32) | lo) % 2 ** 63


def _shuffle(n: int, generator) -> np.ndarray:
    perm = np.arange(n, dtype=np.int64)
    if n < 2:
        return perm
    if n >= _FISHER_YATES_LIMIT:  # PyTorch's other algorithm: only the distribution agrees
        return _rng(generator).permutation(n).astype(np.int64)
    # The swaps depend on each other: the targets are computed at once, the swaps in order.
    targets = random_words(n - 1, generator) % np.arange(n, 1, -1) + np.arange(n - 1)
    values = perm.tolist()
    for i, j in enumerate(targets.tolist()):
        values[i], values[j] = values[j], values[i]
    return np.array(values, dtype=np.int64)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad: bool = False,
             pin_memory: bool = False):
    """A random permutation of ``0 .. n-1``, as ``torch.randperm``: for the same seed, the
    same permutation as PyTorch's CPU generator draws.

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.randperm(4, generator=torch.Generator().manual_seed(0))
    tensor([0, 1, 3, 2])
    """
    resolve(device)
    if not _is_index(n):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not {_tname(n)}")
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt = _dt.as_dtype(dtype, "randperm") or _dt.int64
    if dt is _dt.bool:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    limit = _EXACT.get(dt.name)
    if limit is not None and n > limit:
        name = {"float16": "Half", "float32": "Float", "float64": "Double"}[dt.name]
        raise RuntimeError(f"n cannot be greater than {limit} for {name} type.")
    if dt is _dt.int32 and n > 2 ** 31:
        raise RuntimeError("value cannot be converted to type int without overflow")
    return _finish(_shuffle(n, generator).astype(dt.np), dt, requires_grad)
