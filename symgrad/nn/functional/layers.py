"""The functions behind course layers: ``linear``, ``softmax``/``log_softmax``,
``dropout``, ``one_hot``, ``normalize``, ``embedding``, ``layer_norm``, with PyTorch's
signatures and graphs."""
from __future__ import annotations

import warnings

import numpy as np

from ... import ops as O
from ...api.apply import apply
from ...api.construct import tensor
from ...api.core import Tensor
from ...api.creation import rand
from ...api.linalg import addmm
from ...autograd.grad_mode import no_grad
from ...ops.dtypes import int32, int64
from .padding import pad

__all__ = ["linear", "softmax", "log_softmax", "dropout", "one_hot", "normalize", "embedding",
           "layer_norm", "pad", "bilinear"]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``: ``AddmmBackward0`` (through views for other ranks than
    2), or the matrix product alone without a bias, as PyTorch records it.

    Examples
    --------
    >>> import symgrad as torch
    >>> import symgrad.nn.functional as F
    >>> w = torch.tensor([[1.0, 2.0]], requires_grad=True)
    >>> F.linear(torch.tensor([[3.0, 4.0]]), w, torch.tensor([0.5]))
    tensor([[11.5000]], grad_fn=<AddmmBackward0>)
    """
    if bias is None:
        return input.matmul(weight.t())
    if input.ndim == 2:
        return addmm(bias, input, weight.t())
    if not input.is_contiguous():  # (PyTorch folds only contiguous inputs into addmm)
        return input.matmul(weight.t()) + bias
    flat = input.reshape(-1, input.shape[-1]) if input.ndim else input.reshape(1, -1)
    return addmm(bias, flat, weight.t()).view(tuple(input.shape[:-1]) + (weight.shape[0],))


def _softmax_dim(name: str, ndim: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype=None) -> Tensor:
    """``exp(input) / exp(input).sum(dim)`` (``SoftmaxBackward0``)."""
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim)
    return input.softmax(dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype=None) -> Tensor:
    """``input - logsumexp(input, dim)`` (``LogSoftmaxBackward0``)."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim)
    return input.log_softmax(dim, dtype=dtype)


def dropout(input: Tensor, p: float = 0.5, training: bool = True,
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``
    (``MulBackward0`` by the mask); ``input`` itself when not training.  The mask is
    drawn from symgrad's generator (``manual_seed``)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    keep = (rand(tuple(input.shape), dtype=input.dtype) >= p).to(input.dtype)
    mask = keep * (0.0 if p == 1 else 1.0 / (1.0 - p))
    return input.mul_(mask) if inplace else input * mask


def one_hot(tensor_: Tensor, num_classes: int = -1) -> Tensor:
    """Class indices as rows of zeros with a one at the index (int64, no gradient).

    Examples
    --------
    >>> import symgrad as torch
    >>> import symgrad.nn.functional as F
    >>> F.one_hot(torch.tensor([0, 2]), 3)
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    if tensor_.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    t = tensor_.numpy()
    if t.size and t.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        if not t.size:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(t.max()) + 1
    elif t.size and t.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = tensor((np.arange(num_classes) == t[..., None]).astype(np.int64))
    out._vc[0] = 2  # PyTorch's result has been written twice (zeros, then scatter_)
    return out


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out=None) -> Tensor:
    """``input`` divided by its ``p``-norm along ``dim`` (at least ``eps``), as PyTorch
    composes it."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` looked up by the integer ``input`` (``EmbeddingBackward0``);
    ``padding_idx``'s row gets no gradient; with ``max_norm``, looked-up rows longer
    than it are scaled down in place first, as PyTorch does."""
    if input.dtype not in (int64, int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{input.type()} instead (while checking arguments for embedding)")
    n = weight.shape[0]
    if padding_idx is not None:
        if not -n <= padding_idx < n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        padding_idx %= n
    idx = input.numpy()
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        with no_grad():
            rows = np.unique(idx % n)
            norms = np.linalg.norm(weight.numpy(force=True)[rows].reshape(len(rows), -1),
                                   ord=norm_type, axis=1)
            for r, v in zip(rows, norms):
                if v > max_norm:
                    weight[int(r)] *= max_norm / (v + 1e-7)
    return apply(O.EMBEDDING, (weight, input % n if idx.size and idx.min() < 0 else input),
                 (-1 if padding_idx is None else padding_idx, scale_grad_by_freq, sparse))


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dims to zero mean and unit
    variance, then scale by ``weight`` and shift by ``bias`` (``NativeLayerNormBackward0``)."""
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError(f"layer_norm(): argument 'normalized_shape' (position 2) must be "
                        f"tuple of ints, not {type(normalized_shape).__name__}")
    shape = tuple(int(d) for d in normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape or len(shape) > input.ndim:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    return apply(O.NATIVE_LAYER_NORM, (input, weight, bias), (shape, eps))


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``y[..., o] = Σ_ij input1[..., i] · weight[o, i, j] · input2[..., j] + bias[o]``: as
    PyTorch records it, ``_trilinear`` (TrilinearBackward0) of the inputs as matrices,
    viewed to the output's shape, plus the bias."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError("bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    if weight.ndim != 3 or weight.shape[1] != input1.shape[-1] \
            or weight.shape[2] != input2.shape[-1]:
        raise RuntimeError(f"bilinear(): weight has shape {list(weight.shape)}, expected "
                           f"[out, {input1.shape[-1]}, {input2.shape[-1]}]")
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    y = apply(O.TRILINEAR, (x1, weight, x2), ((1, 3), (0,), (1, 2), (2, 3), 1))
    y = y.reshape(*input1.shape[:-1], weight.shape[0])
    return y + bias if bias is not None else y
