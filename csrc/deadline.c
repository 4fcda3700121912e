/* deadline.c: may a lane go on? Deadline(engine) is the lane's more(), the closure in
 * workbench/core/runner.py's WorkerEngine._lane, compiled; wb_ask_more asks any lane's more()
 * (None, a Deadline without a call, or the Python closure), as both native clients' chains do
 * before each step (cql.c, hbase.c). tests/unit/test_speedups.py compares it with the closure.
 */
#include "deadline.h"

/* A lane's more(): may a sequence go on? Not while its engine is halted (paused, stopping), and
 * not past the deadline (perf_counter_ns) the lane sets before each sequence. The closure in
 * WorkerEngine._lane, compiled; the receive paths read it without a call (wb_ask_more). */
typedef struct {
    PyObject_HEAD
    PyObject *engine;
    long long deadline;
} Deadline;

static PyObject *s_halt; /* "_halt", interned */

static int
Deadline_traverse(Deadline *self, visitproc visit, void *arg)
{
    Py_VISIT(self->engine);
    return 0;
}

static int
Deadline_clear(Deadline *self)
{
    Py_CLEAR(self->engine);
    return 0;
}

static void
Deadline_dealloc(Deadline *self)
{
    PyObject_GC_UnTrack(self);
    Deadline_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
Deadline_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"engine", NULL};
    PyObject *engine;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O:Deadline", names, &engine))
        return NULL;
    Deadline *self = (Deadline *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->engine = Py_NewRef(engine);
    self->deadline = 0;
    return (PyObject *)self;
}

/* 1 go on, 0 stop, -1 error */
static int
deadline_allows(Deadline *self)
{
    PyObject *halt = PyObject_GetAttr(self->engine, s_halt);
    if (halt == NULL)
        return -1;
    int halted = PyObject_IsTrue(halt);
    Py_DECREF(halt);
    if (halted < 0)
        return -1;
    return !halted && wb_now_ns() < self->deadline;
}

static PyObject *
Deadline_call(Deadline *self, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) || (kwds != NULL && PyDict_GET_SIZE(kwds))) {
        PyErr_SetString(PyExc_TypeError, "Deadline() takes no arguments");
        return NULL;
    }
    int allows = deadline_allows(self);
    if (allows < 0)
        return NULL;
    return PyBool_FromLong(allows);
}

static PyMemberDef Deadline_members[] = {
    {"deadline", T_LONGLONG, offsetof(Deadline, deadline), 0, "perf_counter_ns after which no step starts"},
    {NULL},
};

static PyTypeObject DeadlineType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "workbench._speedups.Deadline",
    .tp_doc = PyDoc_STR("Deadline(engine)(): not engine._halt and perf_counter_ns() < .deadline"),
    .tp_basicsize = sizeof(Deadline),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = Deadline_new,
    .tp_call = (ternaryfunc)Deadline_call,
    .tp_traverse = (traverseproc)Deadline_traverse,
    .tp_clear = (inquiry)Deadline_clear,
    .tp_dealloc = (destructor)Deadline_dealloc,
    .tp_members = Deadline_members,
};

/* A lane's more(): 1 go on, 0 stop, -1 error. A compiled Deadline is read without a call. */
int
wb_ask_more(PyObject *more)
{
    if (more == Py_None)
        return 1;
    if (Py_IS_TYPE(more, &DeadlineType))
        return deadline_allows((Deadline *)more);
    PyObject *r = PyObject_CallNoArgs(more);
    if (r == NULL)
        return -1;
    int go_on = PyObject_IsTrue(r);
    Py_DECREF(r);
    return go_on;
}

int
wb_deadline_init(PyObject *module)
{
    const WbName names[] = {{&s_halt, "_halt"}};
    if (wb_intern(names, sizeof(names) / sizeof(names[0])) < 0 || PyType_Ready(&DeadlineType) < 0)
        return -1;
    return PyModule_AddObjectRef(module, "Deadline", (PyObject *)&DeadlineType);
}
