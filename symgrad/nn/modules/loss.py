"""The loss modules (``nn.MSELoss``, ``nn.CrossEntropyLoss`` ...): each holds its options
(``reduction``, class ``weight`` as a buffer, ...) and calls its ``nn.functional``
function.  Declared by one table, :data:`LOSSES`, in PyTorch's argument order.
"""
from __future__ import annotations

from ...api.core import Tensor
from .. import functional as F
from ..functional.loss import _reduction
from .module import Module, bind_options

__all__ = ["LOSSES"]

_LEGACY = (("size_average", None), ("reduce", None))
_MEAN = (("reduction", "mean"),)
_WEIGHT = (("weight", None),)

#: (class name, nn.functional name, options in PyTorch's order with defaults)
LOSSES = (
    ("L1Loss", "l1_loss", _LEGACY + _MEAN),
    ("MSELoss", "mse_loss", _LEGACY + _MEAN),
    ("SmoothL1Loss", "smooth_l1_loss", _LEGACY + _MEAN + (("beta", 1.0),)),
    ("HuberLoss", "huber_loss", _MEAN + (("delta", 1.0),)),
    ("BCELoss", "binary_cross_entropy", _WEIGHT + _LEGACY + _MEAN),
    ("BCEWithLogitsLoss", "binary_cross_entropy_with_logits",
     _WEIGHT + _LEGACY + _MEAN + (("pos_weight", None),)),
    ("NLLLoss", "nll_loss", _WEIGHT + (("size_average", None), ("ignore_index", -100),
                                       ("reduce", None)) + _MEAN),
    ("CrossEntropyLoss", "cross_entropy",
     _WEIGHT + (("size_average", None), ("ignore_index", -100), ("reduce", None))
     + _MEAN + (("label_smoothing", 0.0),)),
    ("KLDivLoss", "kl_div", _LEGACY + _MEAN + (("log_target", False),)),
)
_BUFFERS = ("weight", "pos_weight")


def _loss(name: str, function: str, options: tuple) -> type:
    names = [k for k, _ in options]
    fn = getattr(F, function)
    passed = [k for k in names if k not in ("size_average", "reduce")]

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        values = bind_options(name, options, args, kwargs)
        legacy = values.pop("size_average", None), values.pop("reduce", None)
        if legacy != (None, None):  # (the new argument is checked when the loss is computed)
            values["reduction"] = _reduction(values["reduction"], *legacy)
        for k, v in values.items():
            if k in _BUFFERS:
                if v is not None and not isinstance(v, Tensor):
                    raise TypeError(f"cannot assign '{type(v).__name__}' object to buffer "
                                    f"'{k}' (torch Tensor or None required)")
                self.register_buffer(k, v)
            else:
                setattr(self, k, v)

    def forward(self, input, target):
        return fn(input, target, **{k: getattr(self, k) for k in passed})

    doc = f"``nn.functional.{function}`` as a module (options: {', '.join(passed)})."
    return type(name, (Module,), {"__init__": __init__, "forward": forward, "__doc__": doc,
                                  "__module__": "symgrad.nn.modules.loss"})


for _row in LOSSES:
    globals()[_row[0]] = _loss(*_row)
    __all__.append(_row[0])
