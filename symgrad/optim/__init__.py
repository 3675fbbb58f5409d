"""``symgrad.optim``: optimizers (:mod:`~symgrad.optim.algorithms`) and learning-rate
schedules (:mod:`~symgrad.optim.lr_scheduler`), as PyTorch has them.

May import: ``symgrad.ops``, ``symgrad.api``, ``symgrad.autograd``.
"""
from __future__ import annotations

from . import lr_scheduler, optimizer
from .algorithms import SGD, Adagrad, Adam, AdamW, RMSprop
from .optimizer import Optimizer

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler",
           "optimizer"]
