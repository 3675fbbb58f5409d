"""Containers: ``nn.Sequential`` (modules applied in order), ``nn.ModuleList`` and
``nn.ModuleDict`` (registered collections), ``nn.ParameterList``."""
from __future__ import annotations

from collections import OrderedDict
from typing import Iterable

from ..parameter import Parameter
from .module import Module, _indent

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList"]


def _index(i, n: int, kind: str) -> int:
    if not isinstance(i, int):
        raise TypeError(f"{kind} indices must be integers or slices, not {type(i).__name__}")
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range")
    return i % n


class Sequential(Module):
    """Modules applied one after the other.

    Examples
    --------
    >>> import symgrad as torch
    >>> from symgrad import nn
    >>> model = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    >>> model
    Sequential(
      (0): Linear(in_features=2, out_features=3, bias=True)
      (1): Tanh()
      (2): Linear(in_features=3, out_features=1, bias=True)
    )
    >>> model(torch.ones(5, 2)).shape
    torch.Size([5, 1])
    """

    def __init__(self, *args) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for k, m in args[0].items():
                self.add_module(k, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, i):
        if isinstance(i, slice):
            return type(self)(OrderedDict(list(self._modules.items())[i]))
        return list(self._modules.values())[_index(i, len(self), "Sequential")]

    def __setitem__(self, i: int, module: Module) -> None:
        key = list(self._modules)[_index(i, len(self), "Sequential")]
        setattr(self, key, module)

    def __delitem__(self, i) -> None:
        keys = list(self._modules)
        for k in (keys[i] if isinstance(i, slice) else [keys[_index(i, len(self), "Sequential")]]):
            del self._modules[k]
        # (PyTorch renumbers the remaining modules)
        items = list(self._modules.values())
        self._modules.clear()
        for n, m in enumerate(items):
            self._modules[str(n)] = m

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module: Module) -> "Sequential":
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "Sequential":
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> "Sequential":
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for n, m in enumerate(items):
            self.add_module(str(n), m)
        return self


class ModuleList(Module):
    """A list of modules whose parameters the parent module sees.

    >>> from symgrad import nn
    >>> nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    ModuleList(
      (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)
    )
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return type(self)(list(self._modules.values())[i])
        return list(self._modules.values())[_index(i, len(self), "ModuleList")]

    def __setitem__(self, i: int, module: Module) -> None:
        setattr(self, str(_index(i, len(self), "ModuleList")), module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> "ModuleList":
        return self.extend(modules)

    def append(self, module: Module) -> "ModuleList":
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for n, m in enumerate(items):
            self.add_module(str(n), m)

    def _child_lines(self) -> list:
        # Runs of equal modules print once, as PyTorch prints them: "(0-2): 3 x Linear(...)"
        reprs = [repr(m) for m in self._modules.values()]
        lines, start = [], 0
        for i in range(1, len(reprs) + 1):
            if i == len(reprs) or reprs[i] != reprs[start]:
                body = _indent(reprs[start], 2)
                lines.append(f"({start}): {body}" if i - start == 1
                             else f"({start}-{i - 1}): {i - start} x {body}")
                start = i
        return lines


class ModuleDict(Module):
    """A dict of modules whose parameters the parent module sees."""

    def __init__(self, modules=None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key) -> bool:
        return key in self._modules

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def pop(self, key: str) -> Module:
        return self._modules.pop(key)

    def clear(self) -> None:
        self._modules.clear()

    def update(self, modules) -> None:
        for k, m in (modules.items() if hasattr(modules, "items") else modules):
            self[k] = m


class ParameterList(Module):
    """A list of parameters whose owner module sees them."""

    def __init__(self, values: Iterable | None = None) -> None:
        super().__init__()
        for v in values or ():
            self.append(v)

    def __getitem__(self, i: int) -> Parameter:
        return self._parameters[str(_index(i, len(self), "ParameterList"))]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def append(self, value) -> "ParameterList":
        p = value if isinstance(value, Parameter) else Parameter(value)
        self.register_parameter(str(len(self)), p)
        return self

    def extra_repr(self) -> str:
        # (PyTorch indents these rows twice: its own two spaces, then the repr's)
        return "\n".join(f"  ({k}): Parameter containing: [{p.dtype} of size "
                         f"{'x'.join(map(str, p.shape))}]" for k, p in self._parameters.items())
