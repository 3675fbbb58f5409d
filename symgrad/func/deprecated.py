"""The ``functorch`` namespace that PyTorch 2.13's wheel still ships beside ``torch``:
``torch.func``'s transforms under their old names, each with PyTorch's ``FutureWarning``,
and the deprecated ``make_functional`` family (``make_functional``,
``make_functional_with_buffers``, ``combine_state_for_ensemble``), whose modules run the
model on the parameters they are given (through :func:`~.modules.functional_call`).

``import functorch`` is PyTorch's own top-level package and stays PyTorch's; symgrad's
mirror is :mod:`symgrad.functorch` (``from symgrad import functorch as ft``).

Examples
--------
>>> import warnings
>>> import symgrad as torch
>>> from symgrad import functorch as ft
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     ft.jvp(torch.sin, (torch.tensor(0.),), (torch.tensor(2.),))
(tensor(0.), tensor(2.))
"""
from __future__ import annotations

import copy
import warnings

from ..api.functional import stack
from ..nn.modules.module import Module
from . import forward, mapping, reverse
from .modules import functional_call

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
           "make_functional", "make_functional_with_buffers", "combine_state_for_ensemble",
           "FunctionalModule", "FunctionalModuleWithBuffers"]


def _warn(api: str, new_api: str | None = None) -> None:
    """PyTorch's deprecation warning for ``functorch.<api>``."""
    new_api = new_api or f"torch.func.{api}"
    warnings.warn(
        "We've integrated functorch into PyTorch. As the final step of the integration, "
        f"`functorch.{api}` is deprecated as of PyTorch 2.0 and will be deleted in a future "
        f"version of PyTorch >= 2.3. Please use `{new_api}` instead; see the PyTorch 2.0 "
        "release notes and/or the `torch.func` migration guide for more details "
        "https://pytorch.org/docs/main/func.migrating.html", FutureWarning, stacklevel=3)


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """``torch.vmap``, with PyTorch's deprecation warning."""
    _warn("vmap", "torch.vmap")
    return mapping.vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


def grad(func, argnums=0, has_aux: bool = False):
    """``torch.func.grad``, with PyTorch's deprecation warning."""
    _warn("grad")
    return reverse.grad(func, argnums, has_aux)


def grad_and_value(func, argnums=0, has_aux: bool = False):
    """``torch.func.grad_and_value``, with PyTorch's deprecation warning."""
    _warn("grad_and_value")
    return reverse.grad_and_value(func, argnums, has_aux)


def vjp(func, *primals, has_aux: bool = False):
    """``torch.func.vjp``, with PyTorch's deprecation warning."""
    _warn("vjp")
    return reverse.vjp(func, *primals, has_aux=has_aux)


def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """``torch.func.jvp``, with PyTorch's deprecation warning."""
    _warn("jvp")
    return forward.jvp(func, primals, tangents, strict=strict, has_aux=has_aux)


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size=None,
           _preallocate_and_copy: bool = False):
    """``torch.func.jacrev``, with PyTorch's deprecation warning."""
    _warn("jacrev")
    return reverse.jacrev(func, argnums, has_aux=has_aux, chunk_size=chunk_size,
                          _preallocate_and_copy=_preallocate_and_copy)


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """``torch.func.jacfwd``, with PyTorch's deprecation warning."""
    _warn("jacfwd")
    return forward.jacfwd(func, argnums, has_aux, randomness=randomness)


def hessian(func, argnums=0):
    """``torch.func.hessian``, with PyTorch's deprecation warning."""
    _warn("hessian")
    return forward.hessian(func, argnums=argnums)


# --------------------------------------------------------------------------- modules
def _names(model: Module, named) -> tuple[tuple, tuple, dict]:
    """``(tensors, names, names_map)``: each distinct tensor once (a tied one under its
    first name), and every name each tensor is reached by."""
    tensors, names, names_map, seen = [], [], {}, {}
    for name, t in named(remove_duplicate=False):
        if id(t) not in seen:
            seen[id(t)] = name
            tensors.append(t)
            names.append(name)
            names_map[name] = [name]
        else:
            names_map[seen[id(t)]].append(name)
    return tuple(tensors), tuple(names), names_map


class FunctionalModuleWithBuffers(Module):
    """What :func:`make_functional_with_buffers` returns: ``fmodel(params, buffers,
    *args)`` runs the model on the given parameters and buffers."""

    def __init__(self, stateless_model: Module, param_names: tuple, buffer_names: tuple,
                 param_names_map: dict, buffer_names_map: dict) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names
        self.all_names_map = dict(param_names_map)
        self.all_names_map.update(buffer_names_map)

    def forward(self, params, buffers, *args, **kwargs):
        given = tuple(params) + tuple(buffers)
        state = {}
        for name, t in zip(self.param_names + self.buffer_names, given):
            for alias in self.all_names_map[name]:
                state[alias] = t
        return functional_call(self.stateless_model, state, args, kwargs)


class FunctionalModule(Module):
    """What :func:`make_functional` returns: ``fmodel(params, *args)`` runs the model on
    the given parameters."""

    def __init__(self, stateless_model: Module, param_names: tuple, names_map: dict) -> None:
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.names_map = names_map

    def forward(self, params, *args, **kwargs):
        state = {}
        for name, t in zip(self.param_names, tuple(params)):
            for alias in self.names_map[name]:
                state[alias] = t
        return functional_call(self.stateless_model, state, args, kwargs)


def _split(model: Module, disable_autograd_tracking: bool):
    copied = copy.deepcopy(model)
    params, names, names_map = _names(copied, copied.named_parameters)
    if disable_autograd_tracking:
        for p in params:
            p.requires_grad_(False)
    return copied, params, names, names_map


def make_functional(model: Module, disable_autograd_tracking: bool = False):
    """``(fmodel, params)``: a functional copy of a model without buffers and the copy's
    parameters (unrelated to the model's), with PyTorch's deprecation warning."""
    _warn("make_functional", "torch.func.functional_call")
    if list(model.buffers()):
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    copied, params, names, names_map = _split(model, disable_autograd_tracking)
    return FunctionalModule(copied, names, names_map), params


def _with_buffers(model: Module, disable_autograd_tracking: bool = False):
    copied, params, names, names_map = _split(model, disable_autograd_tracking)
    buffers, buffer_names, buffer_map = _names(copied, copied.named_buffers)
    return (FunctionalModuleWithBuffers(copied, names, buffer_names, names_map, buffer_map),
            params, buffers)


def make_functional_with_buffers(model: Module, disable_autograd_tracking: bool = False):
    """``(fmodel, params, buffers)``: a functional copy of a model and the copy's
    parameters and buffers, with PyTorch's deprecation warning."""
    _warn("make_functional_with_buffers", "torch.func.functional_call")
    return _with_buffers(model, disable_autograd_tracking)


def combine_state_for_ensemble(models):
    """``(fmodel, params, buffers)`` of models of one class: each parameter and buffer
    stacked over the models, with PyTorch's deprecation warning and errors."""
    _warn("combine_state_for_ensemble", "torch.func.stack_module_state")
    if len(models) == 0:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the "
                           "same training/eval mode.")
    if not all(type(m) is type(models[0]) for m in models):
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the "
                           "same class.")
    funcs, params, buffers = zip(*[_with_buffers(m) for m in models])
    params = tuple(stack(shards).detach() for shards in zip(*params))
    buffers = tuple(stack(shards).detach() for shards in zip(*buffers))
    return funcs[0], params, buffers
