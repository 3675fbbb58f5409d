"""The activation modules (``nn.ReLU``, ``nn.GELU``, ``nn.Softmax`` ...): each holds its
function's options and calls its ``nn.functional`` function.

They are declared by one table, :data:`ACTIVATIONS`: class name, function, options with
their defaults, and which options the printed form shows (PyTorch shows ``inplace`` only
when it is set).
"""
from __future__ import annotations

from .. import functional as F
from .module import Module, bind_options

__all__ = ["ACTIVATIONS"]

#: (class name, nn.functional name, ((option, default), ...), options shown in the repr)
#: ``inplace``, when an option, is shown as ``inplace=True`` when set.
ACTIVATIONS = (
    ("ReLU", "relu", (("inplace", False),), ()),
    ("ReLU6", "relu6", (("inplace", False),), ()),
    ("LeakyReLU", "leaky_relu", (("negative_slope", 0.01), ("inplace", False)),
     ("negative_slope",)),
    ("ELU", "elu", (("alpha", 1.0), ("inplace", False)), ("alpha",)),
    ("SELU", "selu", (("inplace", False),), ()),
    ("CELU", "celu", (("alpha", 1.0), ("inplace", False)), ("alpha",)),
    ("GELU", "gelu", (("approximate", "none"),), ("approximate",)),
    ("SiLU", "silu", (("inplace", False),), ()),
    ("Mish", "mish", (("inplace", False),), ()),
    ("Softplus", "softplus", (("beta", 1.0), ("threshold", 20.0)), ("beta", "threshold")),
    ("Hardtanh", "hardtanh", (("min_val", -1.0), ("max_val", 1.0), ("inplace", False)),
     ("min_val", "max_val")),
    ("Hardsigmoid", "hardsigmoid", (("inplace", False),), ("-inplace",)),
    ("Hardswish", "hardswish", (("inplace", False),), ("-inplace",)),
    ("Softmax", "softmax", (("dim", None),), ("dim",)),
    ("LogSoftmax", "log_softmax", (("dim", None),), ("dim",)),
    ("Tanh", "tanh", (), ()),
    ("Sigmoid", "sigmoid", (), ()),
    ("LogSigmoid", "logsigmoid", (), ()),
    ("Softsign", "softsign", (), ()),
    ("Tanhshrink", "tanhshrink", (), ()),
)


def _activation(name: str, function: str, options: tuple, shown: tuple) -> type:
    names = [k for k, _ in options]
    fn = getattr(F, function)

    def __init__(self, *args, **kwargs):
        Module.__init__(self)
        values = bind_options(name, options, args, kwargs)
        for k, v in values.items():
            setattr(self, k, v)

    def forward(self, input):
        return fn(input, *(getattr(self, k) for k in names))

    def extra_repr(self) -> str:
        parts = [f"{k}={getattr(self, k)!r}" for k in shown if not k.startswith("-")]
        if "inplace" in names and "-inplace" not in shown and self.inplace:
            parts.append("inplace=True")
        return ", ".join(parts)

    doc = (f"Applies ``nn.functional.{function}`` elementwise"
           + (f" (options: {', '.join(f'{k}={v!r}' for k, v in options)})." if options
              else "."))
    return type(name, (Module,), {"__init__": __init__, "forward": forward,
                                  "extra_repr": extra_repr, "__doc__": doc,
                                  "__module__": "symgrad.nn.modules.activation"})


for _row in ACTIVATIONS:
    globals()[_row[0]] = _activation(*_row)
    __all__.append(_row[0])
