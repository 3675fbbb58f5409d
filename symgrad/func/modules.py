"""Modules as functions: ``functional_call`` and ``stack_module_state``, as ``torch.func``.

``functional_call(module, params, args)`` runs ``module`` with some of its parameters and
buffers replaced (by dotted name) for the duration of the call; the module is as before
afterwards, even if the call raised.  Tied tensors (one tensor under two names) take the
value given for either name when ``tie_weights`` (the default).  ``stack_module_state``
stacks the parameters and buffers of models of one class, for ``vmap`` over an ensemble.

Modules are used through their own API (``named_parameters``, ``named_buffers``,
``_parameters``/``_buffers``), so this module imports nothing from ``symgrad.nn``.

Examples
--------
>>> import symgrad as torch
>>> from symgrad.func import functional_call
>>> lin = torch.nn.Linear(2, 1)
>>> functional_call(lin, {"weight": torch.ones(1, 2), "bias": torch.zeros(1)},
...                 (torch.tensor([1., 2.]),))
tensor([3.])
"""
from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from ..api.functional import stack

__all__ = ["functional_call", "stack_module_state"]


def _named_tensors(module) -> dict:
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    return named


def _untie(module, values: dict) -> dict:
    """``values`` with every name of a tied tensor given the value of the name given."""
    names_of: dict = {}
    for name, t in _named_tensors(module).items():
        names_of.setdefault(id(t), set()).add(name)
    tied = {n: names for names in names_of.values() if len(names) > 1 for n in names}
    given = [n for n in values if n in tied]
    for name in given:
        group = tied[name]
        if len(group.intersection(given)) > 1 and len(
                {id(values[n]) for n in group if n in values}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(group)}, "
                             "which are tied. Consider using tie_weights=False")
    out = dict(values)
    for name in given:
        for other in tied[name]:
            out[other] = values[name]
    return out


def _owner(module, dotted: str) -> tuple:
    *path, leaf = dotted.split(".")
    for part in path:
        module = getattr(module, part)
    return module, leaf


_ABSENT = object()


def _swap(module, name: str, value):
    """Put ``value`` under ``name``; return what was there (``_ABSENT`` if nothing)."""
    owner, leaf = _owner(module, name)
    for table in ("_parameters", "_buffers"):
        slots = owner.__dict__.get(table)
        if slots is not None and leaf in slots:
            old, slots[leaf] = slots[leaf], value
            return old
    old = owner.__dict__.get(leaf, _ABSENT)
    if value is _ABSENT:
        owner.__dict__.pop(leaf, None)
    else:
        owner.__dict__[leaf] = value
    return old


@contextlib.contextmanager
def _reparametrized(module, values: dict, tie_weights: bool, strict: bool):
    if tie_weights:
        values = _untie(module, values)
    if strict:
        valid = set(_named_tensors(module))
        missing, unexpected = sorted(valid - set(values)), sorted(set(values) - valid)
        errors = []
        if unexpected:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t"
                               + "\n\t".join(errors))
    saved: dict = {}
    try:
        for name, value in values.items():
            saved[name] = _swap(module, name, value)
        yield
    finally:
        for name, old in reversed(list(saved.items())):
            _swap(module, name, old)


def functional_call(module, parameter_and_buffer_dicts, args: Any = None,
                    kwargs: dict | None = None, *, tie_weights: bool = True,
                    strict: bool = False):
    """``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameter_and_buffer_dicts`` (a dict, or a tuple or list of dicts) in place of its
    own.

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.func import functional_call, grad
    >>> lin = torch.nn.Linear(2, 1, bias=False)
    >>> loss = lambda p, x: functional_call(lin, p, (x,)).sum()
    >>> grad(loss)({"weight": torch.ones(1, 2)}, torch.tensor([3., 4.]))
    {'weight': tensor([[3., 4.]])}
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts: dict = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             "functional call is ambiguous")
        values = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(parameter_and_buffer_dicts)}")
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _reparametrized(module, values, tie_weights, strict):
        return module(*args, **kwargs)


def _stacked_leaf(tensors: tuple, name: str):
    every = all(t.requires_grad for t in tensors)
    if not every and any(t.requires_grad for t in tensors):
        raise RuntimeError(f"Expected {name} from each model to have the same "
                           ".requires_grad")
    result = stack(tensors)
    return result.detach().requires_grad_() if every else result


def stack_module_state(models) -> tuple[dict, dict]:
    """``(params, buffers)``: each parameter and buffer of ``models`` (of one class, all
    training or all evaluating) stacked along a new first dimension.

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad.func import stack_module_state
    >>> params, buffers = stack_module_state([torch.nn.Linear(3, 2) for _ in range(4)])
    >>> {k: tuple(v.shape) for k, v in params.items()}, buffers
    ({'weight': (4, 2, 3), 'bias': (4, 2)}, {})
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({bool(m.training) for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same "
                           "class.")
    all_params = [dict(m.named_parameters()) for m in models]
    params = {k: _stacked_leaf(tuple(p[k] for p in all_params), k) for k in all_params[0]}
    all_buffers = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stacked_leaf(tuple(b[k] for b in all_buffers), k)
               for k in all_buffers[0]}
    return params, buffers
