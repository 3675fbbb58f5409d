"""``symgrad.nn.modules``: :class:`Module` and the layers built on it.

``module`` (the base class), ``container`` (Sequential, ModuleList, ModuleDict),
``linear``, ``activation`` and ``loss`` (generated from their tables of options),
``misc`` (Flatten, Unflatten, Dropout, DataParallel), ``sparse`` (Embedding),
``normalization`` (LayerNorm), ``conv`` (Conv1d, Conv2d), ``pooling`` (MaxPool2d,
AvgPool2d, AdaptiveAvgPool2d), ``batchnorm`` (BatchNorm1d, BatchNorm2d, GroupNorm).

May import: ``symgrad.ops``, ``symgrad.ir``, ``symgrad.api``, ``symgrad.autograd``,
``symgrad.nn.parameter``, ``symgrad.nn.functional``, ``symgrad.nn.init``.
"""
from __future__ import annotations

from . import (activation, batchnorm, container, conv, linear, loss, misc, normalization,
               pooling, sparse)
from .activation import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .misc import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .module import Module

__all__ = (["Module"] + activation.__all__[1:] + container.__all__ + linear.__all__
           + loss.__all__[1:] + misc.__all__ + normalization.__all__ + sparse.__all__
           + conv.__all__ + pooling.__all__ + batchnorm.__all__)
