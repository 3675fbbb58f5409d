"""``num_workers > 0`` through real worker processes, against PyTorch 2.13 (kept tiny:
each loader starts two processes), and ``torch.multiprocessing``."""
from __future__ import annotations

import math
import multiprocessing

import pytest
from conftest import same_outcome

import symgrad


def _split_stream(lib):
    class Split(lib.utils.data.IterableDataset):
        """PyTorch's documented example: each worker iterates its share."""

        def __iter__(self):
            info = lib.utils.data.get_worker_info()
            if info is None:
                return iter(range(3, 7))
            per = int(math.ceil(4 / info.num_workers))
            start = 3 + info.id * per
            return iter(range(start, min(start + per, 7)))
    return Split()


def _whoami(batch):
    """A collate_fn that says which worker collated the batch, and its seed."""
    info = symgrad.utils.data.get_worker_info() or __import__(
        "torch").utils.data.get_worker_info()
    return info.id, info.num_workers, info.seed, [int(i) for i in batch]


def _fail_on_three(i):
    if i == 3:
        raise ValueError("sample 3 is broken")
    return i


class _Items:
    def __init__(self, fn, n):
        self.fn, self.n = fn, n

    def __getitem__(self, i):
        return self.fn(i)

    def __len__(self):
        return self.n


def test_workers_give_pytorchs_batches_in_order(torch):
    def scenario(lib):
        g = lib.Generator().manual_seed(5)
        ds = lib.utils.data.TensorDataset(lib.arange(14.0).reshape(7, 2), lib.arange(7))
        shuffled = list(lib.utils.data.DataLoader(ds, 3, shuffle=True, num_workers=2,
                                                  generator=g))
        # each worker's id and seed (base seed + id, the base drawn from g as PyTorch does)
        who = list(lib.utils.data.DataLoader(range(5), 2, num_workers=2, generator=g,
                                             collate_fn=_whoami))
        split = list(lib.utils.data.DataLoader(_split_stream(lib), num_workers=2))
        return shuffled, who, split
    same_outcome(scenario, expect_error=False)


def test_worker_errors_come_back_with_pytorchs_message(torch):
    """The batch that failed raises (PyTorch's text), and the iteration goes on."""
    def scenario(lib):
        it = iter(lib.utils.data.DataLoader(_Items(_fail_on_three, 6), 2, num_workers=2))
        out = []
        try:
            for _ in range(4):
                try:
                    out.append(next(it).tolist())
                except ValueError as e:
                    out.append((str(e).splitlines()[0], str(e).splitlines()[-1]))
                except StopIteration:
                    out.append("end")
        finally:
            # why: PyTorch's iterator, ended by the garbage collector instead, waits 5 s a
            # worker
            it._shutdown_workers()
        return out
    same_outcome(scenario, expect_error=False)


def test_persistent_workers_run_an_iterable_dataset_every_epoch(torch):
    def scenario(lib):
        loader = lib.utils.data.DataLoader(_split_stream(lib), batch_size=None,
                                           num_workers=2, persistent_workers=True)
        epochs = [[int(v) for v in loader] for _ in range(3)]
        loader._iterator._shutdown_workers()  # why: as the loader's end would, at once
        return epochs
    same_outcome(scenario, expect_error=False)


def _init_marks_dataset(worker_id):
    info = symgrad.utils.data.get_worker_info()
    info.dataset.mark = 100 * (worker_id + 1)


class _Marked:
    mark = 0

    def __getitem__(self, i):
        return self.mark + i

    def __len__(self):
        return 4


def test_worker_init_fn_runs_in_each_worker_on_its_copy():
    loader = symgrad.utils.data.DataLoader(_Marked(), 1, num_workers=2,
                                           worker_init_fn=_init_marks_dataset,
                                           persistent_workers=True)
    assert [int(b) for b in loader] == [100, 201, 102, 203]
    assert [int(b) for b in loader] == [100, 201, 102, 203]  # the same workers again
    assert symgrad.utils.data.get_worker_info() is None
    loader._iterator._shutdown_workers()


def test_multiprocessing_reexports_pythons_module_as_pytorch_does(torch):
    mp = symgrad.multiprocessing
    assert set(torch.multiprocessing.__all__) <= set(mp.__all__)
    assert all(getattr(mp, name) is getattr(multiprocessing, name)
               for name in multiprocessing.__all__)
    assert mp.get_sharing_strategy() == torch.multiprocessing.get_sharing_strategy()
    assert mp.get_all_sharing_strategies() == torch.multiprocessing.get_all_sharing_strategies()
    same_outcome(lambda lib: lib.multiprocessing.set_sharing_strategy("nope"))


def _child(i, path):
    if i == 1:
        raise KeyError("child one fails")
    with open(f"{path}.{i}", "w") as f:
        f.write(str(i))


def test_start_processes_runs_each_and_reports_a_failure(tmp_path):
    with pytest.raises(symgrad.multiprocessing.ProcessRaisedException) as info:
        symgrad.multiprocessing.start_processes(_child, (str(tmp_path / "out"),), nprocs=2,
                                                start_method="fork")
    assert "-- Process 1 terminated with the following error:" in str(info.value)
    assert "KeyError: 'child one fails'" in str(info.value)
    assert (tmp_path / "out.0").read_text() == "0"


class _NoProcessContext(multiprocessing.context.ForkContext):
    """A platform whose processes cannot start (as where sem_open or fork is missing)."""

    class Process(multiprocessing.context.ForkProcess):
        def start(self):
            raise OSError(38, "Function not implemented")


def test_a_platform_without_processes_gets_one_clear_error():
    loader = symgrad.utils.data.DataLoader(range(4), 2, num_workers=1,
                                           multiprocessing_context=_NoProcessContext())
    with pytest.raises(RuntimeError) as info:
        iter(loader)
    assert str(info.value) == (
        "DataLoader(num_workers=1) could not start worker processes on this platform "
        "(OSError: [Errno 38] Function not implemented); use num_workers=0 to load in "
        "the main process")
    assert [b.tolist() for b in symgrad.utils.data.DataLoader(range(4), 2)] == [[0, 1], [2, 3]]
