# Declarations only (no logic): C types for the locals of symgrad/api/apply.py when Cython
# compiles it, so that tensor fields are read at fixed offsets (symgrad/ir/cores.pxd).
cimport cython
from symgrad.ops.opcore cimport OpCore
from symgrad.ir.cores cimport TensorCore, NodeCore, new_node, new_tensor

@cython.locals(t=TensorCore, out=TensorCore)
cpdef apply(OpCore op, args, attrs=*)

@cython.locals(a=TensorCore, b=TensorCore, out=TensorCore, n=Py_ssize_t, kind=int, i=Py_ssize_t,
               j=Py_ssize_t, mask=int, scalar_meta=dict,
               enabled=bint)
cpdef _scalar_case(OpCore op, args)
