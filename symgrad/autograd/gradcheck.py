"""``gradcheck`` and ``gradgradcheck``: analytical gradients against central differences."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..tensor import Tensor, _make

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` when the gradients disagree (as PyTorch's)."""


def _outputs(func, inputs):
    out = func(*inputs)
    return out if isinstance(out, tuple) else (out,)


def _numerical(func, inputs, k, o, eps):
    """Central differences of output ``o`` with respect to input ``k``: (in, out) matrix."""
    x = inputs[k]
    flat = x._data.reshape(-1)
    out0 = _outputs(func, inputs)[o]
    jac = np.zeros((flat.size, out0.numel()))
    for i in range(flat.size):
        orig = flat[i].copy()
        flat[i] = orig + eps
        plus = _outputs(func, inputs)[o]._data.astype(np.float64).reshape(-1)
        flat[i] = orig - eps
        minus = _outputs(func, inputs)[o]._data.astype(np.float64).reshape(-1)
        flat[i] = orig
        jac[i] = (plus - minus) / (2 * eps)
    return jac


def _analytical(func, inputs, k, o):
    from . import grad
    out = _outputs(func, inputs)[o]
    x = inputs[k]
    jac = np.zeros((x.numel(), out.numel()))
    flat = out.reshape(-1)
    for j in range(flat.shape[0]):
        (g,) = grad(flat[j], (x,), retain_graph=True, allow_unused=True)
        if g is not None:
            jac[:, j] = g._data.reshape(-1)
    return jac


def gradcheck(func: Callable, inputs, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked=None, **kwargs) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against central differences.

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.tensor([0.3, 0.7], dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradcheck(lambda t: (t.sin() * t).sum(), (x,))
    True
    """
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    outs = _outputs(func, inputs)
    for k, x in enumerate(inputs):
        if not (isinstance(x, Tensor) and x.requires_grad):
            continue
        for o, out in enumerate(outs):
            if not out.requires_grad:
                continue
            num = _numerical(func, inputs, k, o, eps)
            ana = _analytical(func, inputs, k, o)
            if not np.allclose(ana, num, rtol=rtol, atol=atol):
                if raise_exception:
                    raise GradcheckError(
                        f"Jacobian mismatch for output {o} with respect to input {k},\n"
                        f"numerical:{_make(num, _dtype_of(num))}\n"
                        f"analytical:{_make(ana, _dtype_of(ana))}\n")
                return False
    return True


def _dtype_of(a):
    from ..dtypes import from_numpy
    return from_numpy(a.dtype)


def gradgradcheck(func: Callable, inputs, grad_outputs=None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception: bool = True, **kwargs) -> bool:
    """Check second derivatives: ``gradcheck`` of the vector-Jacobian product of ``func``."""
    from . import grad
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(_make(rng.standard_normal(o._data.shape).astype(o.dtype.np),
                                   o.dtype).requires_grad_(True) for o in outs)
    grad_outputs = tuple(grad_outputs)
    n = len(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def first_order(*args):
        xs, vs = args[:n], args[n:]
        out = _outputs(func, xs)
        gs = grad(out, [xs[i] for i in diff], vs, create_graph=True, allow_unused=True)
        return tuple(g if g is not None else (xs[i] * 0).sum() * 0
                     for g, i in zip(gs, diff))

    return gradcheck(first_order, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
