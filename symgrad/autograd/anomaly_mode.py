"""Anomaly detection: ``detect_anomaly`` and ``set_detect_anomaly``, as PyTorch's.

With it on (and ``check_nan``, the default), a backward pass stops at the first node whose
gradient rule returns a NaN: ``RuntimeError: Function 'SqrtBackward0' returned nan values
in its 0th output.``  (PyTorch also records where each node was made in the forward pass,
to warn with that traceback when a backward fails; symgrad does not record it.)

Examples
--------
>>> import symgrad as torch
>>> x = torch.tensor([0.0, 1.0], requires_grad=True)
>>> with torch.autograd.set_detect_anomaly(True):
...     (x.sqrt() * 0).sum().backward()
Traceback (most recent call last):
    ...
RuntimeError: Function 'SqrtBackward0' returned nan values in its 0th output.
"""
from __future__ import annotations

import warnings

from ..engine.reverse import ANOMALY

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_anomaly_enabled"]


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (``torch.is_anomaly_enabled``)."""
    return ANOMALY[0]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection checks gradients for NaN."""
    return ANOMALY[1]


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off (``torch.set_anomaly_enabled``)."""
    ANOMALY[0] = bool(enabled)
    ANOMALY[1] = bool(check_nan)


class detect_anomaly:
    """A context manager that turns anomaly detection on inside the block.

    Examples
    --------
    >>> import symgrad as torch
    >>> with torch.autograd.detect_anomaly():
    ...     torch.is_anomaly_enabled()
    True
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Turn anomaly detection on or off: as a function call or a context manager.

    Examples
    --------
    >>> import symgrad as torch
    >>> with torch.autograd.set_detect_anomaly(True, check_nan=False):
    ...     torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()
    (True, False)
    >>> torch.is_anomaly_enabled()
    False
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)
