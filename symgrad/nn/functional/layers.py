"""The functions behind course layers: ``linear``, ``softmax``/``log_softmax``,
``dropout``, ``one_hot``, ``normalize``, with PyTorch's signatures and graphs."""
from __future__ import annotations

import warnings

import numpy as np

from ...api.construct import tensor
from ...api.core import Tensor
from ...api.creation import rand
from ...api.linalg import addmm
from ...ops.dtypes import int64

__all__ = ["linear", "softmax", "log_softmax", "dropout", "one_hot", "normalize"]


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
