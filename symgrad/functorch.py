"""``functorch``, the package PyTorch 2.13's wheel still ships beside ``torch``: the
function transforms under their pre-2.0 names, each with PyTorch's ``FutureWarning``, and
``make_functional``, ``make_functional_with_buffers``, ``combine_state_for_ensemble``
(:mod:`symgrad.func.deprecated`).

``import functorch`` stays PyTorch's own package; symgrad's is reached as
``from symgrad import functorch``.

Examples
--------
>>> from symgrad import functorch
>>> functorch.__version__ == __import__("symgrad").__version__
True
"""
from __future__ import annotations

from .func.deprecated import (FunctionalModule, FunctionalModuleWithBuffers,  # noqa: F401
                              combine_state_for_ensemble, grad, grad_and_value, hessian,
                              jacfwd, jacrev, jvp, make_functional,
                              make_functional_with_buffers, vjp, vmap)
from . import __version__  # noqa: F401

__all__ = ["__version__", "vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
           "make_functional", "make_functional_with_buffers", "combine_state_for_ensemble",
           "FunctionalModule", "FunctionalModuleWithBuffers"]
