"""The op table: every operation symgrad knows, declared once.

Each :class:`Op` record carries everything the other layers need:

* ``forward`` -- the numpy computation (it also runs on object arrays of SymPy
  expressions unless ``sym`` says otherwise);
* ``grads`` -- one vector-Jacobian product per input, as in PyTorch's
  ``derivatives.yaml``.  Each is written against a backend ``m`` (numpy arrays when no
  graph is recorded, symgrad tensors under ``create_graph=True``, SymPy arrays for the
  symbolic layer, matrix expressions, text), reaching other ops only through
  ``m.call(OP, ...)`` and arithmetic, so one rule serves every order of differentiation
  and every interpretation;
* ``saves`` -- the values the backward pass needs, by name (inputs, attributes,
  ``result``, sizes); they are the ``_saved_*`` attributes of the graph node, except names
  starting with ``_`` (kept for the gradient rules only, where PyTorch shows nothing);
  ``derive`` computes op-specific ones from the operands (``max(dim)``'s indices),
  ``saved_for`` empties those only some inputs' gradients need (``mm``'s strides) and
  ``consts`` names values PyTorch shows that the op fixes (``x + y``'s alpha, 1);
* ``refuse`` -- PyTorch's error for result dtypes it has no kernel for (``abs`` of bool);
* ``sym`` -- the SymPy mapping: the name of a SymPy function applied elementwise (see
  :func:`sympy_function`), or a callable on object arrays of SymPy expressions for ops
  whose numpy forward cannot run on them; ``None`` when ``forward`` itself can;
* ``domain`` -- the open interval (for every floating input) where the op is smooth
  apart from isolated kinks and ties; derivative checks sample inside it;
* ``ranks`` -- the tensor ranks each input accepts, when the op is narrower than numpy
  (``mm`` wants matrices); ``None`` for any rank;
* ``dtype`` -- the result-dtype rule, a callable of :mod:`~symgrad.ops.dtype_rules`;
* ``symbol``, ``infix``, ``commutative`` -- what a drawing shows: the forward node's
  symbol, an unnamed result's label; the local derivative per input is the rule printed
  by the text backend (:mod:`~symgrad.ops.formula`), ``local`` overriding it where that
  reads worse;
* side tables (:mod:`~symgrad.ops.tables`), registered beside the op: what one reader
  alone needs (the matrix algebra's identities, how a called op reads as text, the
  checker's words for a value that is not finite, PyTorch-parity decompositions, forward
  mode's JVP where it is not derived, vmap's batching rule, :mod:`~symgrad.ops.batching`);
* ``function``, ``method`` (names, dunders too), ``inplace``, ``functional``, ``expr``
  (and ``expr_args``) -- its names on every surface: ``symgrad.<function>``, Tensor
  methods, ``nn.functional``, the expression language.  The layers above generate each
  surface from these names (:func:`subscribe`), unless a hand-written front end of that
  name parses PyTorch's argument forms; ``composite`` ops (``matmul``) have such a front
  end only, and no node;
* the PyTorch node name, derived from the name and overload number
  (``mul`` + 0 -> ``MulBackward0``).

The records are split by family (``arithmetic``, ``elementwise``, ``functions``, ``activations``, ``losses``, ``reductions``,
``linalg``, ``convolution``, ``pooling``, ``normalization``, ``shapes``, ``indexing``, ``inplace``, ``compare``, ``logical``, ``splitting``,
``triangular``, ``tiling``); adding an op is one
entry in one of them, and nothing else (``tests/ops/test_op_surfaces.py`` checks that).

Layer 1: imports numpy and nothing of symgrad above ``symgrad.ops``.
"""
from __future__ import annotations

from .record import OPS, Op, node_name, op_named, subscribe, unregister
from .kernels import sympy_function
from .arithmetic import *  # noqa: F401,F403  (the families register their ops in OPS)
from .elementwise import *  # noqa: F401,F403
from .functions import *  # noqa: F401,F403
from .activations import *  # noqa: F401,F403
from .losses import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .statistics import *  # noqa: F401,F403
from .layers import *  # noqa: F401,F403
from .convolution import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .matrices import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .shapes import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .inplace import *  # noqa: F401,F403
from .compare import *  # noqa: F401,F403
from .logical import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .products import *  # noqa: F401,F403
from .splitting import *  # noqa: F401,F403
from .scattering import *  # noqa: F401,F403
from .triangular import *  # noqa: F401,F403
from .tiling import *  # noqa: F401,F403

__all__ = ["Op", "OPS", "op_named", "node_name", "sympy_function", "subscribe", "unregister"]
