"""``nn.Module``: a tree of layers that owns parameters, buffers and sub-modules.

Attribute assignment registers what it is given, as in PyTorch: a
:class:`~symgrad.nn.parameter.Parameter` becomes a parameter, a ``Module`` a child, and
:meth:`Module.register_buffer` adds a tensor that is state but not trained.  Everything a
course does with a model walks that tree: ``parameters()``, ``state_dict()``, ``zero_grad()``,
``train()``/``eval()``, ``to(...)`` and the printed ``repr``.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Iterator, NamedTuple

from ...api.core import Tensor
from ...api.device import NO_CUDA, resolve
from ...api.messages import _LEGACY_NAMES
from ...autograd.grad_mode import no_grad
from ...ir.node import RemovableHandle
from ...ops import dtypes as _dt
from ..parameter import Parameter, zero_grads

__all__ = ["Module", "bind_options"]


class _IncompatibleKeys(NamedTuple):
    missing_keys: list
    unexpected_keys: list

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
                f"unexpected_keys={self.unexpected_keys})")

    __str__ = __repr__


def _indent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    return lines[0] if len(lines) == 1 else "\n".join(
        [lines[0]] + [" " * spaces + line for line in lines[1:]])


def bind_options(cls_name: str, options: tuple, args: tuple, kwargs: dict) -> dict:
    """A layer's options (``((name, default), ...)``) from its constructor's arguments,
    with Python's messages for too many or unknown arguments."""
    if len(args) > len(options):
        raise TypeError(f"{cls_name}.__init__() takes from 1 to {len(options) + 1} positional "
                        f"arguments but {len(args) + 1} were given")
    values = dict(options)
    values.update(zip(values, args))
    for k, v in kwargs.items():
        if k not in values:
            raise TypeError(f"{cls_name}.__init__() got an unexpected keyword argument '{k}'")
        values[k] = v
    return values


def _torch_type(value) -> str:
    if isinstance(value, Tensor):
        return "torch." + _LEGACY_NAMES[value.dtype.name]
    return type(value).__name__


class Module:
    """Base class of every layer: subclasses set parameters and sub-modules in
    ``__init__`` (after ``super().__init__()``) and compute in ``forward``.

    Examples
    --------
    >>> import symgrad as torch
    >>> class Affine(torch.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.w = torch.nn.Parameter(torch.tensor(2.0))
    ...         self.b = torch.nn.Parameter(torch.tensor(1.0))
    ...     def forward(self, x):
    ...         return self.w * x + self.b
    >>> m = Affine()
    >>> m(torch.tensor(3.0))
    tensor(7., grad_fn=<AddBackward0>)
    >>> [name for name, _ in m.named_parameters()]
    ['w', 'b']
    """

    training: bool
    _version = 1

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            given = ", ".join([repr(a) for a in args] + [k for k in kwargs])
            raise TypeError(f"Module.__init__() got an unexpected argument: {given}")
        for name, value in (("training", True), ("_parameters", {}), ("_buffers", {}),
                            ("_non_persistent_buffers_set", set()), ("_modules", {}),
                            ("_forward_hooks", []), ("_forward_pre_hooks", [])):
            object.__setattr__(self, name, value)

    # ---------------------------------------------------------------- calling
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    def __call__(self, *args, **kwargs):
        for hook in list(self._forward_pre_hooks):
            changed = hook(self, args)
            if changed is not None:
                args = changed if isinstance(changed, tuple) else (changed,)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks):
            changed = hook(self, args, out)
            if changed is not None:
                out = changed
        return out

    def register_forward_pre_hook(self, hook: Callable, *, prepend: bool = False):
        """``hook(module, args)`` runs before ``forward``; a value it returns replaces the
        arguments."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend)

    def register_forward_hook(self, hook: Callable, *, prepend: bool = False):
        """``hook(module, args, output)`` runs after ``forward``; a value it returns
        replaces the output."""
        return self._add_hook(self._forward_hooks, hook, prepend)

    @staticmethod
    def _add_hook(hooks: list, hook: Callable, prepend: bool) -> RemovableHandle:
        hooks.insert(0, hook) if prepend else hooks.append(hook)
        return RemovableHandle(hooks, hook)

    # ---------------------------------------------------------------- registration
    def __setattr__(self, name: str, value) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_torch_type(value)}' as parameter '{name}' "
                                f"(torch.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name)
            self._modules[name] = value
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_torch_type(value)}' as child module "
                                f"'{name}' (torch.nn.Module or None expected)")
            self._modules[name] = None
        elif params is not None and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_torch_type(value)}' as buffer '{name}' "
                                f"(torch.nn.Buffer, torch.Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str) -> None:
        self.__dict__.pop(name, None)
        for table in (self._parameters, self._buffers, self._modules):
            table.pop(name, None)
        self._non_persistent_buffers_set.discard(name)

    def __getattr__(self, name: str):
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                del table[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list:
        return sorted(set(object.__dir__(self)) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    def _check_name(self, name, what: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {what} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{what} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{what} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{what} name can\'t be empty string ""')

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_torch_type(param)}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True):
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_torch_type(tensor)}' object to buffer "
                            f"'{name}' (torch Tensor or None required)")
        self._buffers[name] = tensor
        (self._non_persistent_buffers_set.discard if persistent
         else self._non_persistent_buffers_set.add)(name)

    def add_module(self, name: str, module: "Module | None") -> None:
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> "Module":
        mod = self
        for part in target.split(".") if target else ():
            if part not in mod._modules:
                raise AttributeError(f"{mod._get_name()} has no attribute `{part}`")
            mod = mod._modules[part]
        return mod

    def get_parameter(self, target: str) -> Parameter:
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if name not in mod._parameters:
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return mod._parameters[name]

    # ---------------------------------------------------------------- walking the tree
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator:
        memo = set() if memo is None else memo
        stack = [(prefix, self)]
        while stack:  # depth first, children in order (iterative: deep models are fine)
            name, mod = stack.pop()
            if remove_duplicate:
                if id(mod) in memo:
                    continue
                memo.add(id(mod))
            yield name, mod
            stack.extend(reversed([(name + ("." if name else "") + k, m)
                                   for k, m in mod._modules.items() if m is not None]))

    def modules(self) -> Iterator:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator:
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator:
        for _, m in self.named_children():
            yield m

    def _named_members(self, table: str, prefix: str, recurse: bool,
                       remove_duplicate: bool = True) -> Iterator:
        mods = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                if recurse else [(prefix, self)])
        seen = set()
        for mod_prefix, mod in mods:
            for k, v in getattr(mod, table).items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                seen.add(id(v))
                yield mod_prefix + ("." if mod_prefix else "") + k, v

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator:
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator:
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn: Callable) -> "Module":
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---------------------------------------------------------------- modes and gradients
    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        zero_grads(self.parameters(), set_to_none)

    # ---------------------------------------------------------------- state
    def state_dict(self, *, destination=None, prefix: str = "", keep_vars: bool = False):
        """Parameters and persistent buffers by dotted name (detached unless
        ``keep_vars``), in registration order, module by module."""
        out = OrderedDict() if destination is None else destination
        for mod_prefix, mod in self.named_modules(prefix=prefix.rstrip(".")):
            dot = mod_prefix + ("." if mod_prefix else "")
            for k, v in mod._parameters.items():
                if v is not None:
                    out[dot + k] = v if keep_vars else v.detach()
            for k, v in mod._buffers.items():
                if v is not None and k not in mod._non_persistent_buffers_set:
                    out[dot + k] = v if keep_vars else v.detach()
        return out

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy values into the parameters and buffers (in place, shapes must match);
        with ``strict``, missing or unexpected keys are an error as in PyTorch."""
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got "
                            f"{type(state_dict)}.")
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        with no_grad():
            for k, target in own.items():
                if k not in state_dict:
                    continue
                value = state_dict[k]
                if not isinstance(value, Tensor):
                    errors.append(f'While copying the parameter named "{k}", expected '
                                  f'torch.Tensor or Tensor-like object from checkpoint but '
                                  f'received {type(value)}')
                elif value.shape != target.shape:
                    errors.append(f"size mismatch for {k}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {target.shape}.")
                else:
                    target.copy_(value)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: "
                              + ", ".join(f'"{k}"' for k in missing) + ". ")
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {self._get_name()}:\n\t"
                               + "\n\t".join(errors))
        return _IncompatibleKeys(missing, unexpected)

    # ---------------------------------------------------------------- dtype and device
    def _apply(self, fn: Callable) -> "Module":
        """Replace every parameter's and buffer's data by ``fn(data)`` (the same
        Parameter objects stay registered, as in PyTorch)."""
        with no_grad():
            for mod in self.modules():
                for p in mod._parameters.values():
                    if p is not None:
                        p.data = fn(p.data)
                        if p.grad is not None:
                            p.grad.data = fn(p.grad.data)
                for k, b in mod._buffers.items():
                    if b is not None:
                        mod._buffers[k] = fn(b)
        return self

    def to(self, *args, **kwargs) -> "Module":
        """``to(device)``, ``to(dtype)``, ``to(tensor)``: floating-point parameters and
        buffers take the dtype; the device must be the CPU."""
        dt, where = kwargs.get("dtype"), kwargs.get("device")
        for a in args:
            if isinstance(a, Tensor):
                dt = a.dtype
            elif isinstance(a, _dt.dtype):
                dt = a
            elif not isinstance(a, bool):
                where = a
        if where is not None and str(where).startswith("meta"):
            # A "stateless" copy for torch.func.functional_call, which brings the values:
            # symgrad has no meta tensors, so the module keeps its own meanwhile.
            return self
        resolve(where)
        if dt is None:
            return self
        if not dt.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, "
                            f"but got desired dtype={dt}")
        return self._floats_to(dt)

    def cpu(self) -> "Module":
        return self

    def cuda(self, device=None) -> "Module":
        if any(True for _ in self.parameters()) or any(True for _ in self.buffers()):
            raise AssertionError(NO_CUDA)
        return self

    def _floats_to(self, dt) -> "Module":
        return self._apply(lambda t: t.to(dt) if t.is_floating_point() else t)

    def double(self) -> "Module":
        return self._floats_to(_dt.float64)

    def float(self) -> "Module":
        return self._floats_to(_dt.float32)

    def half(self) -> "Module":
        return self._floats_to(_dt.float16)

    # ---------------------------------------------------------------- printing
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = self._child_lines()
        lines = extra_lines + child_lines
        body = ""
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                body = extra_lines[0]
            else:
                body = "\n  " + "\n  ".join(lines) + "\n"
        return self._get_name() + "(" + body + ")"

    def _child_lines(self) -> list:
        return [f"({k}): {_indent(repr(m), 2)}" for k, m in self._modules.items()]

    def __getstate__(self) -> dict:
        return dict(self.__dict__)

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

