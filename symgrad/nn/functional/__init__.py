"""``symgrad.nn.functional`` (``import symgrad.nn.functional as F``), as PyTorch has it.

The functions that are one op of the table are generated from the records' ``functional``
names (``F.sigmoid``); the modules here hold the front ends that parse PyTorch's argument
forms (``F.relu(x, inplace=True)``) or compose several ops (losses).

May import: ``symgrad.ops``, ``symgrad.ir``, ``symgrad.engine``, ``symgrad.api``,
``symgrad.autograd``.

Examples
--------
>>> import symgrad as torch
>>> import symgrad.nn.functional as F
>>> F.relu(torch.tensor([-1.0, 2.0]))
tensor([0., 2.])
"""
from __future__ import annotations

from ...api.surface import Functions
from ...ops import subscribe
from . import activation, conv, layers, loss
from .activation import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .layers import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403

__all__ = activation.__all__ + conv.__all__ + layers.__all__ + loss.__all__

#: The functions generated from the op table's ``functional`` names.
FUNCTIONS = Functions([globals()], field="functional")
subscribe(FUNCTIONS.added, FUNCTIONS.removed)
