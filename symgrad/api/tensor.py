"""The tensor front end, assembled: :class:`Tensor` with all its methods, and the names
users and the layers above import.

The class is defined in :mod:`~symgrad.api.core` (what a tensor holds); its operations
call :func:`~symgrad.api.apply.apply`, which needs the class, so they are written in the
modules above it, one group per concern, and attached here:

========================  =========================================================
:mod:`.construct`         the legacy ``Tensor(data)`` constructor, ``new_*``
:mod:`.views`             ``view``, ``reshape``, ``t``, ``permute``, ``expand``, ...
:mod:`.indexing`          ``t[index]`` and ``t[index] = value``
:mod:`.inplace`           ``add_``, ``mul_``, ``copy_``, ... and ``+=``
:mod:`.linalg`            ``@``, ``mm``, ``mv``, ``dot``
:mod:`.methods`           operators, elementwise functions, conversions
:mod:`.reductions`        ``sum``, ``mean``, ``max``, ``norm``, ``softmax``, ...
:mod:`.statistics`        ``median``, ``quantile``, ``histc``, ``histogram``, ``bincount``
:mod:`.gathering`         ``gather``, ``scatter``, ``index_select``, ``take``, ...
:mod:`.remainders`        ``%``, ``fmod``, ``//``, ``nan_to_num``, ``count_nonzero``
:mod:`.gradients`         ``backward``
========================  =========================================================

This module also hands the IR and the engine (layers 2 and 3) what they use from this
layer (:func:`symgrad.ir.injected.inject`).  No maths lives here.
"""
from __future__ import annotations

from ..ir.injected import inject
from ..ops import subscribe
from .construct import _Construction, as_tensor, from_numpy, tensor
from .core import Tensor, _make, attach
from .gathering import _Gathering
from .remainders import _Remainders
from .einsum import _Products
from .gradients import _Backward
from .indexing import _Indexing
from .inplace import _InPlace
from .linalg import _LinearAlgebra
from .messages import _LEGACY_NAMES
from .methods import _Operations
from .recorded import TENSOR
from .reductions import _Reductions
from .shapes import Size
from .statistics import _Statistics
from .surface import Methods
from .views import _Views
from . import tensor_subclass  # noqa: F401  (Tensor.__torch_function__, as_subclass)
# Also imported from here by the package, the layers above and the tests:
from .apply import _DERIVED, apply  # noqa: F401
from . import compiled  # noqa: F401  (reports which modules run compiled)
from .core import _CPU, _LEGACY_DTYPE, _LegacyMeta, _TensorMeta  # noqa: F401
from .inplace import CopySlices  # noqa: F401
from .linalg import bmm, dot, matmul, mm, mv  # noqa: F401
from .messages import _SCALAR_NAMES, _WARNED_ONCE, _warn_once  # noqa: F401
from .methods import maximum, minimum  # noqa: F401

__all__ = ["Tensor", "Size", "apply", "tensor", "as_tensor", "from_numpy"]

for _group in (_Construction, _Views, _Indexing, _InPlace, _LinearAlgebra, _Operations,
               _Reductions, _Statistics, _Gathering, _Remainders, _Products, _Backward):
    attach(Tensor, _group)
del _group
#: The methods generated from the op table (those no group above writes by hand).
METHODS = Methods(Tensor)
subscribe(METHODS.added, METHODS.removed)

inject(Tensor=Tensor, make=_make, tensor=tensor, legacy_names=_LEGACY_NAMES,
       recorded=TENSOR)
