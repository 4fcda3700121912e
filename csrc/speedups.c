/* workbench._speedups: a lane's hot path, compiled: the key choice, the lane's more(), a tick's
 * histograms, a sequence's statements, outcomes and recording, and the usual answers of the
 * native CQL and HBase clients with their next requests.
 *
 * An optional accelerator: setup.py builds it where a C compiler and Python's headers exist,
 * and workbench/speedups.py falls back to the same code in Python where it does not (or
 * with WORKBENCH_SPEEDUPS=off). Both give the very same keys from the same random stream and
 * the same answers and bytes on the wire (tests/unit/test_speedups.py, test_cassandra_native.py
 * and test_hbase_native.py compare them), so a run's results do not depend on which one it
 * used; the run records which (environment.speedups).
 *
 * This file is the module: its functions' table, PyInit__speedups, the names the files share
 * and wb_find_slots, with which every *_setup finds the slots it reads. Each job is a file of
 * its own, along the seams of the Python it mirrors (speedups.h lists them):
 *
 *   keys.c      fnvhash64(n), KeyNamer(zeropadding, ordered)(n), ZipfianKeys(...)()
 *                     YCSB's key numbers and names, and the scrambled zipfian's next key
 *                     (workbench/config/keys.py, core/workload.py's _key_source), draw for draw
 *   choice.c    choose(ctx, n)
 *                     LaneWorkload.choose: a lane's next n transactions, draw for draw
 *   deadline.c  Deadline(engine)()
 *                     a lane's more() (core/runner.py), read by the receive paths without a call
 *   record.c    outcomes(...), record(...)
 *                     bindings/base.py's chain_outcomes: a chain's answers as outcomes, and
 *                     LaneWorkload.run_sequence's recording into the meters
 *   hist.c      tally(...), summarize(...)
 *                     a tick's histograms: from_counts's loop and summarize's walk
 *                     (workbench/metrics/histograms.py, snapshot.py), value for value
 *   conn.c      conn_setup(cls, kind), hooks(conn, kind)
 *                     a connection's slots, and its get_buffer, buffer_updated and _flush as
 *                     builtins (protocols/wire.py)
 *   cql.c       cql_setup(...), pending(...), and hooks(conn, "cql")'s buffer_updated
 *                     CassandraBinding._statements where every statement is prepared, and the
 *                     native CQL client's usual answers and next requests (protocols/cql*.py)
 *   hbase.c     hbase_setup(...), hbase_make(ctx, step), and hooks(conn, "hbase")'s buffer_updated
 *                     the native HBase client's usual requests and answers (protocols/hbase_*.py)
 */
#include "speedups.h"

WbNames wb_names;

int
wb_intern(const WbName *names, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        PyObject *name = PyUnicode_InternFromString(names[i].text);
        if (name == NULL)
            return -1;
        Py_XSETREF(*names[i].at, name);
    }
    return 0;
}

/* -- slots by offset -------------------------------------------------------------------------- */

/* The offset of type's slot `name`: 1 found, 0 not a writable object slot of type (no member
 * descriptor by that name, or one of another kind), -1 another error. */
static int
slot_offset(PyObject *type, PyObject *name, Py_ssize_t *offset)
{
    PyObject *descr = PyObject_GetAttr(type, name);
    if (descr == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    int ok = Py_IS_TYPE(descr, &PyMemberDescr_Type)
             && ((PyMemberDescrObject *)descr)->d_member->type == T_OBJECT_EX
             && !(((PyMemberDescrObject *)descr)->d_member->flags & READONLY);
    if (ok)
        *offset = ((PyMemberDescrObject *)descr)->d_member->offset;
    Py_DECREF(descr);
    return ok;
}

/* Every setup's refusal: TypeError "<setup>: <module>.<qualname> has no writable slot '<name>'". */
static void
refuse(const char *setup, PyObject *type, PyObject *name)
{
    PyObject *module = PyObject_GetAttrString(type, "__module__");
    PyObject *qualname = module ? PyType_GetQualName((PyTypeObject *)type) : NULL;
    if (qualname != NULL && PyUnicode_Check(module))
        PyErr_Format(PyExc_TypeError, "%s: %U.%U has no writable slot %R", setup, module, qualname, name);
    else {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: %R has no writable slot %R", setup, type, name);
    }
    Py_XDECREF(module);
    Py_XDECREF(qualname);
}

#define MAX_SLOTS 32

int
wb_find_slots(const char *setup, const WbSlot *slots, size_t count)
{
    Py_ssize_t found[MAX_SLOTS]; /* all or none: the classes in use keep theirs if one is missing */
    if (count > MAX_SLOTS) {
        PyErr_Format(PyExc_SystemError, "%s: more than %d slots", setup, MAX_SLOTS);
        return -1;
    }
    for (size_t k = 0; k < count; k++) {
        int ok = slot_offset(slots[k].type, slots[k].name, &found[k]);
        if (ok <= 0) {
            if (ok == 0)
                refuse(setup, slots[k].type, slots[k].name);
            return -1;
        }
    }
    for (size_t k = 0; k < count; k++)
        *slots[k].offset = found[k];
    return 0;
}

/* -- the module ---------------------------------------------------------------------------- */

static PyMethodDef methods[] = {
    {"choose", (PyCFunction)(void (*)(void))wb_choose, METH_FASTCALL,
     PyDoc_STR("choose(ctx, n): LaneWorkload.choose, the next n transactions, draw for draw.")},
    {"tally", (PyCFunction)(void (*)(void))wb_tally, METH_FASTCALL,
     PyDoc_STR("tally(buckets, counts, mask, unit, shift, base, highest): from_counts's loop.")},
    {"summarize", (PyCFunction)(void (*)(void))wb_summarize, METH_FASTCALL,
     PyDoc_STR("summarize(buckets, shift, half, unit, wanted, targets): summarize's walk.")},
    {"fnvhash64", wb_fnvhash64, METH_O, PyDoc_STR("YCSB's Utils.fnvhash64 of a non-negative long.")},
    {"hbase_setup", wb_hbase_setup, METH_VARARGS,
     PyDoc_STR("hbase_setup(_Chain, _finish, _METHODS, CALL_IDS, found_cells, decode_mutate, LazyCells): "
               "what hbase_receive knows.")},
    {"hbase_make", (PyCFunction)(void (*)(void))wb_hbase_make, METH_FASTCALL,
     PyDoc_STR("hbase_make(ctx, step): NativeBinding's make for one region, its usual steps in C.")},
    {"cql_setup", wb_cql_setup, METH_VARARGS, PyDoc_STR("cql_setup(_Chain, LazyRow): the classes cql_receive knows.")},
    {"record", (PyCFunction)(void (*)(void))wb_record, METH_FASTCALL,
     PyDoc_STR("record(steps, outcomes, m_read, m_update, READ, OK): run_sequence's recording.")},
    {"outcomes", (PyCFunction)(void (*)(void))wb_outcomes, METH_FASTCALL,
     PyDoc_STR("outcomes(steps, answers, READ, OK, NOT_FOUND, failed, row_of, without_nulls): "
               "CassandraBinding.sequence's answers as outcomes.")},
    {"pending", (PyCFunction)(void (*)(void))wb_pending, METH_FASTCALL,
     PyDoc_STR("pending(steps, READ, read_every, updates): CassandraBinding.sequence's statements, "
               "or None.")},
    {"conn_setup", wb_conn_setup, METH_VARARGS,
     PyDoc_STR("conn_setup(cls, kind): the slots of CqlConnection (\"cql\") or RpcConnection (\"hbase\").")},
    {"hooks", wb_hooks, METH_VARARGS,
     PyDoc_STR("hooks(conn, kind): (get_buffer, buffer_updated, _flush) compiled, bound to conn.")},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "workbench._speedups",
    .m_doc = PyDoc_STR("A lane's hot path, compiled (workbench/speedups.py)."),
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    const WbName names[] = {
        {&wb_names.n, "_n"}, {&wb_names.in, "_in"}, {&wb_names.view, "_view"}, {&wb_names.receiving, "_receiving"},
        {&wb_names.broken, "broken"}, {&wb_names.inflight, "_inflight"}, {&wb_names.out, "_out"},
        {&wb_names.timer, "_timer"}, {&wb_names.loop, "loop"}, {&wb_names.transport, "transport"},
        {&wb_names.orphans, "_orphans"}, {&wb_names.stream, "_stream"}, {&wb_names.version, "version"},
        {&wb_names.call_id, "_call_id"}, {&wb_names.sent, "sent"},
        {&wb_names.t0, "t0"}, {&wb_names.items, "items"}, {&wb_names.more, "more"},
        {&wb_names.answers, "answers"}, {&wb_names.row, "_row"}, {&wb_names.malformed, "_malformed"},
    };
    if (wb_intern(names, sizeof(names) / sizeof(names[0])) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (wb_keys_init(m) < 0 || wb_deadline_init(m) < 0 || wb_record_init() < 0 || wb_conn_init() < 0
        || wb_cql_init() < 0 || wb_hbase_init() < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
