"""Forward-mode transforms of :mod:`symgrad.func`: ``jvp``, ``jacfwd``, ``linearize``,
``hessian``, as PyTorch's ``torch.func``, on :mod:`symgrad.autograd.forward_ad`.

Each pass opens a forward-mode level of its own (nested inside any open one, so
``jacfwd(jacfwd(f))`` and ``jvp(grad(f))`` work), makes the inputs dual tensors, runs the
function and reads the outputs' tangents.  ``jacfwd`` runs one pass for every column of
the Jacobian: each input's basis tangents are the rows of a batch (:mod:`.tangents`), and
only where that batch cannot follow (an in-place op on a dual, a custom ``Function``'s
``jvp``, ``randomness='different'``) one pass per input element; ``hessian`` is
``jacfwd(jacrev(f))`` as in PyTorch.

Examples
--------
>>> import symgrad as torch
>>> from symgrad.func import hessian, jvp
>>> jvp(torch.sin, (torch.tensor(0.),), (torch.tensor(2.),))
(tensor(0.), tensor(2.))
>>> hessian(lambda x: (x ** 3).sum())(torch.tensor([1., 2.]))
tensor([[ 6.,  0.],
        [ 0., 12.]])
"""
from __future__ import annotations

import contextlib
import functools
from typing import Callable

from ..api import creation
from ..api.creation import zeros, zeros_like
from ..api.functional import stack
from ..api.tensor import Tensor
from ..api.dual import DUAL, set_tangent
from ..autograd import forward_ad as fwAD
from ..autograd import functional
from . import levels
from .batched import NotBatchable
from .pytree import tree_flatten, tree_unflatten
from .reverse import _chosen, _replace, _split_aux, argnums_of, finish, jacrev, keeps_graph
from .tangents import Tangents

__all__ = ["jvp", "jacfwd", "linearize", "hessian"]

_JVP = "jvp(f, primals, tangents)"


@contextlib.contextmanager
def _level():
    level = fwAD._enter_level()
    try:
        with levels.transform():
            yield level
    finally:
        fwAD._exit_level(level)


def _tangents_out(output, level: int, api: str) -> tuple[list, list, object]:
    leaves, spec = tree_flatten(output)
    primals, tangents = [], []
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(leaf)}")
        p, t = fwAD._unpack(leaf, level)
        primals.append(p)
        tangents.append(zeros_like(p) if t is None else t)
    return primals, tangents, spec


def _run(func, args: tuple, flat_primals: list, flat_tangents: list, spec, rebuild,
         has_aux: bool, api: str):
    """One forward-mode pass: ``(primal outputs, tangent outputs, spec, aux)``."""
    with _level() as level:
        duals = [levels.mark_wrapped(p, fwAD.make_dual(p, t, level=level))
                 for p, t in zip(flat_primals, flat_tangents)]
        output = func(*rebuild(tree_unflatten(duals, spec)))
        output, aux = _split_aux(output, has_aux, api)
        primals, tangents, out_spec = _tangents_out(output, level, api)
        if aux is not None:
            aux = tree_unflatten([fwAD._unpack(a, level)[0]
                                  for a in tree_flatten(aux)[0]], tree_flatten(aux)[1])
    return primals, tangents, out_spec, aux


def jvp(func: Callable, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``(func(*primals), J v)``: the Jacobian-vector product of ``func`` at ``primals``
    along ``tangents`` (each a tuple matching ``primals``), by forward mode.

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.func import jvp
    >>> x, v = torch.tensor([1., 2.]), torch.tensor([1., 0.])
    >>> jvp(lambda x: x ** 2, (x,), (v,))
    (tensor([1., 4.]), tensor([2., 0.]))
    """
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid "
                           "to call f(*primals).")
    flat_p, spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents)
    if t_spec != spec:
        raise RuntimeError(
            f"{_JVP}: Expected primals and tangents to have the same python structure. For "
            "example, if primals is a tuple of 3 tensors, tangents also must be. Got primals "
            f"with structure {spec} and tangents with structure {t_spec}")
    if not flat_p:
        raise RuntimeError(f"{_JVP}: Expected primals to contain at least one Tensor.")
    for what, leaves in (("primals", flat_p), ("tangents", flat_t)):
        for leaf in leaves:
            if not isinstance(leaf, Tensor):
                raise RuntimeError(f"{_JVP}: Expected {what} to only contain Tensors, got "
                                   f"{type(leaf)}")
    keep = keeps_graph(flat_p + flat_t)
    out_p, out_t, out_spec, aux = _run(func, primals, flat_p, flat_t, spec, lambda a: a,
                                       has_aux, _JVP)
    result = (finish(tree_unflatten(out_p, out_spec), keep),
              finish(tree_unflatten(out_t, out_spec), keep))
    return result + (finish(aux, keep),) if has_aux else result


def linearize(func: Callable, *primals):
    """``(func(*primals), jvp_fn)``: ``jvp_fn(*tangents)`` is the Jacobian-vector product
    at ``primals`` (each call one forward-mode pass).

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.func import linearize
    >>> out, jvp_fn = linearize(torch.sin, torch.tensor([0., 1.]))
    >>> jvp_fn(torch.tensor([1., 1.]))
    tensor([1.0000, 0.5403])
    """
    output = func(*primals)
    flat_p, spec = tree_flatten(primals)

    def jvp_fn(*tangents):
        flat_t, t_spec = tree_flatten(tangents)
        if t_spec != spec:
            raise RuntimeError(f"Expected the tangents {t_spec} to have the same argspec as "
                               f"the primals {spec}")
        for i, (p, t) in enumerate(zip(flat_p, flat_t)):
            if t.shape != p.shape:
                raise RuntimeError(f"tangent:{i} with shape {t.shape} in flattened pytree "
                                   f"doesn't match the shape {p.shape} of the corresponding "
                                   "primal.")
        return jvp(func, primals, tangents)[1]
    return output, jvp_fn


def jacfwd(func: Callable, argnums=0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable:
    """The Jacobian of ``func`` with respect to its ``argnums`` inputs by forward mode:
    one pass carrying every column's tangent (see the module docstring),
    ``out.shape + input.shape`` each.

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.func import jacfwd
    >>> jacfwd(lambda x: x.sin())(torch.tensor([0., 1.]))
    tensor([[1.0000, 0.0000],
            [0.0000, 0.5403]])
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if randomness not in ("error", "different", "same"):
            raise RuntimeError("Only allowed values for randomness are 'error', 'different', "
                               f"or 'same'. Got {randomness}")
        where = argnums_of(argnums, len(args))
        flat_p, spec = tree_flatten(_chosen(args, where))
        for p in flat_p:
            if not isinstance(p, Tensor):
                raise ValueError(f"Thing passed to transform API must be Tensor, got "
                                 f"{type(p)}")
        sizes = [p.numel() for p in flat_p]
        keep = keeps_graph(flat_p)
        state = creation.default_generator.get_state() if randomness == "same" else None

        def rebuild(chosen):
            return _replace(args, where, chosen)

        def run(position: int | None):
            if state is not None:
                creation.default_generator.set_state(state)
            tangents = [zeros_like(p) for p in flat_p]
            if position is not None:
                k, at = position
                column = zeros(sizes[k], dtype=flat_p[k].dtype)
                column[at] = 1
                tangents[k] = column.reshape(tuple(flat_p[k].shape))
            with levels.vmapping(randomness):
                return _run(lambda *a: func(*a, **kwargs), args, flat_p, tangents, spec,
                            rebuild, has_aux, "jvp(f, primals, tangents)")

        def columns():
            """The Jacobian per output and input: one pass per column."""
            passes = [run((k, at)) for k, n in enumerate(sizes) for at in range(n)]
            out_p, _, out_spec, aux = passes[0] if passes else run(None)
            jac = []
            for o, out in enumerate(out_p):
                blocks, start = [], 0
                for k, p in enumerate(flat_p):
                    cols = [passes[start + j][1][o] for j in range(sizes[k])]
                    start += sizes[k]
                    if cols:
                        block = stack(cols, dim=-1).reshape(tuple(out.shape) + tuple(p.shape))
                    else:
                        block = zeros(tuple(out.shape) + tuple(p.shape), dtype=out.dtype)
                    blocks.append(block)
                jac.append(tree_unflatten(blocks, spec))
            return jac, out_spec, aux

        def batched():
            """The same in one pass: every basis tangent a row of a batch."""
            if state is not None:
                creation.default_generator.set_state(state)
            with levels.vmapping(randomness):
                out_p, out_t, out_spec, aux = _run_batched(
                    lambda *a: func(*a, **kwargs), flat_p, spec, rebuild, has_aux)
            jac = []
            for out, t in zip(out_p, out_t):
                blocks, start = [], 0
                for k, p in enumerate(flat_p):
                    rows = t[start:start + sizes[k]]
                    start += sizes[k]
                    blocks.append(rows.movedim(0, -1).reshape(tuple(out.shape) + tuple(p.shape)))
                jac.append(tree_unflatten(blocks, spec))
            return jac, out_spec, aux

        try:
            if randomness == "different" or not all(p.dtype.is_floating_point
                                                    for p in flat_p) or not sum(sizes):
                raise NotBatchable("one pass per column")
            jac, out_spec, aux = batched()
        except NotBatchable:
            jac, out_spec, aux = columns()
        jac = finish(tree_unflatten(jac, out_spec), keep)
        return (jac, finish(aux, keep)) if has_aux else jac
    return wrapper


def _run_batched(func, flat_p: list, spec, rebuild, has_aux: bool):
    """One forward-mode pass with batched tangents: every input's basis tangents (the
    identity's columns, a row each) at once.  ``(primal outputs, tangent outputs of shape
    (columns, *output.shape), spec, aux)``; raises :class:`NotBatchable` where one pass
    per column is needed."""
    total = sum(p.numel() for p in flat_p)
    eye = creation.eye(total, dtype=flat_p[0].dtype)
    with _level() as level:
        DUAL.batched[level] = Tangents(total)
        try:
            duals, start = [], 0
            for p in flat_p:
                n = p.numel()
                basis = eye[:, start:start + n].to(p.dtype).reshape(total, *p.shape)
                start += n
                dual = fwAD._dual_view(p, level)
                set_tangent(dual, level, basis)
                duals.append(levels.mark_wrapped(p, dual))
            output = func(*rebuild(tree_unflatten(duals, spec)))
            output, aux = _split_aux(output, has_aux, "jvp(f, primals, tangents)")
            leaves, out_spec = tree_flatten(output)
            primals, tangents = [], []
            for leaf in leaves:
                if not isinstance(leaf, Tensor):
                    raise RuntimeError("jvp(f, primals, tangents): expected f(*primals) to "
                                       f"return only tensors, got unsupported type "
                                       f"{type(leaf)}")
                p, t = fwAD._unpack(leaf, level)
                primals.append(p)
                tangents.append(zeros(total, *p.shape, dtype=p.dtype) if t is None else t)
            if aux is not None:
                flat_aux, aux_spec = tree_flatten(aux)
                aux = tree_unflatten([fwAD._unpack(a, level)[0]
                                      for a in flat_aux], aux_spec)
        finally:
            del DUAL.batched[level]
    return primals, tangents, out_spec, aux


def _one_pass(func, inputs: tuple):
    """``autograd.functional.jacobian(strategy="forward-mode")``'s columns in one pass:
    ``(outputs, tangents)``, or None where one pass per column is needed."""
    if not all(p.dtype.is_floating_point for p in inputs):
        return None
    try:
        outputs, tangents, _, _ = _run_batched(
            func, list(inputs), tree_flatten(tuple(inputs))[1], lambda a: a, False)
    except NotBatchable:
        return None
    return outputs, tangents


functional.ONE_PASS.append(_one_pass)


def hessian(func: Callable, argnums=0) -> Callable:
    """The Hessian of ``func`` (a scalar) with respect to its ``argnums`` inputs:
    ``jacfwd(jacrev(func, argnums), argnums)``, as PyTorch computes it.

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.func import hessian
    >>> hessian(lambda x, y: (x * y).sum(), argnums=1)(torch.ones(2), torch.ones(2))
    tensor([[0., 0.],
            [0., 0.]])
    """
    inner = jacrev(func, argnums)
    wrapper = jacfwd(inner, argnums)
    # (vmap of it: every sample's Jacobian of ``inner`` by reverse mode, in one batched pass
    # over the replayed program, checked against this function: symgrad.func.pergrad)
    wrapper.per_sample = (wrapper, inner, argnums, False, "hessian")
    return wrapper
