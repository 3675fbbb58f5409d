"""``gradcheck`` and ``gradgradcheck``: analytical gradients against central differences.

PyTorch's slow mode, step by step: the numerical Jacobian of every differentiable output
with respect to every input that requires grad (central differences, computed in the
tensors' own dtype), the analytical one row by row with :func:`symgrad.autograd.grad`
(twice, to catch a backward that is not reentrant), and PyTorch's messages when they
disagree.  ``fast_mode`` is accepted and runs the slow mode.
"""
from __future__ import annotations

import warnings
from typing import Callable

import numpy as np

from ..ops.dtypes import from_numpy
from ..api.creation import _rng, zeros_like
from ..api.gradients import grad
from ..api.tensor import Tensor, _make
from .function import _UndefinedGrad
from . import forward_ad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class _TorchNamed(type):
    def __repr__(cls) -> str:
        return "<class 'torch.autograd.gradcheck.GradcheckError'>"  # printed as PyTorch's


class GradcheckError(RuntimeError, metaclass=_TorchNamed):
    """Raised by :func:`gradcheck` when the gradients disagree (as PyTorch's)."""


_FAILED_NONDET = """

NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""


def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable_outputs(out) -> tuple:
    return tuple(o for o in _as_tuple(out) if o.requires_grad)


def _check_inputs(inputs: tuple) -> None:
    any_requires_grad = False
    for idx, inp in enumerate(inputs):
        if isinstance(inp, Tensor) and inp.requires_grad:
            if inp.dtype.name != "float64":
                warnings.warn(f"Input #{idx} requires gradient and is not a double precision "
                              "floating point or complex. This check will likely fail if all "
                              "the inputs are not of double precision floating point or "
                              "complex. ", UserWarning, stacklevel=3)
            any_requires_grad = True
    if not any_requires_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")


def _diff_inputs(inputs: tuple) -> list:
    return [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]


def _numerical_jacobians(func, inputs: tuple, numels: list, eps: float) -> list:
    """``[input][output]`` matrices of shape (input numel, output numel)."""
    diff = _diff_inputs(inputs)
    result = []
    for x in diff:
        if not isinstance(x._data, np.ndarray):
            x._data = np.array(x._data)  # a 0-d value held as a numpy scalar
        flat = x._data.reshape(-1)  # a view: perturbing it perturbs x
        n_outputs = len(numels)
        cols: list = [[] for _ in range(n_outputs)]
        for k in range(flat.size):
            orig = flat[k].copy()
            flat[k] = orig - eps
            outa = _output_copies(func, inputs)
            flat[k] = orig + eps
            outb = _output_copies(func, inputs)
            flat[k] = orig
            for o in range(n_outputs):
                # The library's subtraction, as PyTorch's: bool outputs raise its error.
                d = (outb[o].detach() - outa[o].detach())._data
                cols[o].append(np.asarray(d / (2 * eps)).reshape(-1))
        per_output = []
        for o in range(n_outputs):
            jac = np.zeros((flat.size, numels[o]), dtype=x.dtype.np)
            for k, col in enumerate(cols[o]):
                jac[k] = col
            per_output.append(jac)
        result.append(per_output)
    return result


def _all_outputs(func, inputs) -> tuple:
    return tuple(o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor))


def _output_copies(func, inputs) -> tuple:
    """The outputs copied, as PyTorch's finite differences take them: an output that is a
    view of an input (the diagonal of a gradient) would change with the next perturbation."""
    return tuple(o.detach().clone() for o in _all_outputs(func, inputs))


def _analytical_jacobians(output: Tensor, inputs: tuple) -> list:
    """``[input]`` matrices (input numel, output numel), one ``grad`` call per column."""
    diff = _diff_inputs(inputs)
    jacs = [np.zeros((x.numel(), output.numel()), dtype=x.dtype.np) for x in diff]
    shape, dt = tuple(output.shape), output.dtype
    for j in range(output.numel()):
        g_out = np.zeros(output.numel(), dtype=dt.np)
        g_out[j] = 1
        grads = grad(output, diff, _make(g_out.reshape(shape), dt), retain_graph=True,
                     allow_unused=True)
        for jac, g in zip(jacs, grads):
            if g is not None:
                jac[:, j] = g._data.reshape(-1)
    return jacs


def _tensor_text(a: np.ndarray) -> str:
    return repr(_make(a, from_numpy(a.dtype)))


def gradcheck(func: Callable, inputs, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked=None) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against central differences.

    Returns True, or raises :class:`GradcheckError` (returns False with
    ``raise_exception=False``) naming the output and input whose Jacobians disagree.

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.tensor([0.3, 0.7], dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradcheck(lambda t: (t.sin() * t).sum(), (x,))
    True
    """
    inputs = _as_tuple(inputs)
    try:
        if check_backward_ad:
            _gradcheck(func, inputs, eps, atol, rtol, nondet_tol)
        else:
            _check_inputs(inputs)
        if check_forward_ad:
            _check_forward_ad(func, inputs, eps, atol, rtol)
        outputs = _differentiable_outputs(func(*inputs))
        if outputs and check_backward_ad:
            _test_backward_mul_by_grad_output(outputs, inputs)
            if check_undefined_grad:
                _test_undefined_backward_mode(func, outputs, inputs)
        return True
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol) -> bool:
    _check_inputs(inputs)
    outputs = _differentiable_outputs(func(*inputs))
    all_outputs = _all_outputs(func, inputs)
    if not outputs:
        numels = [o.numel() for o in all_outputs]
        for per_input in _numerical_jacobians(func, inputs, numels, eps):
            for jac in per_input:
                if np.count_nonzero(jac):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    # Only the outputs that require grad are compared, numbered among themselves.
    diff_positions = [k for k, o in enumerate(all_outputs) if o.requires_grad]
    numerical = _numerical_jacobians(func, inputs, [o.numel() for o in all_outputs], eps)
    for i, o in enumerate(outputs):
        first = _analytical_jacobians(o, inputs)
        second = _analytical_jacobians(o, inputs)
        for a1, a2 in zip(first, second):
            if not np.all(np.abs(a1 - a2) <= nondet_tol):
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with same input and "
                    "grad_output multiple times gives different values, although analytical "
                    "gradient matches numerical gradient.The tolerance for nondeterminism "
                    f"was {nondet_tol}." + _FAILED_NONDET)
        for j, a in enumerate(first):
            n = numerical[j][diff_positions[i]]
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                raise GradcheckError(
                    f"Jacobian mismatch for output {i} with respect to input {j},\n"
                    f"numerical:{_tensor_text(n)}\nanalytical:{_tensor_text(a)}\n")
    return True


def _forward_jacobians(func, inputs: tuple, numels: list) -> list:
    """``[input][output]`` matrices (input numel, output numel) by forward mode: one dual
    pass per input element."""
    diff = _diff_inputs(inputs)
    result = []
    for x in diff:
        per_output = [np.zeros((x.numel(), n), dtype=x.dtype.np) for n in numels]
        for k in range(x.numel()):
            seed = np.zeros(x.numel(), dtype=x.dtype.np)
            seed[k] = 1
            with forward_ad.dual_level():
                duals = tuple(forward_ad.make_dual(a, _make(seed.reshape(tuple(a.shape)),
                                                            a.dtype)) if a is x else a
                              for a in inputs)
                outs = _all_outputs(func, duals)
                for o, out in enumerate(outs):
                    t = forward_ad.unpack_dual(out).tangent
                    if t is not None:
                        per_output[o][k] = np.asarray(t._data).reshape(-1)
        result.append(per_output)
    return result


def _check_forward_ad(func, inputs, eps, atol, rtol) -> None:
    """gradcheck's ``check_forward_ad``: forward mode's Jacobians against central
    differences."""
    all_outputs = _all_outputs(func, inputs)
    numels = [o.numel() for o in all_outputs]
    numerical = _numerical_jacobians(func, inputs, numels, eps)
    analytical = _forward_jacobians(func, inputs, numels)
    for j, (nums, ans) in enumerate(zip(numerical, analytical)):
        for i, (n, a) in enumerate(zip(nums, ans)):
            if not np.allclose(a, n, rtol=rtol, atol=atol):
                raise GradcheckError(
                    f"Jacobian computed with forward mode mismatch for output {i} with "
                    f"respect to input {j},\nnumerical:{_tensor_text(n)}\n"
                    f"analytical:{_tensor_text(a)}\n")


def _test_backward_mul_by_grad_output(outputs: tuple, inputs: tuple) -> None:
    """Zero grad_outputs must give zero (or no) input gradients of the inputs' dtype and
    shape: a backward that ignores its gradient is caught here."""
    diff = _diff_inputs(inputs)
    grads = grad(outputs, diff, [zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff):
        if gi is None:
            continue
        if not gi.eq(0).all():
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype is not di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.shape != di.shape:
            raise GradcheckError("grad is incorrect size")


def _test_undefined_backward_mode(func, outputs: tuple, inputs: tuple) -> None:
    """Every backward must accept undefined (None) output gradients, as PyTorch checks:
    all of them at once, then one at a time."""
    diff = _diff_inputs(inputs)

    def warn_bc_breaking():
        warnings.warn("Backwards compatibility: New undefined gradient support checking "
                      "feature is enabled by default, but it may break existing callers of "
                      "this function. If this is true for you, you can call this function "
                      'with "check_undefined_grad=False" to disable the feature',
                      stacklevel=2)

    def check(outs):
        try:
            grads = grad(outs, diff, [zeros_like(o) for o in outs], allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                '"Notes about undefined output gradients" in '
                '"tools/autograd/derivatives.yaml"') from e
        for gi in grads:
            if gi is not None and not gi.eq(0).all():
                warn_bc_breaking()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads "
                    'are undefined or zero. Please look at "Notes about undefined output '
                    'gradients" in "tools/autograd/derivatives.yaml"')

    to_check = [[_UndefinedGrad.apply(o) for o in _differentiable_outputs(func(*inputs))
                 if isinstance(o, Tensor)]]
    if len(to_check[0]) > 1:
        for k in range(len(outputs)):
            outs = _differentiable_outputs(func(*inputs))
            to_check.append([_UndefinedGrad.apply(o) if i == k else o
                             for i, o in enumerate(outs)])
    for outs in to_check:
        check(outs)


def gradgradcheck(func: Callable, inputs, grad_outputs=None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False) -> bool:
    """Check second derivatives: :func:`gradcheck` of the vector-Jacobian product.

    Without ``grad_outputs``, random ones in [-1, 1) are drawn (from symgrad's generator).

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.tensor([0.3, 0.7], dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradgradcheck(lambda t: t.sin() * t, (x,))
    True
    """
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*inputs))
        grad_outputs = tuple(
            _make(_rng().uniform(-1, 1, tuple(o.shape)).astype(o.dtype.np), o.dtype,
                  requires_grad=True) for o in outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n = len(grad_outputs)
    diff_args = {i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad}

    def new_func(*args):
        xs = args[:len(args) - n]
        outs = _differentiable_outputs(func(*xs))
        grads = grad(outs, tuple(x for i, x in enumerate(xs) if i in diff_args),
                     args[len(args) - n:], create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad)
