"""In-place writes that rebase history: zero_, fill_, copy_."""
from __future__ import annotations

import numpy as np

from .record import Op

__all__ = ["ZERO", "FILL", "FILL_TENSOR", "COPY"]

# Drawings: an op's local derivative is its rule printed (symgrad.ops.formula); a
# ``local=`` below overrides it where the printed rule reads worse than the label:
# the record it copies.


ZERO = Op("zero", forward=np.zeros_like, grads=(lambda m, grad: m.zeros_like(grad),),
          )


FILL = Op("fill", 2, attrs=("value",), forward=lambda a, v: np.full_like(a, v),
          grads=(lambda m, grad: m.zeros_like(grad),), )


# fill_ with a 0-d tensor: what ``t[...] = 1.5`` records (the number is wrapped).
FILL_TENSOR = Op("fill", 3, inputs=("self", "value"), broadcasts=True,
                 forward=lambda a, v: np.full_like(a, v),
                 grads=(lambda m, grad: m.zeros_like(grad), lambda m, grad: grad),
                 local=("0", "Σ"))


COPY = Op("copy", inputs=("self", "src"), broadcasts=True,
          node="torch::autograd::CopyBackwards",
          # (a src that broadcasts past self is refused by the in-place write, as PyTorch)
          forward=lambda a, b: np.broadcast_arrays(a, b)[1].astype(np.result_type(a)),
          grads=(lambda m, grad: m.zeros_like(grad), lambda m, grad: grad), )


# -- forward mode (symgrad.ops.jvp): how each op's JVP is derived -----------------------
from . import jvp as _fwd  # noqa: E402
from .tables import JVP as _JVP  # noqa: E402

_JVP.register(_fwd.ELEMENT_WISE, ZERO, FILL, FILL_TENSOR, COPY)
