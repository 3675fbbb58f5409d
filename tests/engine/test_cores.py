"""The cores under Tensor and Node (``symgrad.ir.cores``) behave the same compiled (Cython
extension types) and in pure Python (plain classes with ``__slots__``): defaults, attribute
setting, weak references, pickling and copies of tensors and Parameters (a subclass)."""
import copy
import pickle
import weakref

import pytest

import symgrad
from symgrad.ir import cores
from symgrad.ir.node import Node


def test_a_new_tensor_and_node_start_with_the_declared_defaults():
    t = symgrad.tensor(1.0)
    for field, value in cores.TENSOR_DEFAULTS.items():
        assert getattr(t, field) == value and type(getattr(t, field)) is type(value), field
    node = (symgrad.tensor(1.0, requires_grad=True) * 2).grad_fn
    for field, value in cores.NODE_DEFAULTS.items():
        if field != "_op":  # (apply's nodes keep their op for the engine)
            assert getattr(node, field) == value, field
    assert node._op is node.op and Node(node.inputs, (), (), (), node._meta)._op is None
    assert isinstance(t, cores.TensorCore) and isinstance(node, cores.NodeCore)
    assert isinstance(node, Node) and node._plain is True


def test_node_fields_follow_hooks_and_release():
    x = symgrad.tensor(2.0, requires_grad=True)
    y = x * x
    fn = y.grad_fn
    assert fn._plain and not fn._released
    fn.register_hook(lambda gi, go: None)
    assert fn._plain is False
    y.backward()
    assert fn._released is True and x.grad.item() == 4.0


@pytest.mark.parametrize("make", [lambda: symgrad.tensor([1.0, 2.0], requires_grad=True),
                                  lambda: symgrad.nn.Parameter(symgrad.tensor([1.0, 2.0]))],
                         ids=["tensor", "parameter"])
def test_pickle_copy_deepcopy_weakref_and_attributes(make):
    t = make()
    t.note = "mine"  # tensors take attributes, as PyTorch's do
    assert weakref.ref(t)() is t
    for other in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t), copy.copy(t)):
        assert type(other) is type(t) and other is not t
        assert other.tolist() == [1.0, 2.0] and other.requires_grad
        assert other.dtype is t.dtype and other.note == "mine" and other.grad_fn is None



def test_tensor_new_is_the_legacy_constructor_for_subclasses_too():
    """``Tensor.__new__(cls, data)`` (a subclass's ``super().__new__``) runs PyTorch's
    legacy constructor, as in torch 2.13; apply's results come from the core's allocator."""
    torch = pytest.importorskip("torch")
    for lib in (torch, symgrad):
        class Sub(lib.Tensor):
            def __new__(cls, data):
                return super().__new__(cls, data)

        t = Sub([1.0, 2.0])
        assert type(t) is Sub and t.tolist() == [1.0, 2.0] and str(t.dtype) == "torch.float32"
        u = lib.Tensor.__new__(lib.Tensor, [3.0, 4.0])
        assert type(u) is lib.Tensor and u.tolist() == [3.0, 4.0]
        assert tuple(lib.Tensor.__new__(lib.Tensor).shape) == (0,)
        assert (symgrad.ones(2) * 2).tolist() == [2.0, 2.0]
