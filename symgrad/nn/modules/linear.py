"""``nn.Identity``, ``nn.Linear`` (``y = x Wᵀ + b``) and ``nn.Bilinear``
(``y = x₁ᵀ W x₂ + b``) with PyTorch's initialisation (U(-1/sqrt(fan_in), 1/sqrt(fan_in))
for weight and bias)."""
from __future__ import annotations

import math

from ...api.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear"]


def _weight_and_bias(module: Module, shape: tuple, bias: bool, device, dtype) -> None:
    """A layer's ``weight`` of ``shape`` and its ``bias`` (one per output, or None),
    initialised by the layer's ``reset_parameters``."""
    module.weight = Parameter(empty(shape, device=device, dtype=dtype))
    if bias:
        module.bias = Parameter(empty(shape[0], device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)
    module.reset_parameters()


class Identity(Module):
    """Returns its input (arguments are accepted and ignored, as in PyTorch)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` (``AddmmBackward0`` for a batch of rows).

    Examples
    --------
    >>> import symgrad as torch
    >>> layer = torch.nn.Linear(3, 2)
    >>> layer
    Linear(in_features=3, out_features=2, bias=True)
    >>> layer(torch.ones(4, 3)).grad_fn
    <AddmmBackward0 object at ...>
    >>> layer.weight.shape, layer.bias.shape
    (torch.Size([2, 3]), torch.Size([2]))
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        _weight_and_bias(self, (out_features, in_features), bias, device, dtype)

    def reset_parameters(self) -> None:
        # kaiming_uniform_ with a = sqrt(5): the bound 1/sqrt(fan_in), PyTorch's default
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """``y[o] = x1ᵀ · weight[o] · x2 + bias[o]``.

    >>> import symgrad as torch
    >>> torch.nn.Bilinear(2, 3, 4)
    Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in1_features, in2_features), bias, device,
                         dtype)

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
