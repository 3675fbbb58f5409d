"""``F.pad`` in its four modes, as PyTorch records them: ``constant`` (``ConstantPadNd``),
``reflect`` and ``replicate`` (``ReflectionPad2DBackward0``, ``ReplicationPad1DBackward0``,
... ops of the table whose gradients pad again) and ``circular`` (as PyTorch's kernel:
a new tensor whose slices are copied in, ``CopySlices``), with PyTorch's checks and
messages.  The convolution modules' ``padding_mode`` pads through here.
"""
from __future__ import annotations

from ... import ops as O
from ...api.apply import apply
from ...api.core import Tensor

__all__ = ["pad"]

_MODES = ("constant", "reflect", "replicate", "circular")
_SUPPORTED = ("Supported combinations for non-constant padding:\n"
              "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
              "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
              "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _amounts(pad) -> tuple:
    if not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not "
                        f"{type(pad).__name__}")
    for k, p in enumerate(pad):
        if isinstance(p, bool) or not isinstance(p, int) and not (
                isinstance(p, Tensor) and p.ndim == 0 and not p.dtype.is_floating_point):
            raise TypeError("pad(): argument 'pad' (position 2) must be tuple of ints, but "
                            f"found element of type {type(p).__name__} at pos {k}")
    return tuple(int(p) for p in pad)


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad (or, with negative amounts, crop) the last ``len(pad) // 2`` dims: ``pad`` is
    ``(left, right, top, bottom, ...)`` from the last dim backwards.  ``constant`` fills
    with ``value``; ``reflect`` mirrors about the edge elements, ``replicate`` repeats
    them, ``circular`` wraps around (the last three pad 1 to 3 dims of a batched or
    unbatched input).

    Examples
    --------
    >>> import symgrad as torch
    >>> import symgrad.nn.functional as F
    >>> x = torch.tensor([[[1., 2., 3.]]], requires_grad=True)
    >>> F.pad(x, (2, 1), mode="reflect")
    tensor([[[3., 2., 1., 2., 3., 2.]]], grad_fn=<ReflectionPad1DBackward0>)
    >>> F.pad(x, (1, 1), mode="circular").detach()
    tensor([[[3., 1., 2., 3., 1.]]])
    """
    if mode not in _MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pad = _amounts(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the "
                           "input dimension but got padding length "
                           f"{len(pad)} and input of dimension {input.ndim}")
    if mode == "constant":
        return apply(O.CONSTANT_PAD_ND, (input,), (pad, 0.0 if value is None else value))
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    nd = len(pad) // 2
    if nd not in (1, 2, 3) or input.ndim not in (nd + 1, nd + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for "
                                  f"{input.ndim}D input tensor.\n{_SUPPORTED}")
    if mode == "circular":
        return _circular(input, pad)
    _check(input, pad, mode, nd)
    return apply(O.PADS[mode, nd], (input,), (pad,))


def _check(input: Tensor, pad: tuple, mode: str, nd: int) -> None:
    """PyTorch's checks of the reflection and replication kernels."""
    shape = list(input.shape)
    if any(n == 0 for n in shape[1:]):
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with "
                           "possibly 0 batch size and other non-zero dimensions for input, "
                           f"but got: {shape}")
    out = list(shape)
    for k in range(nd):
        axis = len(shape) - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        if mode == "reflect" and (lo >= shape[axis] or hi >= shape[axis]):
            raise RuntimeError(
                f"Argument #{4 + 2 * k}: Padding size should be less than the "
                f"corresponding input dimension, but got: padding ({lo}, {hi}) at "
                f"dimension {axis} of input {shape}")
        out[axis] = shape[axis] + lo + hi
    if nd == 1 and out[-1] < 1:
        raise RuntimeError(f"input (W: {shape[-1]}) is too small. Calculated output W: "
                           f"{out[-1]}")
    negative = [n for n in out if n < 0]
    if negative:
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative[0]}: "
                           f"{out}")


def _slice(t: Tensor, dim: int, start: int, end: int) -> Tensor:
    return apply(O.SLICE, (t,), (dim, start, end, 1))


def _circular(input: Tensor, pad: tuple) -> Tensor:
    """PyTorch's ``_pad_circular``: the input copied into the middle of a new tensor, then
    each dim's ends copied from the other side (corners written more than once)."""
    shape = list(input.shape)
    nd, rank = len(pad) // 2, input.ndim
    out_shape = list(shape)
    for k in range(nd):
        dim = rank - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        if lo > shape[dim] or hi > shape[dim]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        out_shape[dim] = shape[dim] + lo + hi
        if out_shape[dim] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = input.new_empty(tuple(out_shape))
    into, source = out, input
    for k in range(nd):
        dim = rank - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        into = _slice(into, dim, max(lo, 0), out_shape[dim] - max(hi, 0))
        source = _slice(source, dim, max(-lo, 0), shape[dim] - max(-hi, 0))
    into.copy_(source)
    for k in range(nd):
        dim = rank - 1 - k
        lo, hi, n = pad[2 * k], pad[2 * k + 1], out_shape[dim]
        if lo > 0:
            _slice(out, dim, 0, lo).copy_(_slice(out, dim, n - lo - max(hi, 0),
                                                 n - max(hi, 0)))
        if hi > 0:
            _slice(out, dim, n - hi, n).copy_(_slice(out, dim, max(lo, 0), max(lo, 0) + hi))
    return out
