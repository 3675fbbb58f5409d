"""Activation functions whose PyTorch signature needs a front end (``inplace=``, options)."""
from __future__ import annotations

from ...api.core import Tensor

__all__ = ["relu"]


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """``max(input, 0)`` elementwise (``ReluBackward0``); ``inplace`` writes into ``input``.

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.nn.functional import relu
    >>> relu(torch.tensor([-1.0, 0.5], requires_grad=True))
    tensor([0.0000, 0.5000], grad_fn=<ReluBackward0>)
    """
    return input.relu_() if inplace else input.relu()
