"""``symgrad.autograd``: PyTorch's autograd API over symgrad's engine."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..engine import run_backward
from ..graph import GRAD_MODE
from ..tensor import Tensor, _make
from .function import Function, FunctionCtx
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled, no_grad, set_grad_enabled)

__all__ = ["grad", "backward", "Function", "FunctionCtx", "no_grad", "enable_grad",
           "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "functional", "gradcheck", "gradgradcheck",
           "Variable"]


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs: Sequence[Tensor], grads: Sequence, create_graph: bool) -> list:
    """The gradients that start the backward pass (ones for scalar outputs)."""
    out = []
    for i, (t, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if t.requires_grad and t._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            g = _make(np.ones(t._data.shape, t.dtype.np), t.dtype)
        else:
            if not isinstance(g, Tensor):
                from ..tensor import tensor
                g = tensor(g, dtype=t.dtype)
            if g.shape != t.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{g.shape} and output[{i}] has a shape of {t.shape}.")
        out.append(g if create_graph else g._data)
    return out


def _check_roots(outputs: Sequence[Tensor]) -> None:
    for i, t in enumerate(outputs):
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the graph's leaves.

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.tensor(2.0, requires_grad=True)
    >>> torch.autograd.backward(x ** 3)
    >>> x.grad
    tensor(12.)
    """
    outputs = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors if grad_tensors is not None else grad_variables)
    grads = grads or (None,) * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _make_grads(outputs, grads, create_graph)
    _check_roots(outputs)
    targets = _as_tuple(inputs)
    if inputs is not None and not targets:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    if create_graph:
        from ..tensor import _warn_once
        _warn_once(
            "Using backward() with create_graph=True will create a reference cycle between "
            "the parameter and its gradient which can cause a memory leak. We recommend "
            "using autograd.grad when creating the graph to avoid this. If you have to use "
            "this function, make sure to reset the .grad fields of your parameters to None "
            "after use to break the cycle and avoid the leak. (Triggered internally at "
            "/__w/pytorch/pytorch/torch/csrc/autograd/engine.cpp:1307.)")
    if not targets:
        run_backward(outputs, roots, retain_graph, create_graph)
        return
    from ..engine import _accumulate
    results = run_backward(outputs, roots, retain_graph, create_graph, inputs=targets)
    for t, g in zip(targets, results):
        if g is not None:
            _accumulate(t, g, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False) -> tuple:
    """The gradients of ``outputs`` with respect to ``inputs``, without touching ``.grad``.

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.tensor(3.0, requires_grad=True)
    >>> torch.autograd.grad(x ** 2, x)
    (tensor(6.),)
    """
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    grads = _as_tuple(grad_outputs) or (None,) * len(outs)
    if retain_graph is None:
        retain_graph = create_graph
    for t in ins:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    roots = _make_grads(outs, grads, create_graph)
    _check_roots(outs)
    results = run_backward(outs, roots, retain_graph, create_graph, inputs=ins)
    out = []
    for k, (t, g) in enumerate(zip(ins, results)):
        if g is None:
            if materialize_grads:
                g = np.zeros(t._data.shape, t.dtype.np)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {k} appears to not "
                                   "have been used in the graph. Set allow_unused=True if "
                                   "this is the desired behavior.")
            else:
                out.append(None)
                continue
        if isinstance(g, Tensor):
            out.append(g)
        else:
            out.append(_make(np.array(g, dtype=t.dtype.np), t.dtype))
    return tuple(out)


def Variable(data, requires_grad: bool = False):  # noqa: N802 - PyTorch's legacy name
    """Legacy wrapper: returns the tensor itself (requiring grad if asked)."""
    if requires_grad:
        data.requires_grad_(True)
    return data


from . import functional  # noqa: E402
from .gradcheck import gradcheck, gradgradcheck, GradcheckError  # noqa: E402,F401
