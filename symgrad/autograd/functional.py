"""``symgrad.autograd.functional``: jacobian, hessian, vjp, jvp, hvp, vhp.

The same algorithms as ``torch.autograd.functional``, built from :func:`symgrad.autograd.grad`
and, for the forward-mode products (``jvp``, ``hvp``, ``jacobian(strategy="forward-mode")``),
from real forward mode (:mod:`symgrad.autograd.forward_ad`; ``hvp`` is forward-over-reverse);
``strict=True`` and ``create_graph=True`` keep PyTorch's double-backward trick (whose checks
its errors name, and whose nodes its graphs show).
Inputs are copied into fresh tensors first, so a function that also closes over them is
differentiated only through its arguments.  With ``create_graph=True`` the results stay
differentiable; ``strict=True`` turns silent zeros into PyTorch's errors.

Examples
--------
>>> import symgrad as torch
>>> from symgrad.autograd.functional import hessian, jvp
>>> hessian(lambda x: (x ** 3).sum(), torch.tensor([1., 2.]))
tensor([[ 6.,  0.],
        [ 0., 12.]])
>>> jvp(lambda x: x ** 2, torch.tensor([1., 2.]), torch.tensor([1., 1.]))
(tensor([1., 4.]), tensor([2., 4.]))
"""
from __future__ import annotations

from typing import Callable

from ..api.creation import ones_like, zeros, zeros_like
from ..api.functional import stack
from ..api.gradients import grad
from ..api.tensor import Tensor
from . import forward_ad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# --------------------------------------------------------------------------- helpers
def _as_tuple(inp, arg_name: str, fn_name: str):
    """``(was_tuple, tuple_of_tensors)``, with PyTorch's TypeError for anything else."""
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the {where} has type {type(el)}.")
    return is_tuple, items


def _tuple_postprocess(res, to_unpack):
    """Undo :func:`_as_tuple` (``to_unpack`` is one flag, or two for nested results)."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph: bool, need_graph: bool) -> tuple:
    # Always new tensor objects, so that the inputs the function closes over are told
    # apart from its arguments (pytorch/pytorch#32576).
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph: bool):
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but "
                               f"got {el_v.size()}.")


_STRICT_INDEPENDENT = {
    "hessian": ("The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided "
                 "function with respect to input {i} is independent of the input. This is "
                 "not allowed in strict mode. You should ensure that your function is twice "
                 "differentiable and that the jacobian depends on the inputs (this would be "
                 "violated by a linear function for example)."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of "
                    "the user-provided function. This is not allowed in strict mode."),
    "outputs": ("Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when "
                "running in strict mode."),
}


def _check_requires_grad(inputs, input_type: str, strict: bool) -> None:
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not inp.requires_grad:
            raise RuntimeError(_STRICT_INDEPENDENT[input_type].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False,
                   retain_graph=None) -> tuple:
    """``autograd.grad`` that skips outputs needing no gradient (None for all if none do)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs, new_grad_outputs = [], []
    for out, grad_out in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_outputs.append(out)
            new_grad_outputs.append(grad_out)
    if not new_outputs:
        return (None,) * len(inputs)
    return grad(tuple(new_outputs), inputs, tuple(new_grad_outputs), allow_unused=True,
                create_graph=create_graph, retain_graph=retain_graph)


_STRICT_NONE = {
    "back": ("The output of the user-provided function is independent of input {i}. This is "
             "not allowed in strict mode."),
    "back_trick": ("The gradient with respect to the input is independent of entry {i} in the "
                   "grad_outputs when using the double backward trick to compute forward mode "
                   "gradients. This is not allowed in strict mode."),
    "double_back": ("The jacobian of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode."),
    "double_back_trick": ("The hessian of the user-provided function is independent of entry "
                          "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                          "prevents from using the double backward trick to replace forward "
                          "mode AD."),
}


def _fill_in_zeros(grads, refs, strict: bool, create_graph: bool, stage: str) -> tuple:
    res = []
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                raise RuntimeError(_STRICT_NONE[stage].format(i=i))
            grads_i = zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        res.append(grads_i)
    return tuple(res)


def _v_or_single(v, against, is_tuple, fn_name, message):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        return v
    if len(against) != 1 or against[0].nelement() != 1:
        raise RuntimeError(message)
    return None


# --------------------------------------------------------------------------- public API
def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), vᵀ J)``: the vector-Jacobian product, by one backward pass.

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.autograd.functional import vjp
    >>> vjp(lambda x: x.exp().sum(dim=1), torch.zeros(2, 2), torch.ones(2))
    (tensor([2., 2.]), tensor([[1., 1.],
            [1., 1.]]))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        v = _v_or_single(v, outputs, is_outputs_tuple, "vjp",
                         "The vector v can only be None if the user-provided function returns "
                         "a single Tensor with a single element.")
        if v is not None:
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_inputs_tuple))


def _tangents(outputs: tuple, level: int) -> tuple:
    """The outputs' tangents at ``level`` (zeros where an output has none)."""
    return tuple(_fill_tangent(forward_ad.unpack_dual(o, level=level).tangent, o)
                 for o in outputs)


def _fill_tangent(t, like):
    return zeros_like(like) if t is None else t


def _in_level(compute: Callable):
    """``compute(level)`` inside a new forward-mode level (nested in an open one)."""
    level = forward_ad._enter_level()
    try:
        return compute(level)
    finally:
        forward_ad._exit_level(level)


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), J v)`` by forward mode (with ``strict`` or ``create_graph``: by the
    double-backward trick, as PyTorch, whose errors and graphs name it).

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.autograd.functional import jvp
    >>> jvp(lambda x: x.exp().sum(dim=1), torch.zeros(2, 2), torch.ones(2, 2))
    (tensor([2., 2.]), tensor([2., 2.]))
    """
    if not strict and not create_graph:
        return _forward_jvp(func, inputs, v, create_graph)
    with enable_grad():
        is_inputs_tuple, inputs, v = _jvp_arguments(inputs, v, create_graph, True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        # The backward pass is linear in grad_outputs: their value does not matter, only
        # that the double backward can see them.
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_outputs_tuple))


def _jvp_arguments(inputs, v, create_graph: bool, need_graph: bool) -> tuple:
    """jvp's ``inputs`` and ``v`` checked and prepared as PyTorch does: (whether the inputs
    were a tuple, the inputs, ``v`` or None)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=need_graph)
    v = _v_or_single(v, inputs, is_inputs_tuple, "jvp",
                     "The vector v can only be None if the input to the user-provided "
                     "function is a single Tensor with a single element.")
    if v is not None:
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
    return is_inputs_tuple, inputs, v


def _forward_jvp(func, inputs, v, create_graph: bool):
    """jvp by forward mode: one dual pass."""
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        is_inputs_tuple, inputs, v = _jvp_arguments(inputs, v, create_graph, create_graph)
        if v is None:
            v = tuple(ones_like(x) for x in inputs)

        def run(level):
            duals = tuple(forward_ad.make_dual(x, t, level=level) for x, t in zip(inputs, v))
            outputs = func(*duals)
            is_outputs_tuple, outputs = _as_tuple(
                outputs, "outputs of the user-provided function", "jvp")
            return is_outputs_tuple, outputs, _tangents(outputs, level)
        is_outputs_tuple, outputs, result = _in_level(run)
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_outputs_tuple))


#: One forward-mode pass for every column (batched tangents), installed by ``symgrad.func``
#: (a layer above this one, loaded with ``torch.func``; until then, and where it gives
#: None, one pass per column, with the same results): ``ONE_PASS[0](func, inputs)`` gives
#: ``(outputs, tangents)``, each tangent ``(columns, *output.shape)``, or None.
ONE_PASS: list = []


def _forward_jacobian(func, inputs):
    """jacobian(strategy="forward-mode"): the columns, all in one dual pass with batched
    tangents where :data:`ONE_PASS` can, else one dual pass per input element."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    flags: list = []

    def checked(*args):
        is_tuple, outs = _as_tuple(func(*args), "outputs of the user-provided function",
                                   "jacobian")
        flags.append(is_tuple)
        return outs
    got = ONE_PASS[0](checked, inputs) if ONE_PASS and inputs else None
    if got is not None:  # (as PyTorch's: the tangents keep their graph, if any)
        outputs, tangents = got
        starts = [0]
        for inp in inputs:
            starts.append(starts[-1] + inp.nelement())
        result = tuple(tuple(
            t[a:b].permute(*range(1, t.ndim), 0).reshape(tuple(out.shape) + tuple(inp.shape))
            for a, b, inp in zip(starts, starts[1:], inputs))
            for out, t in zip(outputs, tangents))
        return _jacobian_result(result, flags[-1], is_inputs_tuple)
    columns = None  # [output][input] -> list of column tensors
    is_outputs_tuple = False
    for k, x in enumerate(inputs):
        for j in range(x.nelement()):
            seed = zeros(x.nelement(), dtype=x.dtype)
            seed[j] = 1

            def run(level, k=k, seed=seed):
                duals = tuple(forward_ad.make_dual(a, seed.view(tuple(a.shape)), level=level)
                              if i == k else a for i, a in enumerate(inputs))
                outputs = _as_tuple(func(*duals), "outputs of the user-provided function",
                                    "jacobian")
                return outputs[0], outputs[1], _tangents(outputs[1], level)
            is_outputs_tuple, outputs, tangents = _in_level(run)
            if columns is None:
                columns = [[[] for _ in inputs] for _ in outputs]
            for o, t in enumerate(tangents):
                columns[o][k].append(t)
    if columns is None:  # no input elements
        outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                            "jacobian")[1]
        columns = [[[] for _ in inputs] for _ in outputs]
    result = tuple(tuple(
        stack(cols, -1).view(tuple(out.shape) + tuple(inp.shape)) if cols
        else zeros(tuple(out.shape) + tuple(inp.shape), dtype=out.dtype)
        for cols, inp in zip(per_out, inputs)) for per_out, out in zip(columns, outputs))
    return _jacobian_result(result, is_outputs_tuple, is_inputs_tuple)


def _jacobian_result(result: tuple, is_outputs_tuple: bool, is_inputs_tuple: bool):
    if is_inputs_tuple:  # (PyTorch's vmapped path gives lists over the inputs)
        return [list(r) for r in result] if is_outputs_tuple else list(result[0])
    return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: one tensor of shape ``out.shape + in.shape``
    per (output, input) pair, nested as the outputs and inputs are.

    ``strategy="forward-mode"`` (with ``vectorize=True``, as PyTorch requires) computes
    it in forward mode, every column in one pass (batched tangents, ``symgrad.func``);
    ``vectorize`` alone changes nothing here (row by row in reverse mode).

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, torch.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
    >>> jacobian(lambda x, y: x * y, (torch.tensor([1., 2.]), torch.tensor(3.)))
    (tensor([[3., 0.],
            [0., 3.]]), tensor([1., 2.]))
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more '
            'performant. Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `strict=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                "only implemented for `vectorize=True`.")
        return _forward_jacobian(func, inputs)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize and strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                "not supported together. Please either set `strict=False` or "
                "`vectorize=False`.")
        result = []
        for i, out in enumerate(outputs):
            rows: tuple = tuple([] for _ in inputs)
            flat = out.reshape(-1)
            for j in range(out.nelement()):
                vj = _autograd_grad((flat[j],), inputs, retain_graph=True,
                                    create_graph=create_graph)
                for k, (row, vj_el, inp) in enumerate(zip(rows, vj, inputs)):
                    if vj_el is not None:
                        if strict and create_graph and not vj_el.requires_grad:
                            raise RuntimeError(
                                "The jacobian of the user-provided function is independent "
                                f"of input {i}. This is not allowed in strict mode when "
                                "create_graph=True.")
                        row.append(vj_el)
                    else:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent "
                                f"of input {k}. This is not allowed in strict mode.")
                        row.append(zeros_like(inp))
            result.append(tuple(
                _stack_rows(stack, row, out, inputs[k]) for k, row in enumerate(rows)))
        result = _grad_postprocess(tuple(result), create_graph)
        return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))


def _stack_rows(stack, rows, out, inp):
    shape = tuple(out.shape) + tuple(inp.shape)
    if not rows:  # an output with no elements
        return zeros(shape, dtype=inp.dtype)
    return stack(rows, 0).view(shape)


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a scalar ``func`` at ``inputs`` (the Jacobian of its gradient).

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.autograd.functional import hessian
    >>> hessian(lambda x, y: (x * y).sum(), (torch.tensor([1.]), torch.tensor([2.])))
    ((tensor([[0.]]), tensor([[1.]])), (tensor([[1.]]), tensor([[0.]])))
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or '
                             '"reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function",
                                        "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_output(outputs, is_outputs_tuple, fn_name):
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")


def _first_derivative(func, inputs, v, create_graph: bool, strict: bool, name: str):
    """What ``vhp`` and ``hvp`` share: checked inputs and ``v``, the scalar output, and
    its gradient recorded for a second differentiation (PyTorch's checks, in order)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    v = _v_or_single(v, inputs, is_inputs_tuple, name,
                     "The vector v can only be None if the input to the user-provided "
                     "function is a single Tensor with a single element.")
    if v is not None:
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                          name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    _scalar_output(outputs, is_outputs_tuple, name)
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), vᵀ H)`` for a scalar ``func``.

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.autograd.functional import vhp
    >>> vhp(lambda x: (x ** 3).sum(), torch.tensor([1., 2.]), torch.tensor([1., 0.]))
    (tensor(9.), tensor([6., 0.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _first_derivative(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_inputs_tuple))


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """``(func(inputs), H v)`` for a scalar ``func``, forward-over-reverse (with ``strict`` or
    ``create_graph``: by the double-backward trick, as PyTorch).

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.autograd.functional import hvp
    >>> hvp(lambda x: (x ** 3).sum(), torch.tensor([1., 2.]), torch.tensor([1., 0.]))
    (tensor(9.), tensor([6., 0.]))
    """
    if not strict and not create_graph:
        return _forward_over_reverse_hvp(func, inputs, v, create_graph)
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _first_derivative(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_inputs_tuple))


def _forward_over_reverse_hvp(func, inputs, v, create_graph: bool):
    """hvp: the tangent of the gradient, the gradient computed in a dual level."""
    def run(level):
        with enable_grad():
            is_inputs_tuple, inputs_, v_, is_outputs_tuple, outputs, jac = _first_derivative(
                lambda *xs: func(*(forward_ad.make_dual(x, t, level=level)
                                   for x, t in zip(xs, v_seen))),
                inputs, v, create_graph, False, "hvp")
        return is_inputs_tuple, is_outputs_tuple, outputs, jac, inputs_
    # v is checked (and copied) by _first_derivative; the function sees it once known.
    v_seen: list = []
    is_inputs_tuple, inputs_t = _as_tuple(inputs, "inputs", "hvp")
    v_t = _v_or_single(v, inputs_t, is_inputs_tuple, "hvp",
                       "The vector v can only be None if the input to the user-provided "
                       "function is a single Tensor with a single element.")
    if v_t is not None:
        _validate_v(v_t, inputs_t, is_inputs_tuple)
        v_seen.extend(v_t)
    else:
        v_seen.extend(ones_like(x) for x in inputs_t)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        def compute(level):
            got = run(level)
            return got[:3] + (tuple(_fill_tangent(
                None if j is None else forward_ad.unpack_dual(j, level=level).tangent, x)
                for j, x in zip(got[3], got[4])),)
        is_inputs_tuple, is_outputs_tuple, outputs, result = _in_level(compute)
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_inputs_tuple))
