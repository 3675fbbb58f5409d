"""``symgrad.nn.parameter``: :class:`Parameter`, where PyTorch keeps it
(``from torch.nn.parameter import Parameter``)."""
from __future__ import annotations

from ..api.creation import empty
from ..api.core import _new
from ..api.tensor import Tensor, _make
from ..api.tensor_subclass import _disabled_torch_function_impl

__all__ = ["Parameter", "zero_grads"]


class Parameter(Tensor):
    """A leaf tensor that requires grad by default; prints as ``Parameter containing:``.

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.nn.Parameter(torch.ones(2))
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
    """

    __slots__ = ()
    _torch_name = "torch.nn.parameter.Parameter"
    _prints_as_parameter = True
    __torch_function__ = _disabled_torch_function_impl  # (PyTorch's: results stay Tensors)

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = empty(0)
        p = _new(cls)
        src = _make(data._data, data.dtype)
        for s in ("_data", "_dtype", "grad_fn", "_grad", "_accum", "_hooks",
                  "_retains_grad", "_name"):
            setattr(p, s, getattr(src, s))
        p._vc = data._vc
        p._requires_grad = False
        if requires_grad:
            if not p._dtype.is_floating_point:
                raise RuntimeError("Only Tensors of floating point and complex dtype can "
                                   "require gradients")
            p._requires_grad = True
        return p

    def __init__(self, *args, **kwargs) -> None:
        pass


def zero_grads(params, set_to_none: bool = True) -> None:
    """What ``Module.zero_grad`` and ``Optimizer.zero_grad`` do to each parameter: forget
    its gradient, or (``set_to_none=False``) detach it and fill it with zeros."""
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
            continue
        if p.grad.grad_fn is not None:
            p.grad.detach_()
        else:
            p.grad.requires_grad_(False)
        p.grad.zero_()
