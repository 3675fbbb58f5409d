/* symgrad._speedups, part 1 of 3: the Python side's classes and slots, set once by setup(),
 * and the small helpers both loops use.  Included by symgrad/_speedups.c only (one
 * translation unit: everything stays static). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

/* ----------------------------------------------------------------------- configuration */
/* Set once by setup(): the classes and helpers of the Python side. */
static PyTypeObject *Tensor_T, *Op_T, *ndarray_T, *AccumulateGrad_T, *Node_T;
static PyObject *grad_mode, *seq_iter, *meta0, *number_meta, *py_apply, *conform_data;
static PyObject *numpy_backend, *scalar_meta, *version_error, *conform_grad, *release,
    *run_other, *run_accumulators, *freed_message, *all_freed, *seq_key;
static PyObject *empty_tuple, *zero;
static PyObject *meta_cache, *pick_cache;
static PyObject *s_view_of, *s_multi_output, *s_accum, *s_accumulator, *s_plain,
    *s_released, *s_op, *s_grads, *s_seq;

/* Offsets of __slots__ members, read off their member descriptors. */
static Py_ssize_t T_data, T_dtype, T_grad_fn, T_requires_grad, T_vc;
static Py_ssize_t N_inputs, N_attrs, N_saved, N_versions, N_meta, N_seq;
static Py_ssize_t O_forward, O_simple, O_node_class, O_plan, O_grads;
static Py_ssize_t D_is_fp;
/* GRAD_MODE is a threading.local: its "enabled" is read and set as an attribute, so
   that each thread sees its own grad mode (as in PyTorch). */
static PyObject *str_enabled;
static long packing;  /* open saved_tensors_hooks blocks (set_packing) */

#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))

static int
slot_offset(PyTypeObject *type, const char *name, Py_ssize_t *offset)
{
    PyObject *key = PyUnicode_InternFromString(name);
    if (key == NULL)
        return -1;
    PyObject *descr = _PyType_Lookup(type, key);
    Py_DECREF(key);
    if (descr == NULL || !PyObject_TypeCheck(descr, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not a slot", type->tp_name, name);
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
    if (m->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot", type->tp_name, name);
        return -1;
    }
    *offset = m->offset;
    return 0;
}

/* A new object of a Python class, as object.__new__(cls) makes it: slots empty. */
static inline PyObject *
new_object(PyTypeObject *type)
{
    return PyBaseObject_Type.tp_new(type, empty_tuple, NULL);
}

/* Set a slot of an object, owning a new reference to v. */
static inline void
set_slot(PyObject *o, Py_ssize_t off, PyObject *v)
{
    PyObject **p = (PyObject **)((char *)o + off);
    PyObject *old = *p;
    Py_INCREF(v);
    *p = v;
    Py_XDECREF(old);
}

/* Truth of an attribute that is usually a class default (None, False). */
static inline int
attr_true(PyObject *o, PyObject *name)
{
    PyObject *v = PyObject_GetAttr(o, name);
    if (v == NULL)
        return -1;
    int r = (v == Py_None || v == Py_False) ? 0 : PyObject_IsTrue(v);
    Py_DECREF(v);
    return r;
}
