"""``nn.MaxPool1d``/``MaxPool2d``, ``nn.AvgPool1d``/``AvgPool2d`` and
``nn.AdaptiveAvgPool1d``/``AdaptiveAvgPool2d``: the pooling functions as modules, with
PyTorch's ``repr``."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d"]


class MaxPool2d(Module):
    """The maximum of each window (``F.max_pool2d``); ``stride`` defaults to the kernel.

    >>> import symgrad as torch
    >>> torch.nn.MaxPool2d(2)
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    """

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    _pool = staticmethod(F.max_pool2d)

    def forward(self, input):
        return self._pool(input, self.kernel_size, self.stride, self.padding, self.dilation,
                          ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"
                f", dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """The mean of each window (``F.avg_pool2d``).

    >>> import symgrad as torch
    >>> torch.nn.AvgPool2d(2, 1)
    AvgPool2d(kernel_size=2, stride=1, padding=0)
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """The mean of each of ``output_size`` bins (``F.adaptive_avg_pool2d``).

    >>> import symgrad as torch
    >>> torch.nn.AdaptiveAvgPool2d((5, 7))
    AdaptiveAvgPool2d(output_size=(5, 7))
    """

    _pool = staticmethod(F.adaptive_avg_pool2d)

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return self._pool(input, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class MaxPool1d(MaxPool2d):
    """The maximum of each window along the last dim (``F.max_pool1d``).

    >>> import symgrad as torch
    >>> torch.nn.MaxPool1d(2)
    MaxPool1d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    """

    _pool = staticmethod(F.max_pool1d)


class AvgPool1d(Module):
    """The mean of each window along the last dim (``F.avg_pool1d``).

    >>> import symgrad as torch
    >>> torch.nn.AvgPool1d(3)
    AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        single = (lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,))
        self.kernel_size = single(kernel_size)
        self.stride = single(stride if stride is not None else kernel_size)
        self.padding = single(padding)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """The mean of each of ``output_size`` bins along the last dim.

    >>> import symgrad as torch
    >>> torch.nn.AdaptiveAvgPool1d(4)
    AdaptiveAvgPool1d(output_size=4)
    """

    _pool = staticmethod(F.adaptive_avg_pool1d)
