"""Draws computed from the raw words of PyTorch's engine, as PyTorch's CPU kernels compute
them, so that they are PyTorch's numbers for the same seed.

symgrad's generator is an MT19937 seeded as PyTorch seeds its CPU generator; these take
its numpy ``BitGenerator`` (``generator._np.bit_generator``) and read 32-bit words in
PyTorch's order: one word a draw (two, high first, for 64 bits).

Examples
--------
>>> import numpy as np
>>> bits = np.random.MT19937()
>>> bits.state = {"bit_generator": "MT19937",
...               "state": np.random.RandomState(0).get_state(legacy=False)["state"]}
>>> uniform(bits, (2,), 0.0, 1.0, np.float32)  # torch.manual_seed(0); torch.rand(2)
array([0.4962566, 0.7682218], dtype=float32)
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["words", "words64", "uniform", "integers"]

# The bits of a uniform draw of each float type: std::numeric_limits<T>::digits, except
# half precision, which PyTorch draws as float and rounds.
_DIGITS = {np.dtype(np.float16): 24, np.dtype(np.float32): 24, np.dtype(np.float64): 53}


def words(bits: np.random.BitGenerator, count: int) -> np.ndarray:
    """The next ``count`` 32-bit words (PyTorch's ``generator->random()``), as uint64."""
    return bits.random_raw(count)


def words64(bits: np.random.BitGenerator, count: int) -> np.ndarray:
    """The next ``count`` 64-bit draws (``generator->random64()``: two words, high first)."""
    pairs = bits.random_raw(2 * count).reshape(count, 2)
    return (pairs[:, 0] << np.uint64(32)) | pairs[:, 1]


def uniform(bits: np.random.BitGenerator, shape: tuple, low: float, high: float,
            dtype) -> np.ndarray:
    """``torch.empty(shape, dtype=dtype).uniform_(low, high)`` for a float dtype:
    the draw's low ``digits`` bits scaled to [0, 1), times ``high - low`` (computed in the
    dtype), plus ``low``, in double precision, rounded to the dtype."""
    dtype = np.dtype(dtype)
    digits = _DIGITS[dtype]
    count = math.prod(shape)
    raw = words64(bits, count) if digits == 53 else words(bits, count)
    unit = (raw & np.uint64(2 ** digits - 1)).astype(np.float64) * 2.0 ** -digits
    lo, hi = dtype.type(low), dtype.type(high)
    return (unit * np.float64(hi - lo) + np.float64(lo)).astype(dtype).reshape(shape)


def integers(bits: np.random.BitGenerator, shape: tuple, low: int, high: int) -> np.ndarray:
    """``torch.randint(low, high, shape)`` as int64: a word (a 64-bit draw when the range
    reaches 2**32) modulo the range, plus ``low``."""
    span = high - low
    count = math.prod(shape)
    if span >= 2 ** 32:
        values = [int(v) % span + low for v in words64(bits, count)]
        return np.array(values, dtype=np.int64).reshape(shape)
    return (words(bits, count) % np.uint64(span)).astype(np.int64).reshape(shape) + low
