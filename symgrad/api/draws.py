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

__all__ = ["words", "words64", "uniform", "integers", "normal"]

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


def _fill_16(block: np.ndarray) -> np.ndarray:
    """PyTorch's ``normal_fill_16``: Box-Muller on the pairs (j, j + 8) of 16 uniforms."""
    radius = np.sqrt(-2.0 * np.log(1.0 - block[:8]))
    theta = 2.0 * np.pi * block[8:]
    return np.concatenate([radius * np.cos(theta), radius * np.sin(theta)])


def normal(generator, shape: tuple, mean: float, std: float, dtype) -> np.ndarray:
    """``torch.empty(shape, dtype=dtype).normal_(mean, std)`` as PyTorch's CPU kernel: 16
    elements or more are uniforms turned in blocks of 16 by Box-Muller (the last block
    drawn again when 16 does not divide the size); fewer are drawn one by one in double
    precision, every second value kept by the generator for the next draw
    (``generator._normal``).  float64 results are PyTorch's to the bit; float32 ones may
    differ in the last bit (PyTorch's vectorised log, sin and cos)."""
    dtype = np.dtype(dtype)
    bits = generator._np.bit_generator
    count = math.prod(shape)
    if count >= 16:
        fill = np.float64 if dtype == np.float64 else np.float32
        data = uniform(bits, (count,), 0.0, 1.0, fill).astype(np.float64)
        for i in range(0, count - 15, 16):
            data[i:i + 16] = _fill_16(data[i:i + 16])
        if count % 16:
            data[count - 16:] = _fill_16(uniform(bits, (16,), 0.0, 1.0, fill).astype(
                np.float64))
        return (data * std + mean).astype(dtype).reshape(shape)
    out = np.empty(count)
    for i in range(count):
        if generator._normal is not None:
            value, generator._normal = generator._normal, None
        else:
            u1, u2 = (words64(bits, 2) & np.uint64(2 ** 53 - 1)) * 2.0 ** -53
            radius = math.sqrt(-2.0 * math.log1p(-u2))
            theta = 2.0 * math.pi * u1
            generator._normal = radius * math.sin(theta)
            value = radius * math.cos(theta)
        out[i] = value * std + mean
    return out.astype(dtype).reshape(shape)
