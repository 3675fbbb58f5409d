"""``nn.Conv1d`` and ``nn.Conv2d``: a bank of learned filters (``weight`` of shape
``(out_channels, in_channels / groups, *kernel_size)``, one ``bias`` per output channel)
with PyTorch's initialisation (``kaiming_uniform_`` with ``a = sqrt(5)``, the bias from
U(-1/sqrt(fan_in), 1/sqrt(fan_in))) and its ``repr``."""
from __future__ import annotations

import math

from ...api.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d"]

_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n: int) -> tuple:
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


class _ConvNd(Module):
    """What ``Conv1d`` and ``Conv2d`` share; ``_nd`` spatial dims."""

    _nd = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None) -> None:
        super().__init__()
        nd = self._nd
        kernel_size, stride, dilation = (_ntuple(v, nd) for v in (kernel_size, stride,
                                                                  dilation))
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{ {'same', 'valid'} }")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        else:
            padding = _ntuple(padding, nd)
        if padding_mode not in _MODES:
            raise ValueError(f"padding_mode must be one of { set(_MODES) }, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.transposed, self.output_padding = dilation, False, (0,) * nd
        self.groups, self.padding_mode = groups, padding_mode
        self.weight = Parameter(empty((out_channels, in_channels // groups) + kernel_size,
                                      device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.weight.shape[2:])
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        if self.padding_mode != "zeros":
            raise NotImplementedError(f"{type(self).__name__}: padding_mode="
                                      f"'{self.padding_mode}' is not available in symgrad "
                                      "(only 'zeros')")
        conv = F.conv1d if self._nd == 1 else F.conv2d
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                    self.groups)

    def extra_repr(self) -> str:
        nd = self._nd
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * nd:
            s += ", padding={padding}"
        if self.dilation != (1,) * nd:
            s += ", dilation={dilation}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**vars(self))


class Conv1d(_ConvNd):
    """The 1-D convolution of ``(N, C, L)`` inputs (``ConvolutionBackward0``).

    >>> import symgrad as torch
    >>> torch.nn.Conv1d(2, 4, 3, stride=2, padding=1, bias=False)
    Conv1d(2, 4, kernel_size=(3,), stride=(2,), padding=(1,), bias=False)
    """

    _nd = 1


class Conv2d(_ConvNd):
    """The 2-D convolution of ``(N, C, H, W)`` inputs (``ConvolutionBackward0``).

    >>> import symgrad as torch
    >>> conv = torch.nn.Conv2d(1, 6, 5)
    >>> conv
    Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))
    >>> conv(torch.zeros(2, 1, 32, 32)).shape
    torch.Size([2, 6, 28, 28])
    """

    _nd = 2
