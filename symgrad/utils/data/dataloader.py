"""``DataLoader``: batches of a dataset, in the main process or in worker processes.

The arguments, their checks and messages, the default samplers and collation, the random
draws taken from the generator (the iterator's base seed, then the sampler's) and the
worker protocol (round-robin tasks, ``prefetch_factor`` per worker, results in order) are
PyTorch's.  A :class:`~symgrad.utils.data.TensorDataset` with the default collation and
samplers is batched by one fancy index per tensor, which gives the same tensors as
collating sample by sample.

Examples
--------
>>> import symgrad as torch
>>> from symgrad.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(torch.arange(10.0).reshape(5, 2), torch.arange(5))
>>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
[[0, 1], [2, 3], [4]]
>>> len(DataLoader(ds, batch_size=2, drop_last=True))
2
"""
from __future__ import annotations

import itertools
import math
import multiprocessing as python_multiprocessing
import os
import queue
import warnings
from typing import Generic, TypeVar

from ... import multiprocessing as _mp
from ...api.core import _make
from ...api.permutation import random64
from .collate import default_collate, default_convert
from .dataset import IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, _index_arrays
from .worker import (ExceptionWrapper, IterableFetcher, IterableStop, MapFetcher,
                     ResumeIteration, worker_loop)

__all__ = ["DataLoader"]

_T_co = TypeVar("_T_co", covariant=True)


class _InfiniteConstantSampler(Sampler):
    """``None`` forever: the sampler of an iterable dataset."""

    def __iter__(self):
        while True:
            yield None


def _cpu_count() -> int | None:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count()


class DataLoader(Generic[_T_co]):
    """Iterate over ``dataset`` in batches of ``batch_size`` samples (see PyTorch's
    ``torch.utils.data.DataLoader`` for every argument; ``pin_memory`` is accepted and
    warns, as PyTorch does without an accelerator)."""

    _initialized = False

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset, self.num_workers = dataset, num_workers
        self.prefetch_factor, self.pin_memory = prefetch_factor, pin_memory
        self.pin_memory_device, self.timeout = pin_memory_device, timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler, self.generator = sampler, batch_sampler, generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._iterator = None
        self._initialized = True
        self.check_worker_number_rationality()

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context) -> None:
        if context is not None:
            if self.num_workers <= 0:
                raise ValueError(f"multiprocessing_context can only be used with multi-process "
                                 f"loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
            if isinstance(context, str):
                valid = _mp.get_all_start_methods()
                if context not in valid:
                    raise ValueError(f"multiprocessing_context option should specify a valid "
                                     f"start method in {valid!r}, but got "
                                     f"multiprocessing_context={context!r}")
                context = _mp.get_context(context)
            if not isinstance(context, python_multiprocessing.context.BaseContext):
                raise TypeError(f"multiprocessing_context option should be a valid context "
                                f"object or a string specifying the start method, but got "
                                f"multiprocessing_context={context}")
        object.__setattr__(self, "_multiprocessing_context", context)

    def __setattr__(self, attr, val) -> None:
        if self._initialized and attr in ("batch_size", "batch_sampler", "sampler",
                                          "drop_last", "dataset", "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessIter(self)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self) -> int:
        if not self._iterable:
            return len(self._index_sampler)
        length = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is not None:
            length = (length // self.batch_size if self.drop_last
                      else math.ceil(length / self.batch_size))
        return length

    def check_worker_number_rationality(self) -> None:
        """Warn, as PyTorch does, when more workers are asked for than CPUs are usable."""
        if not self.num_workers:
            return
        suggest = _cpu_count()
        if suggest is None or self.num_workers > suggest:
            cpuset = "" if hasattr(os, "sched_getaffinity") else (
                " (`cpuset` is not taken into account)")
            why = (f"Our suggested max number of worker in current system is {suggest}{cpuset}, "
                   "which is smaller than what this DataLoader is going to create."
                   if suggest is not None else "DataLoader is not able to compute a suggested "
                   "max number of worker in current system.")
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                          f"total. {why} Please be aware that excessive worker creation might "
                          "get DataLoader running slow or even freeze, lower the worker number "
                          "to avoid potential slowness/freeze if necessary.", stacklevel=2)


class _BaseIter:
    """What both iterators share: the checks and draws of PyTorch's base iterator."""

    def __init__(self, loader: DataLoader) -> None:
        self._dataset, self._iterable = loader.dataset, loader._iterable
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation, self._drop_last = loader._auto_collation, loader.drop_last
        self._index_sampler, self._num_workers = loader._index_sampler, loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be "
                          "used as the device,ignore pin_memory_device="
                          f"'{loader.pin_memory_device}'.", stacklevel=3)
        if loader.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        self._timeout, self._collate_fn = loader.timeout, loader.collate_fn
        self._persistent_workers = loader.persistent_workers
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = random64(loader.generator)
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (self._iterable and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (f"Length of IterableDataset {self._dataset} was reported to be "
                   f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                   f"{self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data."
                        "IterableDataset for examples.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)


def _fast_batches(loader: DataLoader):
    """Index arrays for one-index-per-tensor batching, or ``None``: only a TensorDataset
    (exactly) of tensors that need no gradient, with the default sampler, batch sampler and
    collation, qualifies."""
    if (type(loader.dataset) is not TensorDataset or loader.collate_fn is not default_collate
            or loader.batch_sampler is None
            or any(t.requires_grad for t in loader.dataset.tensors)):
        return None
    return _index_arrays(loader.batch_sampler)


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._loader = loader
        self._fast = None
        self._fetcher = (IterableFetcher if self._iterable else MapFetcher)(
            self._dataset, self._auto_collation, self._collate_fn, self._drop_last)

    def _next_data(self):
        if self._num_yielded == 0 and self._fast is None:
            # why: drawn when PyTorch's sampler draws, at the first batch
            self._fast = _fast_batches(self._loader) or False
            if self._fast:
                self._sampler_iter = iter(())
        if self._fast:
            index = next(self._fast)
            # (a list: default_collate transposes a tuple sample into a list)
            return [_make(t._data[index], t.dtype) for t in self._dataset.tensors]
        return self._fetcher.fetch(self._next_index())


class _MultiProcessIter(_BaseIter):
    """Batches fetched by ``num_workers`` worker processes (PyTorch's protocol)."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._prefetch_factor, self._in_order = loader.prefetch_factor, loader.in_order
        context = loader.multiprocessing_context or python_multiprocessing
        self._workers, self._index_queues, self._shutdown = [], [], False
        self._owner = os.getpid()  # (a forked child inherits this object: not its to end)
        try:
            self._worker_result_queue = context.Queue()
            self._workers_done_event = context.Event()
            for i in range(self._num_workers):
                index_queue = context.Queue()
                index_queue.cancel_join_thread()
                w = context.Process(target=worker_loop, args=(
                    self._iterable, self._dataset, index_queue, self._worker_result_queue,
                    self._workers_done_event, self._auto_collation, self._collate_fn,
                    self._drop_last, self._base_seed, loader.worker_init_fn, i,
                    self._num_workers), daemon=True)
                w.start()
                self._index_queues.append(index_queue)
                self._workers.append(w)
        except (OSError, ImportError, NotImplementedError) as e:
            self._shutdown_workers()
            raise RuntimeError(f"DataLoader(num_workers={self._num_workers}) could not start "
                               f"worker processes on this platform ({type(e).__name__}: {e}); "
                               "use num_workers=0 to load in the main process") from None
        self._data_queue = self._worker_result_queue
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = self._rcvd_idx = self._tasks_outstanding = 0
        self._task_info = {}
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:  # persistent workers: each acknowledges a new epoch
            for q in self._index_queues:
                q.put(ResumeIteration())
            waiting = self._num_workers
            while waiting:
                idx, _ = self._get_data()
                waiting -= isinstance(idx, ResumeIteration)
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _get_data(self):
        while True:
            try:
                return self._data_queue.get(
                    timeout=self._timeout if self._timeout > 0 else 5.0)
            except queue.Empty:
                failed = [w for i, w in enumerate(self._workers)
                          if self._workers_status[i] and not w.is_alive()]
                if failed:
                    pids = ", ".join(str(w.pid) for w in failed)
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited "
                                       "unexpectedly") from None
                if self._timeout > 0:
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds"
                                       ) from None

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._iterable and isinstance(data, IterableStop):
                if self._persistent_workers:  # (kept for the next epoch)
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    return self._process_data(data, self._task_info.pop(idx)[0])
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self) -> None:
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker]:
                break
        else:
            return
        self._index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._workers_num_tasks[worker] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_id: int):
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id: int) -> None:
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        if self._shutdown or os.getpid() != self._owner:
            return
        self._shutdown = True
        if hasattr(self, "_workers_done_event"):
            self._workers_done_event.set()
        status = getattr(self, "_workers_status", None)
        for i, q in enumerate(self._index_queues):
            if self._persistent_workers or status is None or status[i]:
                q.put(None)
        for w in self._workers:
            w.join(timeout=5.0)
        for q in self._index_queues:
            q.cancel_join_thread()
            q.close()
        for w in self._workers:
            if w.is_alive():
                w.terminate()
                w.join(timeout=5.0)

    def __del__(self) -> None:
        try:
            self._shutdown_workers()
        except Exception:  # the interpreter may be tearing down
            pass
