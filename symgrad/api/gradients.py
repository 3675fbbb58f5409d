"""``backward`` and ``grad``: the gradients of tensors, their arguments checked as PyTorch
checks them, computed by the engine.

``Tensor.backward`` and ``symgrad.autograd.backward`` / ``grad`` are these functions.

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor(3.0, requires_grad=True)
>>> grad(x ** 2, x)
(tensor(6.),)
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np

from ..engine.reverse import run_backward
from ..ir.backends import NUMPY
from .core import Tensor, _make
from .functional import stack
from .messages import _warn_once
from .recorded import TENSOR
from .shapes import Size

__all__ = ["backward", "grad"]


def _as_tuple(x) -> tuple:
    # As PyTorch: anything but a tensor is iterated (None fails with Python's TypeError).
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _backend(create_graph: bool):
    """What the backward pass runs on: recorded tensors under ``create_graph`` (the pass
    is itself a graph), else numpy arrays."""
    return TENSOR if create_graph else NUMPY


def _QUIET():  # noqa: N802 - used as a context manager
    # PyTorch computes 1/0 = inf and 0/0 = nan silently: so does a backward pass, even
    # under warnings.simplefilter("always") (which overrides the package's filter).
    return np.errstate(all="ignore")


def _inputs_tuple(inputs, caller: str) -> tuple:
    if isinstance(inputs, Tensor):
        return (inputs,)
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `{caller}()` must be a dict, not "
                        f"{type(inputs).__name__}. Other Mapping types are not supported.")
    return tuple(inputs)


def _make_grads(outputs: tuple, grads: tuple, create_graph: bool,
                batched: bool = False) -> list:
    """The gradients that start the backward pass, checked as PyTorch checks them.

    ``grads.index(grad)`` is PyTorch's own way of naming the culprit (it compares tensors,
    so it can itself fail); it is kept so that the messages are the same.  With
    ``batched`` (``is_grads_batched``) a gradient's first dimension is the batch.
    """
    out = []
    for grad, t in zip(grads, outputs):
        if not isinstance(t, Tensor):
            raise AssertionError("Expected output to be a torch.Tensor")
        if isinstance(grad, Tensor):
            first = grad[0] if batched else grad
            if first.shape != t.shape:
                # PyTorch's batched message drops one dimension too many (its first
                # gradient is already indexed): kept, so that the text is the same.
                if batched:
                    raise RuntimeError(
                        "If `is_grads_batched=True`, we interpret the first dimension of each "
                        "grad_output as the batch dimension. The sizes of the remaining "
                        "dimensions are expected to match the shape of corresponding output, "
                        "but a mismatch was detected: grad_output[" + str(grads.index(grad))
                        + "] has a shape of " + str(Size(first.shape[1:])) + " and output["
                        + str(outputs.index(t)) + "] has a shape of " + str(t.shape) + ". "
                        "If you only want some tensors in `grad_output` to be considered "
                        "batched, consider using vmap.")
                raise RuntimeError(
                    "Mismatch in shape: grad_output[" + str(grads.index(grad)) + "] has a "
                    "shape of " + str(grad.shape) + " and output[" + str(outputs.index(t))
                    + "] has a shape of " + str(t.shape) + ".")
            out.append(grad if create_graph or batched else grad._data)
        elif grad is None:
            if not t.requires_grad:
                out.append(None)
                continue
            if t._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t.dtype.is_floating_point:
                raise RuntimeError("grad can be implicitly created only for real scalar "
                                   f"outputs but got {t.dtype}")
            g = np.ones(t._data.shape, t.dtype.np)
            out.append(_make(g, t.dtype) if create_graph else g)
        else:
            raise TypeError("gradients can be either Tensors or None, but got "
                            + type(grad).__name__)
    return out


def _check_roots(outputs: tuple, roots: list) -> None:
    """The engine's own checks, in its order."""
    if len(outputs) != len(roots):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(roots)} gradients")
    for i, t in enumerate(outputs):
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")


def _check_inputs(inputs: tuple, accumulate: bool = False) -> None:
    """PyTorch's engine, input by input: a tensor; for backward(inputs=), retain_grad (a
    no-op on leaves, an error on a tensor that does not require grad); then requires_grad."""
    for t in inputs:
        if not isinstance(t, Tensor):
            raise RuntimeError("all inputs have to be Tensors or GradientEdges, but got "
                               + type(t).__name__)
        if accumulate:
            t.retain_grad()
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None) -> None:
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the graph's leaves.

    With ``inputs``, only those tensors accumulate (a non-leaf among them starts to retain
    its gradient, as in PyTorch).

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.tensor(2.0, requires_grad=True)
    >>> torch.autograd.backward(x ** 3)
    >>> x.grad
    tensor(12.)
    """
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=2)
        if grad_tensors is None:
            grad_tensors = grad_variables
        else:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments "
                               "both passed to `backward()`. Please only use "
                               "`grad_tensors`.")
    targets = () if inputs is None else _inputs_tuple(inputs, "backward")
    if inputs is not None and not targets:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    outputs = _as_tuple(tensors)
    grads = (None,) * len(outputs) if grad_tensors is None else _as_tuple(grad_tensors)
    roots = _make_grads(outputs, grads, create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    _check_roots(outputs, roots)
    _check_inputs(targets, accumulate=True)
    if create_graph:
        _warn_once(
            "Using backward() with create_graph=True will create a reference cycle between "
            "the parameter and its gradient which can cause a memory leak. We recommend "
            "using autograd.grad when creating the graph to avoid this. If you have to use "
            "this function, make sure to reset the .grad fields of your parameters to None "
            "after use to break the cycle and avoid the leak. (Triggered internally at "
            "/__w/pytorch/pytorch/torch/csrc/autograd/engine.cpp:1307.)")
    with _QUIET():
        run_backward(outputs, roots, retain_graph, _backend(create_graph),
                     inputs=targets or None)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, without touching ``.grad``.

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.tensor(3.0, requires_grad=True)
    >>> torch.autograd.grad(x ** 2, x)
    (tensor(6.),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outs = _as_tuple(outputs)
    ins = _inputs_tuple(inputs, "grad")
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                      "True). To accumulate gradient for other parts of the graph, please "
                      "use torch.autograd.backward.", FutureWarning, stacklevel=2)
    grads = (None,) * len(outs) if grad_outputs is None else _as_tuple(grad_outputs)
    roots = _make_grads(outs, grads, create_graph, is_grads_batched)
    if retain_graph is None:
        retain_graph = create_graph
    _check_roots(outs, roots)
    _check_inputs(ins)
    if is_grads_batched:
        results = _batched_grads(outs, roots, ins, retain_graph, create_graph)
    else:
        with _QUIET():
            results = run_backward(outs, roots, retain_graph, _backend(create_graph),
                                   inputs=ins, accumulate=False)
    # A gradient that reaches an input unchanged is the caller's tensor itself, as in
    # PyTorch (``grad(x + 1, x, v)[0] is v``).
    given = {id(gr._data): gr for gr in grads if isinstance(gr, Tensor)}
    out = []
    for k, (t, g) in enumerate(zip(ins, results)):
        if g is None:
            if materialize_grads:
                out.append(_make(np.zeros(t._data.shape, t.dtype.np), t.dtype,
                                 requires_grad=create_graph))
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {k} appears to not "
                                   "have been used in the graph. Set allow_unused=True if "
                                   "this is the desired behavior.")
            else:
                out.append(None)
        elif isinstance(g, Tensor):
            out.append(g)
        elif id(g) in given and given[id(g)]._data is g and given[id(g)].dtype is t.dtype:
            out.append(given[id(g)])
        else:
            out.append(_make(np.array(g, dtype=t.dtype.np), t.dtype))
    if type(inputs) is dict:
        return dict(zip(inputs.keys(), out))
    return tuple(out)


def _batched_grads(outs: tuple, roots: list, ins: tuple, retain_graph: bool,
                   create_graph: bool) -> list:
    """``is_grads_batched``: one backward pass per row of the gradients, stacked (PyTorch
    maps its pass over the first dimension with vmap: same values)."""
    sizes = []
    for g in roots:
        if g is not None:
            if g.ndim == 0:
                raise ValueError("vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some "
                                 "input, but that input is a Tensor of dimensionality 0 so "
                                 "expected in_dim to satisfy 0 <= in_dim < 0.")
            sizes.append(g.shape[0])
    if len(set(sizes)) > 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    n = sizes[0] if sizes else 1
    rows = []
    for b in range(n):
        row_roots = [None if g is None else g[b] if create_graph else g[b]._data
                     for g in roots]
        with _QUIET():
            rows.append(run_backward(outs, row_roots, retain_graph or b < n - 1,
                                     _backend(create_graph), inputs=ins, accumulate=False))
    results = []
    for k, t in enumerate(ins):
        column = [row[k] for row in rows]
        if any(g is None for g in column):
            results.append(None)
            continue
        if create_graph:
            results.append(stack(column))
        else:
            results.append(np.stack([np.asarray(g) for g in column]))
    return results


class _Backward:
    """Tensor's ``backward`` (attached by ``api.tensor``)."""

    def backward(self, gradient=None, retain_graph=None, create_graph=False,
                 inputs=None) -> None:
        """Accumulate the gradient of this tensor into the leaves' ``.grad``."""
        backward(self, gradient, retain_graph, create_graph, inputs=inputs)
