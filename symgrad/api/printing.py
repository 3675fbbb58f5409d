"""PyTorch-compatible textual representation of tensors.

This module reproduces, character for character, the output of ``repr(t)``
for a CPU ``torch.Tensor`` in PyTorch 2.x (the algorithm of
``torch/_tensor_str.py``): element formatting (fixed, scientific and
"integer" modes), column alignment, line wrapping, summarisation of large
tensors and the ``dtype=`` / ``grad_fn=`` / ``requires_grad=`` suffixes.

Print options are module-global, like ``torch.set_printoptions``.
"""

import contextlib
import math

import numpy as np

__all__ = ["tensor_repr", "set_printoptions", "get_printoptions", "printoptions"]

_NUMPY_DTYPES = {
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
    "int64": np.int64,
    "int32": np.int32,
    "bool": np.bool_,
}
_FLOAT_DTYPES = frozenset(("float16", "float32", "float64"))
# Dtypes never shown in the suffix of a non-empty tensor.
_IMPLICIT_DTYPES = frozenset(("int64", "bool"))

# Above this many values the formatter statistics are computed with numpy.
_VECTORISE_ABOVE = 64

_DEFAULTS = {
    "precision": 4,
    "threshold": 1000,
    "edgeitems": 3,
    "linewidth": 80,
    "sci_mode": None,
}
_PROFILES = {
    "default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
    "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
    "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80},
}
_opts = dict(_DEFAULTS)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set the options used by :func:`tensor_repr` (same semantics as torch).

    Parameters
    ----------
    precision : int, optional
        Number of digits after the decimal point for floating point output
        (default 4).
    threshold : int or float, optional
        Tensors with more elements than this are summarised (default 1000).
    edgeitems : int, optional
        Number of items shown at the beginning and end of each summarised
        dimension (default 3).
    linewidth : int, optional
        Number of characters per line used for line breaking (default 80).
    profile : {"default", "short", "full"}, optional
        Preset applied before the individual options above.
    sci_mode : bool or None, optional
        Force (True) or disable (False) scientific notation; None (the
        default) lets the formatter decide. Like torch, this option is
        always assigned, so omitting it resets it to None.

    Examples
    --------
    >>> import numpy as np
    >>> set_printoptions(precision=2)
    >>> tensor_repr(np.array([1.12345], dtype=np.float32), "float32")
    'tensor([1.12])'
    >>> set_printoptions(profile="default")
    """
    if profile is not None:
        try:
            _opts.update(_PROFILES[profile])
        except KeyError:
            pass  # torch silently ignores unknown profiles
    if precision is not None:
        _opts["precision"] = precision
    if threshold is not None:
        _opts["threshold"] = threshold
    if edgeitems is not None:
        _opts["edgeitems"] = edgeitems
    if linewidth is not None:
        _opts["linewidth"] = linewidth
    _opts["sci_mode"] = sci_mode


def get_printoptions():
    """Return the current print options.

    Returns
    -------
    dict
        Keys ``precision``, ``threshold``, ``edgeitems``, ``linewidth`` and
        ``sci_mode``; can be passed as ``**kwargs`` to
        :func:`set_printoptions`.

    Examples
    --------
    >>> get_printoptions()["precision"]
    4
    """
    return dict(_opts)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Temporarily change the print options inside a ``with`` block.

    Parameters
    ----------
    **kwargs
        Same arguments as :func:`set_printoptions`.

    Examples
    --------
    >>> import numpy as np
    >>> with printoptions(precision=1):
    ...     tensor_repr(np.array(0.25, dtype=np.float32), "float32")
    'tensor(0.2)'
    """
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """Element formatter shared by all elements of one tensor."""

    __slots__ = ("floating", "int_mode", "sci_mode", "max_width", "precision")

    def __init__(self, values, floating, precision, sci_opt):
        # ``values`` is a flat numpy array (already summarised).
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        self.precision = precision
        if not floating:
            if values.size:
                if values.dtype == np.bool_:
                    self.max_width = 5 if not values.all() else 4
                else:
                    self.max_width = max(len(str(values.max())), len(str(values.min())))
            return
        if values.size > _VECTORISE_ABOVE:
            self._init_float_vectorised(values, precision, sci_opt)
            return
        nonzero = [v for v in values.tolist() if v != 0.0 and math.isfinite(v)]
        if not nonzero:
            return
        for v in nonzero:
            if not v.is_integer():
                self.int_mode = False
                break
        absolute = [abs(v) for v in nonzero]
        self._set_sci(min(absolute), max(absolute), sci_opt)
        self.max_width = max(1, max(len(s) for s in self._width_strings(nonzero)))

    def _init_float_vectorised(self, values, precision, sci_opt):
        vals = values.astype(np.float64)
        vals = vals[np.isfinite(vals) & (vals != 0.0)]
        if not vals.size:
            return
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        absolute = np.abs(vals)
        self._set_sci(float(absolute.min()), float(absolute.max()), sci_opt)
        # The formatted width is monotonic in |v| for fixed notation and
        # largest at the extremes of |v| for scientific notation, so only
        # the extreme values of each sign need to be formatted.
        candidates = []
        for part in (vals[vals > 0], vals[vals < 0]):
            if part.size:
                candidates.append(float(part.max()))
                candidates.append(float(part.min()))
        self.max_width = max(1, max(len(s) for s in self._width_strings(candidates)))

    def _set_sci(self, nz_min, nz_max, sci_opt):
        if sci_opt is None:
            self.sci_mode = nz_max / nz_min > 1000.0 or nz_max > 1.0e8 or nz_min < 1.0e-4
        else:
            self.sci_mode = sci_opt

    def _width_strings(self, values):
        if self.sci_mode:
            spec = f".{self.precision}e"
            return [format(v, spec) for v in values]
        if self.int_mode:
            # one extra character for the trailing "."
            return [format(v, ".0f") + "." for v in values]
        spec = f".{self.precision}f"
        return [format(v, spec) for v in values]

    def format(self, value):
        """Format one Python scalar, right-aligned to the common width."""
        if self.floating:
            if self.sci_mode:
                ret = format(value, f"{self.max_width}.{self.precision}e")
            elif self.int_mode:
                ret = format(value, ".0f")
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = format(value, f".{self.precision}f")
        else:
            ret = str(value)
        return ret.rjust(self.max_width)


def _summarized(arr, edgeitems):
    """Return the sub-array of ``arr`` that is actually displayed."""
    if arr.ndim == 0:
        return arr
    if arr.ndim == 1:
        if arr.shape[0] > 2 * edgeitems:
            return np.concatenate((arr[:edgeitems], arr[-edgeitems:]))
        return arr
    if not edgeitems:
        return arr[(slice(0, 0),) * arr.ndim]
    index = []
    for n in arr.shape:
        if n > 2 * edgeitems:
            index.append(np.r_[0:edgeitems, n - edgeitems:n])
        else:
            index.append(np.arange(n))
    return arr[np.ix_(*index)]


def _vector_str(arr, indent, summarize, formatter, opts):
    element_length = formatter.max_width + 2
    per_line = max(1, math.floor((opts["linewidth"] - indent) / element_length))
    edgeitems = opts["edgeitems"]
    fmt = formatter.format
    if summarize and not edgeitems:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * edgeitems:
        data = ([fmt(v) for v in arr[:edgeitems].tolist()] + [" ..."]
                + [fmt(v) for v in arr[-edgeitems:].tolist()])
    else:
        data = [fmt(v) for v in arr.tolist()]
    if len(data) <= per_line:
        return "[" + ", ".join(data) + "]"
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str(arr, indent, summarize, formatter, opts):
    ndim = arr.ndim
    if ndim == 0:
        return formatter.format(arr.item())
    if ndim == 1:
        return _vector_str(arr, indent, summarize, formatter, opts)
    edgeitems = opts["edgeitems"]
    n = arr.shape[0]
    if summarize and n > 2 * edgeitems:
        rows = list(range(edgeitems)) + [None] + list(range(n - edgeitems, n))
    else:
        rows = range(n)
    slices = ["..." if i is None
              else _tensor_str(arr[i], indent + 1, summarize, formatter, opts)
              for i in rows]
    return "[" + ("," + "\n" * (ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(text, suffixes, indent, linewidth):
    parts = [text]
    # torch's (slightly odd) measure: length of the last line plus two
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(data, dtype, *, requires_grad=None, grad_fn=None,
                default_dtype="float32", parameter=False, tangent=None, prefix="tensor("):
    """Return the text PyTorch prints for a CPU tensor with these values.

    Parameters
    ----------
    data : numpy.ndarray
        Tensor values, any shape (including 0-d). They are converted to
        ``dtype`` first (e.g. rounded to float32).
    dtype : {"float16", "float32", "float64", "int64", "int32", "bool"}
        Tensor dtype (torch name without the ``torch.`` prefix).
    requires_grad : bool, optional
        Append ``requires_grad=True`` (only when ``grad_fn`` is None).  Unset, it follows
        ``parameter`` (a ``Parameter(..., requires_grad=False)`` passes False).
    grad_fn : str, optional
        Name of the gradient function, e.g. ``"MulBackward0"``; appended as
        ``grad_fn=<MulBackward0>``.
    default_dtype : str, default "float32"
        The (floating) default dtype; floating tensors of another dtype get a
        ``dtype=`` suffix.
    parameter : bool, default False
        Render like ``print(torch.nn.Parameter(t))``: a
        ``"Parameter containing:"`` line, and ``requires_grad=True`` implied.
    tangent : str, optional
        The text of a dual tensor's tangent (forward mode), appended as ``tangent=...``.
    prefix : str, default "tensor("
        What the text begins with (a subclass of Tensor prints its class name instead).

    Returns
    -------
    str
        Exactly ``repr(t)`` (equal to ``str(t)``) of the torch tensor.

    Examples
    --------
    >>> import numpy as np
    >>> tensor_repr(np.array([1.0, 2.5], dtype=np.float32), "float32",
    ...             grad_fn="MulBackward0")
    'tensor([1.0000, 2.5000], grad_fn=<MulBackward0>)'
    >>> print(tensor_repr(np.arange(6).reshape(2, 3), "int64"))
    tensor([[0, 1, 2],
            [3, 4, 5]])
    """
    try:
        np_dtype = _NUMPY_DTYPES[dtype]
    except KeyError:
        raise ValueError(f"unsupported dtype {dtype!r}") from None
    arr = np.asarray(data, dtype=np_dtype)
    opts = _opts
    indent = len(prefix)
    suffixes = []
    size = arr.size
    if size == 0:
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
        if dtype != default_dtype:
            suffixes.append(f"dtype=torch.{dtype}")
        body = "[]"
    else:
        edgeitems = opts["edgeitems"]
        if not edgeitems:
            suffixes.append(f"size={tuple(arr.shape)}")
        if dtype != default_dtype and dtype not in _IMPLICIT_DTYPES:
            suffixes.append(f"dtype=torch.{dtype}")
        summarize = size > opts["threshold"]
        shown = _summarized(arr, edgeitems) if summarize else arr
        formatter = _Formatter(shown.reshape(-1), dtype in _FLOAT_DTYPES,
                               opts["precision"], opts["sci_mode"])
        body = _tensor_str(arr, indent, summarize, formatter, opts)
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn}>")
    elif requires_grad or (parameter and requires_grad is None):
        suffixes.append("requires_grad=True")
    if tangent is not None:
        suffixes.append(f"tangent={tangent}")
    text = prefix + body
    if suffixes:
        text = _add_suffixes(text, suffixes, indent, opts["linewidth"])
    else:
        text += ")"
    if parameter:
        text = "Parameter containing:\n" + text
    return text
