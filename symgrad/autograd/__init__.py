"""``symgrad.autograd``: PyTorch's autograd API over symgrad's engine.

``backward`` and ``grad`` (written in :mod:`symgrad.api.gradients`, which
``Tensor.backward`` shares), custom ``Function``s, grad modes, anomaly detection,
``functional`` (jacobian, hessian, ...) and ``gradcheck``.

May import: ``symgrad.ops``, ``symgrad.ir``, ``symgrad.engine``, ``symgrad.api``.
"""
from __future__ import annotations

import warnings

from ..api.creation import empty
from ..api.gradients import backward, grad
from ..api.tensor import Tensor
from . import forward_ad, functional, graph  # noqa: F401 - submodules, as in PyTorch
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .function import Function, FunctionCtx
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled, no_grad, set_grad_enabled)

__all__ = ["grad", "backward", "Function", "FunctionCtx", "no_grad", "enable_grad",
           "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "forward_ad", "functional", "gradcheck", "gradgradcheck",
           "GradcheckError", "Variable", "detect_anomaly", "set_detect_anomaly"]


class _VariableMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)  # as PyTorch's: every tensor is a Variable


class Variable(metaclass=_VariableMeta):
    """PyTorch's legacy wrapper: a new leaf sharing the data of ``data`` (its history
    dropped), requiring grad if asked.

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.autograd.Variable(torch.ones(2), requires_grad=True)
    tensor([1., 1.], requires_grad=True)
    """

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError("Variable data has to be a tensor, but got "
                            + type(data).__name__)
        t = data.detach()
        if requires_grad:
            t.requires_grad_(True)
        return t

