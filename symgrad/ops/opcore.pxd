# Declarations only (no logic): the C types Cython gives the fields of
# symgrad/ops/opcore.py; the compiled apply and engine read them at fixed offsets.
cdef class OpCore:
    cdef public object forward, grads, node_class, dtype, refuse, plan, optional, simple
    cdef public object outputs, view, variadic, inputs
