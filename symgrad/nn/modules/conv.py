"""``nn.Conv1d`` and ``nn.Conv2d``: a bank of learned filters (``weight`` of shape
``(out_channels, in_channels / groups, *kernel_size)``, one ``bias`` per output channel);
``nn.ConvTranspose1d`` and ``nn.ConvTranspose2d`` (``weight`` ``(in_channels,
out_channels / groups, *kernel_size)``)
with PyTorch's initialisation (``kaiming_uniform_`` with ``a = sqrt(5)``, the bias from
U(-1/sqrt(fan_in), 1/sqrt(fan_in))) and its ``repr``."""
from __future__ import annotations

import math

from ...api.creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]

_MODES = ("zeros", "reflect", "replicate", "circular")


def _ntuple(value, n: int) -> tuple:
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


class _ConvNd(Module):
    """What ``Conv1d`` and ``Conv2d`` share; ``_nd`` spatial dims."""

    _nd = 2
    _transposed = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device=None, dtype=None, output_padding=0) -> None:
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
        self.dilation, self.transposed = dilation, self._transposed
        self.output_padding = _ntuple(output_padding, nd)
        self.groups, self.padding_mode = groups, padding_mode
        shape = (in_channels, out_channels // groups) if self.transposed else (
            out_channels, in_channels // groups)
        self.weight = Parameter(empty(shape + kernel_size, device=device, dtype=dtype))
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

    @property
    def _reversed_padding_repeated_twice(self) -> list:
        """What ``F.pad`` gets for a padding mode other than zeros, as PyTorch computes it:
        ``(left, right)`` per spatial dim from the last ('same': the total split, the
        larger half after)."""
        nd = self._nd
        if isinstance(self.padding, str):
            out = [0, 0] * nd
            if self.padding == "same":
                for i, (d, k) in enumerate(zip(self.dilation, self.kernel_size)):
                    total = d * (k - 1)
                    j = nd - 1 - i
                    out[2 * j], out[2 * j + 1] = total // 2, total - total // 2
            return out
        return [p for p in reversed(self.padding) for _ in range(2)]

    def forward(self, input):
        conv = F.conv1d if self._nd == 1 else F.conv2d
        if self.padding_mode != "zeros":
            # as PyTorch: the input padded in that mode, then a convolution without padding
            return conv(F.pad(input, self._reversed_padding_repeated_twice,
                              mode=self.padding_mode),
                        self.weight, self.bias, self.stride, (0,) * self._nd, self.dilation,
                        self.groups)
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                    self.groups)

    def extra_repr(self) -> str:
        nd = self._nd
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * nd:
            s += ", padding={padding}"
        if self.dilation != (1,) * nd:
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * nd:
            s += ", output_padding={output_padding}"
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


class _ConvTransposeNd(_ConvNd):
    """What ``ConvTranspose1d`` and ``ConvTranspose2d`` share."""

    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 padding_mode: str = "zeros", device=None, dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{type(self).__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def forward(self, input, output_size=None):
        output_padding = self.output_padding
        if output_size is not None:
            # the output padding that gives output_size (PyTorch's _output_padding)
            want = list(output_size)[-self._nd:]
            output_padding = tuple(
                int(w) - ((n - 1) * s - 2 * p + d * (k - 1) + 1) for w, n, s, p, d, k in
                zip(want, input.shape[-self._nd:], self.stride, self.padding, self.dilation,
                    self.kernel_size))
        conv = F.conv_transpose1d if self._nd == 1 else F.conv_transpose2d
        return conv(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                    self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """The transposed 1-D convolution (``F.conv_transpose1d``).

    >>> import symgrad as torch
    >>> torch.nn.ConvTranspose1d(2, 3, 4)
    ConvTranspose1d(2, 3, kernel_size=(4,), stride=(1,))
    """

    _nd = 1


class ConvTranspose2d(_ConvTransposeNd):
    """The transposed 2-D convolution (``F.conv_transpose2d``): upsampling by ``stride``.

    >>> import symgrad as torch
    >>> up = torch.nn.ConvTranspose2d(4, 6, 3, stride=2, output_padding=1)
    >>> up
    ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))
    >>> up(torch.zeros(1, 4, 5, 5)).shape
    torch.Size([1, 6, 12, 12])
    """

    _nd = 2
