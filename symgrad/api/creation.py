"""Creation functions: ``ones``, ``zeros``, ``arange``, ``randn``, ... as in PyTorch.

Values, dtypes and the type and message of every error are PyTorch's: ``arange`` and
``linspace`` compute their elements in the order and precision of PyTorch's CPU kernels, so
that their results agree to the last bit.  The generator is PyTorch's engine (an MT19937
seeded by :func:`manual_seed` as PyTorch seeds it), and ``rand``, ``randint``,
``Tensor.uniform_`` (:mod:`~symgrad.api.draws`) and ``randperm``
(:mod:`~symgrad.api.permutation`) compute PyTorch's numbers from its words, ``randn`` and
``normal_`` too (float32 blocks of 16 or more to their last bits); ``multinomial`` and
dropout go through numpy's transforms and reproduce only PyTorch's shapes and ranges.
"""
from __future__ import annotations

import builtins
import math

import numpy as np

from ..ops import dtypes as _dt
from .core import _CPU, Tensor, _make, _TensorMeta
from .draws import integers, normal, uniform
from .device import resolve
from .messages import _SCALAR_NAMES

__all__ = ["multinomial", "ones", "zeros", "full", "empty", "eye", "arange", "linspace", "ones_like",
           "zeros_like", "full_like", "empty_like", "rand", "randn", "randint", "rand_like",
           "randn_like", "manual_seed", "seed", "initial_seed", "Generator",
           "default_generator"]

_MISSING = object()
# The tails of PyTorch's signatures, as its argument errors print them.
_OPTIONS = ("torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
            "bool pin_memory = False, bool requires_grad = False")
_TAIL = "Tensor out = None, " + _OPTIONS
_SIGNATURES = {
    "rand": ("tuple of ints size, *, torch.Generator generator, " + _TAIL,
             "tuple of ints size, *, " + _TAIL),
    "randint": ("int high, tuple of ints size, *, torch.Generator generator, " + _TAIL,
                "int high, tuple of ints size, *, " + _TAIL,
                "int low, int high, tuple of ints size, *, torch.Generator generator, " + _TAIL,
                "int low, int high, tuple of ints size, *, " + _TAIL),
    "eye": ("int n, *, " + _TAIL, "int n, int m, *, " + _TAIL),
    "arange": ("Number end, *, " + _TAIL, "Number start, Number end, *, " + _OPTIONS,
               "Number start, Number end, Number step = 1, *, " + _TAIL),
    "linspace": tuple(f"{a} start, {b} end, int steps, *, " + _TAIL
                      for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"),
                                   ("Tensor", "Number"), ("Number", "Number"))),
}
_SIGNATURES["randn"] = _SIGNATURES["rand"]


# --------------------------------------------------------------------------- generators
class Generator(metaclass=_TensorMeta):
    """A random generator, shown as PyTorch's (``<torch._C.Generator object at ...>``).

    Its engine is PyTorch's CPU engine, an MT19937 seeded from the seed's low 32 bits, so
    its raw 32-bit words, and ``rand``, ``randint``, ``uniform_`` and ``randperm`` built
    from them, are PyTorch's (``randn``/``normal_`` too, float32 blocks of 16 or more to
    their last bits); seeds are PyTorch's (any integer that fits in 64 bits, negative
    ones wrapping around).

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.manual_seed(-1).initial_seed()
    18446744073709551615
    """

    _torch_name = "torch._C.Generator"

    def __init__(self, device="cpu") -> None:
        self.manual_seed(int(np.random.SeedSequence().entropy % 2 ** 63))

    def __repr__(self) -> str:
        return f"<torch._C.Generator object at {id(self):#x}>"

    @property
    def device(self):
        return _CPU

    def manual_seed(self, seed) -> "Generator":
        seed = int(seed)
        if not -2 ** 63 <= seed < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed % 2 ** 64
        bits = np.random.MT19937()
        # why: RandomState seeds an MT19937 as PyTorch's mt19937 does (init_genrand)
        bits.state = {"bit_generator": "MT19937", "state": np.random.RandomState(
            self._seed & 0xFFFFFFFF).get_state(legacy=False)["state"]}
        self._np = np.random.Generator(bits)
        self._normal = None  # (a normal draw kept for the next, as PyTorch's generator)
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        s = int(np.random.SeedSequence().entropy % 2 ** 63)
        self.manual_seed(s)
        return s

    def get_state(self):
        return dict(self._np.bit_generator.state, normal=self._normal)

    def set_state(self, state) -> "Generator":
        self._np.bit_generator.state = {k: v for k, v in state.items() if k != "normal"}
        self._normal = state.get("normal")
        return self


default_generator = Generator()


#: Called before every random draw (``symgrad.func.vmap`` adds PyTorch's check for
#: ``randomness='error'``; injected so this layer imports nothing above it).
RANDOM_DRAW_HOOKS: list = []


def _source(generator: Generator | None = None) -> Generator:
    """The generator a draw takes its words from, once the hooks have run."""
    for hook in RANDOM_DRAW_HOOKS:
        hook()
    return generator or default_generator


def _rng(generator: Generator | None = None) -> np.random.Generator:
    return _source(generator)._np


def manual_seed(seed) -> Generator:
    """Seed the default generator and return it (rand, randn, randint, randperm then
    draw PyTorch's numbers).

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.manual_seed(0)  # doctest: +ELLIPSIS
    <torch._C.Generator object at 0x...>
    """
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


# --------------------------------------------------------------------------- arguments
def _tname(x) -> str:
    """A type's name as PyTorch's argument errors print it (``numpy.ndarray``)."""
    t = type(x)
    if t.__module__ == "numpy":
        return "numpy." + t.__name__
    return t.__name__


def _is_index(x) -> bool:
    """An integer PyTorch takes as a size: not a bool; numpy and 0-d integer tensors too."""
    if isinstance(x, Tensor):
        return x.ndim == 0 and x.dtype in (_dt.int64, _dt.int32)
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _is_number(x) -> bool:
    if isinstance(x, Tensor):
        return x.numel() == 1
    return isinstance(x, (int, float, np.number, np.bool_))


def _number(x):
    if isinstance(x, Tensor):
        return x.item()
    if isinstance(x, np.generic):
        return x.item()
    return x


def _invalid(fname: str, args, kwargs=None) -> TypeError:
    got = ", ".join([_tname(a) for a in args]
                    + [f"{k}={_tname(v)}" for k, v in (kwargs or {}).items()])
    sigs = "".join(f" * ({s})\n" for s in _SIGNATURES[fname])
    return TypeError(f"{fname}() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{sigs}")


def _unexpected(fname: str, kwargs: dict) -> None:
    for k in kwargs:
        raise TypeError(f"{fname}() got an unexpected keyword argument '{k}'")


def _size(fname: str, args: tuple, kwargs: dict, pos: int = 1) -> tuple:
    """PyTorch's ``*size`` argument: ints, or one tuple, list or Size of ints."""
    size = kwargs.pop("size", _MISSING)
    if size is not _MISSING:
        if args:
            if fname in _SIGNATURES:
                raise _invalid(fname, args, {"size": size})
            raise TypeError(f"{fname}() got multiple values for argument 'size'")
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"{fname}(): argument 'size' must be tuple of ints, not "
                            f"{_tname(size)}")
        args = (size,)
    if not args:
        if fname in _SIGNATURES:
            raise _invalid(fname, ())
        raise TypeError(f'{fname}() missing 1 required positional arguments: "size"')
    first = args[0]
    if _is_index(first):
        seq, rest = args, 1
    elif len(args) > 1:
        if fname in _SIGNATURES:
            raise _invalid(fname, args)
        raise TypeError(f"{fname}() takes 1 positional argument but {len(args)} were given")
    elif isinstance(first, (tuple, list)):
        seq, rest = first, 0
    else:
        raise TypeError(f"{fname}(): argument 'size' (position {pos}) must be tuple of ints, "
                        f"not {_tname(first)}")
    for i, s in enumerate(seq):
        if i < rest:
            continue
        if i == 0 and not _is_index(s):
            raise TypeError(f"{fname}(): argument 'size' (position {pos}) must be tuple of "
                            f"ints, but found element of type {_tname(s)} at pos 0")
        if not (_is_index(s) or isinstance(s, (bool, np.bool_))):
            raise TypeError(f"{fname}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got "
                            f"{_tname(s)}\"")
    shape = tuple(builtins.int(s) for s in seq)
    for s in shape:
        if s < 0:
            if fname == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")
    if len(shape) > MAX_DIMS:
        raise RuntimeError(too_many_dims(fname, len(shape)))
    return shape


#: numpy's limit on dimensions, and so symgrad's (PyTorch allows more).
MAX_DIMS = 64


def too_many_dims(name: str, ndim: int) -> str:
    """The error for a tensor of more dimensions than numpy holds."""
    return (f"{name}: symgrad tensors have at most {MAX_DIMS} dimensions (numpy's limit; "
            f"PyTorch allows more), got {ndim}")


def _finish(data: np.ndarray, dt, requires_grad: bool) -> Tensor:
    t = _make(data, dt)
    if requires_grad:
        if not dt.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t._requires_grad = True
    return t


def _float_dtype(dtype, fname: str):
    return _dt.as_dtype(dtype, fname) or _dt.get_default_dtype()


def _scalar_name(dt) -> str:
    return _SCALAR_NAMES[dt.name]


def _not_implemented(kernel: str, dt) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{_scalar_name(dt)}\'')


def _fill_value(value, dt):
    """``value`` converted to ``dt`` as PyTorch converts a scalar (overflow is an error)."""
    v = _number(value)
    if dt.is_floating_point:
        if isinstance(v, (bool, int)) or not math.isfinite(v):
            return v
        if abs(v) > float(np.finfo(dt.np).max):
            name = {"float16": "c10::Half", "float32": "float", "float64": "double"}[dt.name]
            raise RuntimeError(f"value cannot be converted to type {name} without overflow")
        return v
    if dt is _dt.bool:
        return builtins.bool(v)
    if isinstance(v, float):
        info = np.iinfo(dt.np)
        if not math.isfinite(v) or not info.min <= v <= info.max:
            raise RuntimeError(f"value cannot be converted to type "
                               f"{'int64_t' if dt is _dt.int64 else 'int'} without overflow")
        return builtins.int(v)
    return v


# --------------------------------------------------------------------------- constant fills
def _constant(fname: str, fill, size: tuple, dtype, device, requires_grad: bool,
              kwargs: dict) -> Tensor:
    """``fname(*size, ...)`` (``ones``): ``fill`` (``np.ones``) of the shape, PyTorch's
    checks of the arguments first."""
    resolve(device)
    shape = _size(fname, size, kwargs)
    _unexpected(fname, kwargs)
    dt = _float_dtype(dtype, fname)
    return _finish(fill(shape, dt.np), dt, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False, **kwargs) -> Tensor:
    """A tensor of ones (default dtype float32).

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.ones(2, 2, requires_grad=True)
    tensor([[1., 1.],
            [1., 1.]], requires_grad=True)
    """
    return _constant("ones", np.ones, size, dtype, device, requires_grad, kwargs)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False, **kwargs) -> Tensor:
    """A tensor of zeros (default dtype float32).

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.zeros(2, dtype=torch.int64)
    tensor([0, 0])
    """
    return _constant("zeros", np.zeros, size, dtype, device, requires_grad, kwargs)


def empty(*size, dtype=None, device=None, requires_grad: bool = False, **kwargs) -> Tensor:
    """An uninitialised tensor in PyTorch; symgrad fills it with zeros."""
    return _constant("empty", np.zeros, size, dtype, device, requires_grad, kwargs)


def full(size=_MISSING, fill_value=_MISSING, dtype=None, device=None,
         requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value``; its dtype follows the value's Python type.

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.full((2,), 1), torch.full((2,), True), torch.full((2,), 1.5)
    (tensor([1, 1]), tensor([True, True]), tensor([1.5000, 1.5000]))
    """
    resolve(device)
    missing = [n for n, v in (("size", size), ("fill_value", fill_value)) if v is _MISSING]
    if missing:
        names = ", ".join(f'"{n}"' for n in missing)
        raise TypeError(f"full() missing {len(missing)} required positional argument"
                        f"{'s' if len(missing) == 1 else ''}: {names}")
    if _is_index(size):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{_tname(size)}")
    shape = _size("full", (size,), {})
    if not _is_number(fill_value):
        raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not "
                        f"{_tname(fill_value)}")
    dtype = _dt.as_dtype(dtype, "full")
    v = _number(fill_value)
    if dtype is None:
        if isinstance(fill_value, Tensor):
            dtype = fill_value.dtype if not fill_value.dtype.is_floating_point else (
                _dt.get_default_dtype())
        else:
            dtype = (_dt.bool if isinstance(v, builtins.bool) else
                     _dt.int64 if isinstance(v, builtins.int) else _dt.get_default_dtype())
    v = _fill_value(v, dtype)
    with np.errstate(all="ignore"):
        data = np.full(shape, v, dtype.np)
    return _finish(data, dtype, requires_grad)


def eye(*args, dtype=None, device=None, requires_grad: bool = False, **kwargs) -> Tensor:
    """The identity matrix, ``n`` by ``m`` (``m`` defaults to ``n``).

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.eye(2, 3)
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    resolve(device)
    args = list(args)
    for name in ("n", "m"):
        if name in kwargs:
            args.append(kwargs.pop(name))
    _unexpected("eye", kwargs)
    if not 1 <= len(args) <= 2:
        raise _invalid("eye", args)
    if not _is_index(args[0]):
        if len(args) == 1:
            raise TypeError(f"eye(): argument 'n' (position 1) must be int, not "
                            f"{_tname(args[0])}")
        raise _invalid("eye", args)
    if len(args) == 2 and not _is_index(args[1]):
        raise _invalid("eye", args)
    n = builtins.int(args[0])
    m = builtins.int(args[1]) if len(args) == 2 else n
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    dt = _float_dtype(dtype, "eye")
    return _finish(np.eye(n, m, dtype=dt.np), dt, requires_grad)


# --------------------------------------------------------------------------- ranges
def _fma(a, b, c):
    """``a * b + c`` in float64 rounded once, as the fused multiply-add PyTorch's compiled
    kernels use (Dekker's exact product and an exact sum)."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    c = np.asarray(c, np.float64)
    with np.errstate(all="ignore"):
        p = a * b

        def split(x):
            t = 134217729.0 * x  # 2 ** 27 + 1
            hi = t - (t - x)
            return hi, x - hi

        ah, al = split(a)
        bh, bl = split(b)
        err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        s = p + c
        bb = s - p
        t = (p - (s - bb)) + (c - bb)
        out = s + (t + err)
        # Where the exact terms are not finite (inf, nan), the plain result is the answer.
        return np.where(np.isfinite(out), out, p + c)


# PyTorch's CPU kernels run on AVX2 vectors of 32 bytes.
_VECTOR_BYTES = 32


def _arange_floats(start, step, n: int, dt) -> np.ndarray:
    """``start + step * i`` as PyTorch's ``arange`` kernel computes it: in the accumulate
    type (float for half, else double) with a fused multiply-add, each vector of elements
    from its first one rounded to ``dt``."""
    npdt = dt.np
    k = np.arange(n, dtype=np.float64)
    if dt is _dt.float16:
        def acc(a, b, c):
            return (np.float64(a) * b + np.float64(c)).astype(np.float32)
        st, s0 = np.float32(step), np.float32(start)
    else:
        acc = _fma
        st, s0 = builtins.float(step), builtins.float(start)
    with np.errstate(all="ignore"):
        vals = acc(st, k, s0).astype(npdt)
        vs = _VECTOR_BYTES // npdt.itemsize
        nvec = (n // (2 * vs)) * 2 * vs
        if nvec:
            base = acc(st, np.arange(0, nvec, vs, dtype=np.float64), s0)
            base = base.astype(npdt).astype(base.dtype)
            j = np.arange(vs, dtype=np.float64)
            vals[:nvec] = acc(st, j[None, :], base[:, None]).reshape(-1).astype(npdt)
    return vals


def _format_bound(x) -> str:
    """A number as C++ streams print a double (``2``, ``0.5``, ``inf``)."""
    return "%g" % x


def arange(*args, dtype=None, device=None, requires_grad: bool = False, **kwargs) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless a bound is a
    float.

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.arange(5)
    tensor([0, 1, 2, 3, 4])
    >>> torch.arange(1, 2.5, 0.5)
    tensor([1.0000, 1.5000, 2.0000])
    """
    resolve(device)
    named = {k: kwargs.pop(k) for k in ("start", "end", "step") if k in kwargs}
    _unexpected("arange", kwargs)
    args = list(args)
    if len(args) == 1 and not named:
        if not _is_number(args[0]):
            raise TypeError(f"arange(): argument 'end' (position 1) must be Number, not "
                            f"{_tname(args[0])}")
        values = {"start": 0, "end": args[0], "step": 1}
    else:
        values = dict(zip(("start", "end", "step"), args))
        for k, v in named.items():
            if k in values:
                raise _invalid("arange", args, named)
            values[k] = v
        if len(args) > 3 or "end" not in values or builtins.any(
                not _is_number(v) for v in values.values()):
            raise _invalid("arange", args)
        values.setdefault("start", 0)
        values.setdefault("step", 1)
    originals = [values["start"], values["end"], values["step"]]
    start, end, step = (_number(v) for v in originals)
    dt = _dt.as_dtype(dtype, "arange")
    if dt is None:
        floating = builtins.any(
            isinstance(v, (float, np.floating)) or (isinstance(v, Tensor)
                                                   and v.dtype.is_floating_point)
            for v in originals)
        dt = _dt.get_default_dtype() if floating else _dt.int64
    if dt is _dt.bool:
        raise _not_implemented("arange_cpu", dt)
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_format_bound(start)} -> "
                           f"{_format_bound(end)}")
    if dt is _dt.int64:
        start, end, istep = builtins.int(start), builtins.int(end), builtins.int(step)
        if istep == 0:
            raise ValueError("step must be nonzero")
        step = istep
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dt is _dt.int64:
        sgn = (step > 0) - (step < 0)
        n = (end - start + step - sgn) // step  # C++'s int64 division (the quotient is > 0)
    else:
        n = math.ceil((builtins.float(end) - builtins.float(start)) / builtins.float(step))
    if dt.is_floating_point:
        data = _arange_floats(start, step, n, dt)
    else:
        # Integers accumulate in int64, from the truncated start and step.
        data = (builtins.int(start) + builtins.int(step) * np.arange(n, dtype=np.int64))
        data = data.astype(dt.np)
    return _finish(data, dt, requires_grad)


def _linspace_values(start, end, steps: int, dt) -> np.ndarray:
    """PyTorch's ``linspace`` kernel: the first half counted up from ``start``, the second
    down from ``end``, in ``dt``'s precision (double for integers) with a fused multiply-add
    (none for half, whose operations round each step)."""
    npdt = dt.np
    integral = not dt.is_floating_point
    ct = np.float64 if integral else npdt.type
    s = ct(builtins.int(start)) if integral else ct(start)
    e = ct(builtins.int(end)) if integral else ct(end)
    if steps == 1:
        return np.array([s]).astype(npdt)
    with np.errstate(all="ignore"):
        step = ct((e - s) / ct(steps - 1))
        i = np.arange(steps)
        low = i < steps // 2
        k = np.where(low, i, steps - 1 - i)
        if dt is _dt.float16:
            up = ct(step) * k.astype(ct) + s
            down = e - ct(step) * k.astype(ct)
        elif dt is _dt.float32:
            up = (np.float64(step) * k + np.float64(s)).astype(ct)
            down = (np.float64(-step) * k + np.float64(e)).astype(ct)
        else:
            up, down = _fma(step, k, s), _fma(-step, k, e)
        vals = np.where(low, up, down)
        if integral:
            vals = np.trunc(vals)
        return vals.astype(npdt)


def linspace(*args, dtype=None, device=None, requires_grad: bool = False,
             **kwargs) -> Tensor:
    """``steps`` values evenly spaced from ``start`` to ``end`` (both included).

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.linspace(0, 1, 5)
    tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    resolve(device)
    values = dict(zip(("start", "end", "steps"), args))
    for k in ("start", "end", "steps"):
        if k in kwargs:
            if k in values:
                raise TypeError(f"linspace() got multiple values for argument '{k}'")
            values[k] = kwargs.pop(k)
    _unexpected("linspace", kwargs)
    if (len(args) > 3 or len(values) != 3 or not _is_number(values["start"])
            or not _is_number(values["end"]) or not _is_index(values["steps"])):
        raise _invalid("linspace", args)
    steps = builtins.int(values["steps"])
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _float_dtype(dtype, "linspace")
    if dt is _dt.bool:
        raise _not_implemented("linspace_cpu", dt)
    if steps == 0:
        data = np.zeros(0, dt.np)
    else:
        data = _linspace_values(_number(values["start"]), _number(values["end"]), steps, dt)
    return _finish(data, dt, requires_grad)


# --------------------------------------------------------------------------- *_like
def _like(fname: str, t, fill, dtype, requires_grad):
    if not isinstance(t, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{_tname(t)}")
    dt = _dt.as_dtype(dtype, fname) or t.dtype
    with np.errstate(all="ignore"):
        data = np.full(t._data.shape, fill, dt.np)
    return _finish(data, dt, requires_grad)


def ones_like(input: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Ones with the shape and (unless given) the dtype of ``input``; a leaf.

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.ones_like(torch.tensor([1, 2]))
    tensor([1, 1])
    """
    resolve(device)
    return _like("ones_like", input, 1, dtype, requires_grad)


def zeros_like(input: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    resolve(device)
    return _like("zeros_like", input, 0, dtype, requires_grad)


def empty_like(input: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    resolve(device)
    return _like("empty_like", input, 0, dtype, requires_grad)


def full_like(input: Tensor, fill_value, dtype=None, device=None,
              requires_grad: bool = False) -> Tensor:
    resolve(device)
    d = _dt.as_dtype(dtype, "full_like") or (input.dtype if isinstance(input, Tensor)
                                              else None)
    value = _fill_value(fill_value, d) if d is not None else fill_value
    return _like("full_like", input, value, dtype, requires_grad)


# --------------------------------------------------------------------------- random
def _random(fname: str, kernel: str, draw, size, dtype, requires_grad, generator,
            kwargs) -> Tensor:
    shape = _size(fname, size, kwargs)
    if kwargs:
        raise _invalid(fname, size, kwargs)
    if not (dtype is None or isinstance(dtype, (_dt.dtype, type))):
        raise _invalid(fname, size, {"dtype": dtype})
    dt = _float_dtype(dtype, fname)
    if not dt.is_floating_point:
        raise _not_implemented(kernel, dt)
    return _finish(draw(_source(generator), shape, dt).astype(dt.np), dt,
                   requires_grad)


def rand(*size, dtype=None, device=None, requires_grad: bool = False, generator=None,
         **kwargs) -> Tensor:
    """Uniform draws from ``[0, 1)``.

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.rand(2, 3).shape
    torch.Size([2, 3])
    """
    resolve(device)
    return _random("rand", "check_uniform_bounds",  # (PyTorch's numbers: draws.uniform)
                   lambda g, s, dt: uniform(g._np.bit_generator, s, 0.0, 1.0, dt.np), size,
                   dtype, requires_grad, generator, kwargs)


def randn(*size, dtype=None, device=None, requires_grad: bool = False, generator=None,
          **kwargs) -> Tensor:
    """Standard normal draws.

    Examples
    --------
    >>> import symgrad as torch
    >>> torch.randn(4, dtype=torch.float64).dtype
    torch.float64
    """
    resolve(device)
    return _random("randn", "normal_kernel_cpu",
                   lambda g, s, dt: normal(g, s, 0.0, 1.0, dt.np), size, dtype, requires_grad,
                   generator, kwargs)


def rand_like(input: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    return rand(*input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randn_like(input: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    return randn(*input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)


def randint(*args, dtype=None, device=None, requires_grad: bool = False, generator=None,
            **kwargs) -> Tensor:
    """Random integers in ``[low, high)``; ``randint(high, size)`` starts at 0.

    Examples
    --------
    >>> import symgrad as torch
    >>> x = torch.randint(10, (3,))
    >>> x.shape, x.dtype
    (torch.Size([3]), torch.int64)
    """
    resolve(device)
    named = {k: kwargs.pop(k) for k in ("low", "high", "size") if k in kwargs}
    _unexpected("randint", kwargs)
    args = list(args)
    if len(args) == 3 or (len(args) == 2 and "size" in named) or "low" in named or (
            args and "high" in named):
        names = ("low", "high", "size")
    else:
        names = ("high", "size")
    values = dict(zip(names, args))
    for k, v in named.items():
        if k in values:
            raise TypeError(f"randint() got multiple values for argument '{k}'")
        values[k] = v
    size = values.get("size", _MISSING)
    ints = [values.get(k) for k in ("low", "high") if k in values]
    if len(args) == 2 and names[0] == "high" and not _is_index(args[0]):
        raise TypeError(f"randint(): argument 'high' (position 1) must be int, not "
                        f"{_tname(args[0])}")
    if (len(args) > 3 or "high" not in values or size is _MISSING
            or not builtins.all(_is_index(v) for v in ints)
            or (_is_index(size) and len(args) == 3)):
        raise _invalid("randint", args)
    if _is_index(size):
        where = "" if "size" in named else f" (position {len(args)})"
        raise TypeError(f"randint(): argument 'size'{where} must be tuple of ints, not "
                        f"{_tname(size)}")
    shape = _size("randint", (size,), {}, pos=len(names))
    low = builtins.int(values.get("low", 0))
    high = builtins.int(values["high"])
    for v in (low, high):
        if not -2 ** 63 <= v < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    dt = _dt.as_dtype(dtype, "randint") or _dt.int64
    if dt is _dt.bool:
        if low < 0:
            raise RuntimeError("from is out of bounds for bool")
        if high > 2:
            raise RuntimeError("to - 1 is out of bounds for bool")
    data = integers(_rng(generator).bit_generator, shape, low, high).astype(dt.np)
    return _finish(data, dt, requires_grad)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator=None) -> Tensor:
    """Indices drawn from the categorical distributions in the rows of ``input``
    (non-negative weights, not necessarily normalised), as ``torch.multinomial``: int64,
    one row of ``num_samples`` per distribution.  Draws come from symgrad's generator.

    Examples
    --------
    >>> import symgrad as torch
    >>> g = torch.Generator().manual_seed(0)
    >>> torch.multinomial(torch.tensor([0.0, 1.0, 0.0]), 2, replacement=True, generator=g)
    tensor([1, 1])
    """
    p = np.asarray(input._data, dtype=np.float64)
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    rows = p.reshape(-1, p.shape[-1])
    if np.any(rows.sum(-1) <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and num_samples > rows.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    rng = _rng(generator)
    out = np.empty((rows.shape[0], num_samples), dtype=np.int64)
    for r, w in enumerate(rows):
        if replacement:
            out[r] = rng.choice(w.size, num_samples, p=w / w.sum())
        else:  # the k smallest exponential keys -log(u)/w (zero weights come last)
            with np.errstate(divide="ignore"):
                keys = -np.log(rng.random(w.size)) / w
            out[r] = np.argsort(keys, kind="stable")[:num_samples]
    return _make(out.reshape(p.shape[:-1] + (num_samples,)), _dt.int64)
