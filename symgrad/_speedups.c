/* symgrad._speedups: the two hottest loops of symgrad, compiled.
 *
 * Scalar code (micrograd's demo network written op by op on 0-d tensors) spends its time
 * in Python bookkeeping, not in arithmetic: one Tensor and one Node per op on the way
 * forward, one gradient rule per input on the way back.  This module holds the only copy
 * of two shortcuts for that case; the Python side has the general code, which gives the
 * same results for every case (and is all there is when the module is not built):
 *
 *   apply(op, args, attrs=())   an op on plain floating tensors of one dtype (and Python
 *                               numbers) with a simple saving plan; anything else goes to
 *                               symgrad.api.apply's general path.
 *   run_ordered(roots, buffers, retain_graph)
 *                               a plain backward(): DFS, sort by sequence number, and
 *                               each node without hooks run with the op table's rules;
 *                               other nodes go to the engine's Python code.
 *
 * No maths lives here: forward functions and gradient rules are the op table's own Python
 * callables.  The module is optional (symgrad is complete without it; SYMGRAD_PURE_PYTHON=1
 * turns it off), and the test suite runs the tensor and engine tests both ways.
 *
 * The parts are in symgrad/_csrc/, one translation unit (everything stays static):
 * common.c.h (the Python side's classes and slots, small helpers), apply.c.h (apply and
 * the one-op methods), backward.c.h (run_ordered); this file holds setup() and the module.
 */
#include "_csrc/common.c.h"
#include "_csrc/apply.c.h"
#include "_csrc/backward.c.h"

/* ------------------------------------------------------------------------------- setup */

static int
take(PyObject *config, const char *name, PyObject **target)
{
    PyObject *v = PyDict_GetItemString(config, name);
    if (v == NULL) {
        PyErr_Format(PyExc_KeyError, "setup(): missing %s", name);
        return -1;
    }
    Py_INCREF(v);
    Py_XSETREF(*target, v);
    return 0;
}

static PyObject *
sp_setup(PyObject *self, PyObject *config)
{
    if (!PyDict_Check(config)) {
        PyErr_SetString(PyExc_TypeError, "setup() takes a dict");
        return NULL;
    }
    PyObject *tensor = NULL, *op = NULL, *ndarray = NULL, *acc = NULL, *node = NULL,
        *dtype = NULL;
    if (take(config, "Tensor", &tensor) || take(config, "Op", &op)
        || take(config, "ndarray", &ndarray) || take(config, "AccumulateGrad", &acc)
        || take(config, "Node", &node) || take(config, "dtype", &dtype)
        || take(config, "GRAD_MODE", &grad_mode) || take(config, "sequence", &seq_iter)
        || take(config, "META0", &meta0) || take(config, "NUMBER_META", &number_meta)
        || take(config, "apply", &py_apply) || take(config, "conform_data", &conform_data)
        || take(config, "NUMPY", &numpy_backend) || take(config, "scalar_meta", &scalar_meta)
        || take(config, "version_error", &version_error)
        || take(config, "conform_grad", &conform_grad) || take(config, "release", &release)
        || take(config, "run_other", &run_other)
        || take(config, "run_accumulators", &run_accumulators)
        || take(config, "FREED", &freed_message) || take(config, "ALL_FREED", &all_freed)
        || take(config, "seq_key", &seq_key))
        goto fail;
    if (!PyType_Check(tensor) || !PyType_Check(op) || !PyType_Check(ndarray)
        || !PyType_Check(acc) || !PyType_Check(node) || !PyType_Check(dtype)
        || !PyTuple_Check(all_freed)) {
        PyErr_SetString(PyExc_TypeError, "setup(): unexpected configuration");
        goto fail;
    }
    if (str_enabled == NULL && (str_enabled = PyUnicode_InternFromString("enabled")) == NULL)
        goto fail;
    PyTypeObject *T = (PyTypeObject *)tensor, *N = (PyTypeObject *)node;
    if (slot_offset(T, "_data", &T_data) || slot_offset(T, "_dtype", &T_dtype)
        || slot_offset(T, "grad_fn", &T_grad_fn)
        || slot_offset(T, "_requires_grad", &T_requires_grad) || slot_offset(T, "_vc", &T_vc)
        || slot_offset(N, "inputs", &N_inputs) || slot_offset(N, "attrs", &N_attrs)
        || slot_offset(N, "_saved", &N_saved) || slot_offset(N, "_versions", &N_versions)
        || slot_offset(N, "_meta", &N_meta) || slot_offset(N, "_seq", &N_seq)
        || slot_offset((PyTypeObject *)op, "forward", &O_forward)
        || slot_offset((PyTypeObject *)op, "simple", &O_simple)
        || slot_offset((PyTypeObject *)op, "node_class", &O_node_class)
        || slot_offset((PyTypeObject *)op, "plan", &O_plan)
        || slot_offset((PyTypeObject *)op, "grads", &O_grads)
        || slot_offset((PyTypeObject *)dtype, "is_floating_point", &D_is_fp))
        goto fail;
    Py_XSETREF(meta_cache, PyDict_New());
    Py_XSETREF(pick_cache, PyDict_New());
    if (meta_cache == NULL || pick_cache == NULL)
        goto fail;
    Py_XSETREF(Tensor_T, T);
    Py_XSETREF(Op_T, (PyTypeObject *)op);
    Py_XSETREF(ndarray_T, (PyTypeObject *)ndarray);
    Py_XSETREF(AccumulateGrad_T, (PyTypeObject *)acc);
    Py_XSETREF(Node_T, N);
    Py_DECREF(dtype);
    Py_RETURN_NONE;
fail:
    Py_XDECREF(tensor);
    Py_XDECREF(op);
    Py_XDECREF(ndarray);
    Py_XDECREF(acc);
    Py_XDECREF(node);
    Py_XDECREF(dtype);
    return NULL;
}

/* set_packing(n): how many saved_tensors_hooks blocks are open, in any thread; while
   some are, apply leaves every call to Python (which runs the pack hooks). */
static PyObject *
sp_set_packing(PyObject *self, PyObject *arg)
{
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    packing = n;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"set_packing", sp_set_packing, METH_O,
     "set_packing(n)\n--\n\nThe number of open saved_tensors_hooks blocks."},
    {"apply", (PyCFunction)(void (*)(void))sp_apply, METH_FASTCALL | METH_KEYWORDS,
     "apply(op, args, attrs=())\n--\n\nsymgrad.tensor.apply, with its fast path compiled."},
    {"run_ordered", sp_run_ordered, METH_VARARGS,
     "run_ordered(root_nodes, buffers, retain_graph)\n--\n\n"
     "symgrad.engine._run_ordered, compiled."},
    {"setup", sp_setup, METH_O, "setup(config)\n--\n\nThe Python side's classes and helpers."},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "symgrad._speedups",
    "symgrad's two hottest loops, compiled (optional; see the C source).", -1, methods,
    NULL, NULL, NULL, NULL
};

#define INTERN(var, text) \
    if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL

PyMODINIT_FUNC
PyInit__speedups(void)
{
    empty_tuple = PyTuple_New(0);
    zero = PyLong_FromLong(0);
    if (empty_tuple == NULL || zero == NULL)
        return NULL;
    INTERN(s_view_of, "_view_of");
    INTERN(s_multi_output, "_multi_output");
    INTERN(s_accum, "_accum");
    INTERN(s_accumulator, "_accumulator");
    INTERN(s_plain, "_plain");
    INTERN(s_released, "_released");
    INTERN(s_op, "op");
    INTERN(s_grads, "grads");
    INTERN(s_seq, "_seq");
    if (PyType_Ready(&Method_Type) < 0)
        return NULL;
    PyObject *mod = PyModule_Create(&module);
    if (mod == NULL)
        return NULL;
    Py_INCREF(&Method_Type);
    if (PyModule_AddObject(mod, "method", (PyObject *)&Method_Type) < 0) {
        Py_DECREF(&Method_Type);
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
