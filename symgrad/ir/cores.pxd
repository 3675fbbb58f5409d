# Declarations only (no logic): the C types Cython gives the fields of symgrad/ir/cores.py
# when it compiles that module; the compiled apply and engine read them at fixed offsets.
cdef class TensorCore:
    cdef public object _data, _dtype, grad_fn, _vc, _accum, _view_of
    cdef public bint _requires_grad, _multi_output
    cdef public Py_ssize_t _output_nr, _view_version

cdef class NodeCore:
    cdef public object inputs, attrs, _saved, _versions, _meta, _seq, _input_nrs, _inner
    cdef public bint _plain, _released

cpdef NodeCore new_node(type cls, inputs, attrs, saved, versions, meta)
cpdef _fill(NodeCore node, inputs, attrs, saved, versions, meta)
