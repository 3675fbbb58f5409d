"""What runs in a loader's worker process, and what a worker knows about itself.

A worker seeds Python's ``random``, symgrad's generator (``base_seed + worker_id``) and
numpy's global generator (PyTorch's ``_generate_state`` of the two) as PyTorch's workers
do, sets :func:`get_worker_info`, runs ``worker_init_fn(worker_id)``, then fetches the
batches whose indices it is sent until it is sent ``None``.  An exception travels back
as text and is raised again in the main process with PyTorch's message.
"""
from __future__ import annotations

import gc
import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass

import numpy as np

from ...api.creation import manual_seed

__all__ = ["WorkerInfo", "get_worker_info", "ExceptionWrapper", "MapFetcher",
           "IterableFetcher"]

#: How long a worker waits on its queue before it looks whether its parent is alive.
STATUS_CHECK_INTERVAL = 5.0
_worker_info = None


@dataclass(frozen=True)
class WorkerInfo:
    """What :func:`get_worker_info` returns in a worker: its ``id``, ``num_workers``,
    ``seed`` and its copy of the ``dataset``."""

    id: int
    num_workers: int
    seed: int
    dataset: object
    worker_method: str = "multiprocessing"


def get_worker_info() -> WorkerInfo | None:
    """The :class:`WorkerInfo` of this worker process; ``None`` in the main process.

    Examples
    --------
    >>> from symgrad.utils.data import get_worker_info
    >>> get_worker_info() is None
    True
    """
    return _worker_info


@dataclass(frozen=True)
class ResumeIteration:
    """A persistent worker starts a new epoch: a fresh fetcher (a new dataset iterator)."""


@dataclass(frozen=True)
class IterableStop:
    """A worker's iterable dataset is exhausted."""

    worker_id: int


class ExceptionWrapper:
    """An exception and its traceback as text, raised again elsewhere by :meth:`reraise`
    with PyTorch's message ("Caught ValueError in DataLoader worker process 0. ...")."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class _KeyErrorMessage(str):
    """A KeyError's message printed as is (KeyError shows its argument's repr)."""

    def __repr__(self) -> str:
        return self


class MapFetcher:
    """Samples of a map-style dataset at a batch of indices (or one index), collated."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        getitems = getattr(self.dataset, "__getitems__", None)
        if getitems:
            data = getitems(index)
        else:
            data = [self.dataset[i] for i in index]
        return self.collate_fn(data)


class IterableFetcher(MapFetcher):
    """The next samples of an iterable dataset, as many as a batch has indices."""

    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter, self.ended = iter(dataset), False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def generate_state(base_seed: int, worker_id: int) -> list:
    """The four 32-bit words PyTorch seeds a worker's numpy global generator with (its
    ``_generate_state``: NumPy's SeedSequence hashing, written out)."""
    mask = 0xFFFFFFFF
    entropy = [worker_id, base_seed & mask, base_seed >> 32, 0]
    const_a = [0x43B0D7E5]

    def hash_(value: int) -> int:
        value = (value ^ const_a[0]) & mask
        const_a[0] = (const_a[0] * 0x931E8875) & mask
        value = (value * const_a[0]) & mask
        return (value ^ (value >> 16)) & mask

    def mix(x: int, y: int) -> int:
        result = ((0xCA01F9DD * x) & mask) - ((0x4973F715 * y) & mask)
        result &= mask
        return (result ^ (result >> 16)) & mask

    pool = [hash_(e) for e in entropy]
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = mix(pool[dst], hash_(pool[src]))
    const_b, state = 0x8B51F9DD, []
    for value in pool:
        value = (value ^ const_b) & mask
        const_b = (const_b * 0x58F38DED) & mask
        value = (value * const_b) & mask
        state.append((value ^ (value >> 16)) & mask)
    return state


def worker_loop(iterable: bool, dataset, index_queue, data_queue, done_event,
                auto_collation: bool, collate_fn, drop_last: bool, base_seed: int, init_fn,
                worker_id: int, num_workers: int) -> None:
    """The body of worker ``worker_id``: seed, set the worker info, run ``init_fn``, then
    answer ``(task, indices)`` with ``(task, batch)`` until sent ``None``."""
    global _worker_info
    # The parent's garbage came with the fork; collecting it here would run its finalizers
    # (another loader's, which would write to that loader's queues) in this worker.
    gc.freeze()
    try:
        seed = base_seed + worker_id
        random.seed(seed)
        manual_seed(seed)
        np.random.seed(generate_state(base_seed, worker_id))
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_exception = fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = (IterableFetcher if iterable else MapFetcher)(
                dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        parent, ended = os.getppid(), False
        while os.getppid() == parent:
            try:
                task = index_queue.get(timeout=STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(task, ResumeIteration):
                data_queue.put((task, None))
                ended = False
                if init_exception is None:
                    fetcher = (IterableFetcher if iterable else MapFetcher)(
                        dataset, auto_collation, collate_fn, drop_last)
                continue
            if task is None:
                break
            if done_event.is_set() or ended:
                continue
            idx, index = task
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:
                    if isinstance(e, StopIteration) and iterable:
                        data, ended = IterableStop(worker_id), True
                    else:
                        data = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, task
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
