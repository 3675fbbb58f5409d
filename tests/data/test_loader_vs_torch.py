"""``DataLoader`` against PyTorch 2.13 in the main process: the batches (values, dtypes,
container types), their order under the same seed, lengths, every argument's error and
warning; the TensorDataset fast path gives what collating sample by sample gives."""
from __future__ import annotations

import pytest
from conftest import describe, same_outcome

import symgrad


def _tensor_dataset(lib, n=10):
    return lib.utils.data.TensorDataset(lib.arange(2.0 * n).reshape(n, 2),
                                        lib.arange(n), lib.arange(n, dtype=lib.float64))


def _rows(lib, n=10):
    """A user's map-style dataset (no fast path): samples are dicts."""
    class Rows(lib.utils.data.Dataset):
        def __len__(self):
            return n

        def __getitem__(self, i):
            return {"x": lib.full((2,), float(i)), "y": i, "name": f"row{i}"}
    return Rows()


LOADERS = {
    "tensor dataset": lambda lib: lib.utils.data.DataLoader(_tensor_dataset(lib), 4),
    "drop_last": lambda lib: lib.utils.data.DataLoader(_tensor_dataset(lib), 4,
                                                       drop_last=True),
    "shuffle": lambda lib: lib.utils.data.DataLoader(_tensor_dataset(lib), 3, shuffle=True),
    "shuffle generator": lambda lib: lib.utils.data.DataLoader(
        _tensor_dataset(lib), 3, shuffle=True, generator=lib.Generator().manual_seed(1)),
    "batch 1": lambda lib: lib.utils.data.DataLoader(_tensor_dataset(lib, 3)),
    "no batching": lambda lib: lib.utils.data.DataLoader(_tensor_dataset(lib, 3),
                                                         batch_size=None),
    "dicts": lambda lib: lib.utils.data.DataLoader(_rows(lib), 4, shuffle=True),
    "list": lambda lib: lib.utils.data.DataLoader([(i, float(i)) for i in range(5)], 2),
    "range shuffled": lambda lib: lib.utils.data.DataLoader(range(7), 3, shuffle=True,
                                                            drop_last=True),
    "sampler": lambda lib: lib.utils.data.DataLoader(
        range(10), 4, sampler=lib.utils.data.SubsetRandomSampler(
            [1, 3, 5, 7, 9], generator=lib.Generator().manual_seed(0))),
    "batch_sampler": lambda lib: lib.utils.data.DataLoader(
        _tensor_dataset(lib), batch_sampler=[[0, 5], [9], [2, 2, 3]]),
    "collate_fn": lambda lib: lib.utils.data.DataLoader(range(5), 2,
                                                        collate_fn=lambda b: sum(b)),
    "replacement": lambda lib: lib.utils.data.DataLoader(
        _tensor_dataset(lib), 4, sampler=lib.utils.data.RandomSampler(
            range(10), replacement=True, num_samples=9)),
    "subset": lambda lib: lib.utils.data.DataLoader(lib.utils.data.Subset(
        _tensor_dataset(lib), [8, 1, 4]), 2),
    "numpy samples": lambda lib: lib.utils.data.DataLoader(
        [__import__("numpy").full(2, i, dtype="float32") for i in range(3)], 2),
}


@pytest.mark.parametrize("name", list(LOADERS))
def test_batches_and_length(name):
    def scenario(lib):
        lib.manual_seed(2024)
        loader = LOADERS[name](lib)
        return len(loader), list(loader), list(loader)  # two epochs
    same_outcome(scenario, expect_error=False)


def test_iterable_dataset_batches_and_length(torch):
    def scenario(lib):
        class Stream(lib.utils.data.IterableDataset):
            def __iter__(self):
                return iter(range(7))

            def __len__(self):
                return 7
        loaders = [lib.utils.data.DataLoader(Stream(), 3, drop_last=d) for d in (False, True)]
        loaders.append(lib.utils.data.DataLoader(Stream(), batch_size=None))
        return [(len(ld), list(ld)) for ld in loaders]
    same_outcome(scenario, expect_error=False)


def test_iterable_dataset_longer_than_its_len_warns(torch):
    def scenario(lib):
        class Liar(lib.utils.data.IterableDataset):
            def __iter__(self):
                return iter(range(3))

            def __len__(self):
                return 2

            def __repr__(self):
                return "Liar"
        loader = lib.utils.data.DataLoader(Liar(), batch_size=None)
        len(loader)
        return list(loader)
    same_outcome(scenario, expect_error=False)


ERRORS = {
    "num_workers": dict(num_workers=-1),
    "timeout": dict(timeout=-1),
    "prefetch without workers": dict(prefetch_factor=2),
    "persistent without workers": dict(persistent_workers=True),
    "sampler and shuffle": dict(sampler=[0, 1], shuffle=True),
    "batch_sampler and batch_size": dict(batch_sampler=[[0]], batch_size=2),
    "batch_sampler and drop_last": dict(batch_sampler=[[0]], drop_last=True),
    "None batch and drop_last": dict(batch_size=None, drop_last=True),
    "batch size zero": dict(batch_size=0),
    "context without workers": dict(multiprocessing_context="fork"),
    "bad start method": dict(num_workers=1, multiprocessing_context="nope"),
    "bad context": dict(num_workers=1, multiprocessing_context=3),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_argument_errors(name):
    same_outcome(lambda lib: lib.utils.data.DataLoader(range(4), **ERRORS[name]))


@pytest.mark.parametrize("kwargs", [dict(shuffle=True), dict(sampler=[0]),
                                    dict(batch_sampler=[[0]])])
def test_iterable_dataset_refuses_orderings(kwargs):
    same_outcome(lambda lib: lib.utils.data.DataLoader(lib.utils.data.IterableDataset(),
                                                       **kwargs))


def test_attributes_are_fixed_after_init():
    def scenario(lib):
        loader = lib.utils.data.DataLoader(range(4))
        loader.num_workers = 0  # allowed
        loader.batch_size = 2
    same_outcome(scenario)


def test_pin_memory_is_accepted_with_pytorchs_warning():
    same_outcome(lambda lib: list(lib.utils.data.DataLoader(range(3), 2, pin_memory=True)),
                 expect_error=False)


def test_collate_errors_reach_the_user():
    same_outcome(lambda lib: list(lib.utils.data.DataLoader([object(), object()], 2)))


def test_too_many_workers_warn_as_pytorch():
    same_outcome(lambda lib: len(lib.utils.data.DataLoader(range(4), num_workers=999)),
                 expect_error=False)


@pytest.mark.parametrize("kwargs", [dict(batch_size=4, shuffle=True),
                                    dict(batch_size=3, shuffle=True, drop_last=True),
                                    dict(batch_size=5), dict(batch_size=64)])
def test_fast_path_equals_collating_sample_by_sample(kwargs):
    """The same tensors, order and draws as through a Dataset the fast path does not
    take (a Subset of every index); both seeded alike."""
    ds = _tensor_dataset(symgrad, 11)
    out = []
    for dataset in (ds, symgrad.utils.data.Subset(ds, range(11))):
        symgrad.manual_seed(99)
        out.append([describe(b, symgrad) for _ in range(2)
                    for b in symgrad.utils.data.DataLoader(dataset, **kwargs)])
    assert out[0] == out[1]
    assert len(out[0]) == 2 * len(symgrad.utils.data.DataLoader(ds, **kwargs))


def test_fast_path_leaves_graphs_to_collation(torch):
    """Tensors that require grad are stacked (StackBackward0), as PyTorch does."""
    def scenario(lib):
        ds = lib.utils.data.TensorDataset(lib.ones(3, 2, requires_grad=True))
        return list(lib.utils.data.DataLoader(ds, 2))
    same_outcome(scenario, expect_error=False)


def test_loaders_are_reachable_as_pytorch_spells_them():
    import symgrad.utils.data as data
    assert symgrad.utils.data is data
    assert symgrad.utils.data.DataLoader.__module__ == "symgrad.utils.data.dataloader"
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        symgrad.utils.nothing


def _rows_dataset(lib, n):
    """A user's map-style Dataset over tensors (``__getitem__`` indexes them)."""
    x = lib.arange(n * 3, dtype=lib.float32).reshape(n, 3) / 7
    y = lib.tensor([i % 4 for i in range(n)])
    flags = lib.tensor([i % 2 == 0 for i in range(n)])

    class Rows(lib.utils.data.Dataset):
        def __len__(self):
            return n

        def __getitem__(self, i):
            return x[i], y[i], {"flag": flags[i], "half": x[i].double() / 2}

    return Rows()


@pytest.mark.parametrize("kwargs", [dict(batch_size=4, shuffle=True), dict(batch_size=5),
                                    dict(batch_size=3, drop_last=True)])
def test_dataset_subclass_batches_as_pytorch(kwargs):
    """Rows of several dtypes and 0-d samples collated as PyTorch collates them."""
    def scenario(lib):
        lib.manual_seed(3)
        return list(lib.utils.data.DataLoader(_rows_dataset(lib, 11), **kwargs))
    same_outcome(scenario, expect_error=False)


def test_collating_rows_is_one_stack_per_field(monkeypatch):
    """Bounded work: a batch of rows is one numpy stack per field, with no op recorded or
    run per sample (the samples' own indexing aside)."""
    from symgrad.utils.data import collate as C
    calls = []
    monkeypatch.setattr(C, "stack", lambda *a, **k: calls.append(a) or symgrad.stack(*a, **k))
    samples = [(symgrad.ones(3) * i, symgrad.tensor(i)) for i in range(64)]
    xb, yb = symgrad.utils.data.default_collate(samples)
    assert calls == [] and xb.grad_fn is None and tuple(xb.shape) == (64, 3)
    assert yb.tolist() == list(range(64)) and str(yb.dtype) == "torch.int64"
    # tensors that need a gradient (or differ in dtype) go through stack, as PyTorch's
    leaf = symgrad.ones(3, requires_grad=True)
    assert symgrad.utils.data.default_collate([leaf, leaf]).grad_fn.name() == "StackBackward0"
    assert len(calls) == 1
