# Declarations only (no logic): the C types Cython gives the fields of symgrad/ir/cores.py
# when it compiles that module; the compiled apply and engine read them at fixed offsets.
cimport cython
from symgrad.ops.opcore cimport OpCore

cdef class TensorCore:
    cdef public object _data, _dtype, grad_fn, _vc, _accum, _view_of
    cdef public bint _requires_grad, _multi_output
    cdef public Py_ssize_t _output_nr, _view_version

cdef class NodeCore:
    cdef public object inputs, attrs, _saved, _versions, _meta, _seq, _input_nrs, _inner, _op
    cdef public bint _plain, _released

@cython.locals(t=TensorCore)
cpdef TensorCore new_tensor(TensorCore proto, data, dtype, vc)
@cython.locals(node=NodeCore, cls=type)
cpdef NodeCore new_node(OpCore op, inputs, attrs, saved, versions, meta)
cpdef _fill(NodeCore node, inputs, attrs, saved, versions, meta)
