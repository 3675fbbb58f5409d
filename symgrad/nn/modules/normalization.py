"""``nn.LayerNorm``: normalisation over the last dims, with a learned scale (ones at
first) and shift (zeros)."""
from __future__ import annotations

from ...api.creation import ones, zeros
from .. import functional as F
from ..parameter import Parameter
from .module import Module

__all__ = ["LayerNorm"]


class LayerNorm(Module):
    """``F.layer_norm`` over ``normalized_shape`` with ``weight`` and ``bias``.

    Examples
    --------
    >>> import symgrad as torch
    >>> ln = torch.nn.LayerNorm(4)
    >>> ln
    LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
    >>> ln(torch.arange(8.0).reshape(2, 4)).grad_fn
    <NativeLayerNormBackward0 object at ...>
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(zeros(self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine="
                f"{self.elementwise_affine}, bias={self.bias is not None}")
