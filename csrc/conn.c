/* conn.c: a connection's side of both native clients (workbench/protocols/wire.py's
 * BufferedConnection and SharedConnection, with CqlConnection's and RpcConnection's own slots).
 *
 *   conn_setup(cls, kind)
 *                     the slots of a connection class (kind "cql": CqlConnection, "hbase":
 *                     RpcConnection), which cql.c and hbase.c read at their offsets
 *   hooks(conn, kind) a connection's get_buffer, buffer_updated and _flush as builtins
 *
 * and the steps every receive path shares (wb_receive_begin, wb_receive_end, wb_schedule_flush,
 * wb_arm_timer, wb_count_sent). tests/unit/test_cassandra_native.py and test_hbase_native.py run
 * the connections with these and with the Python methods.
 */
#include "speedups.h"

/* -- a connection's slots --------------------------------------------------------------------- */

WbConnLayout wb_conn_layouts[WB_KINDS];

/* Which kinds' classes have each slot, in wb_conn_slot_names's order: wire.py's slots are both
 * kinds', version, _orphans and _stream CqlConnection's own, _call_id RpcConnection's, and each
 * has its own sent. conn_setup refuses a class without one of its kind's slots. */
#define BOTH ((1 << WB_CQL) | (1 << WB_HBASE))
static const unsigned char conn_slot_kinds[WB_CONN_SLOTS] = {
    BOTH, BOTH, BOTH, BOTH, BOTH,          /* _n, _in, _view, _receiving, broken */
    BOTH, BOTH, BOTH, BOTH, BOTH,          /* _inflight, _out, _timer, loop, transport */
    1 << WB_CQL, 1 << WB_CQL, 1 << WB_CQL, /* _orphans, _stream, version */
    1 << WB_HBASE, BOTH,                   /* _call_id, sent */
};

/* conn_setup(cls, kind): the slots of a connection class (kind "cql": CqlConnection, "hbase":
 * RpcConnection), all of its kind's or none (wb_find_slots): a class without one of them is
 * refused, and the class in use for that kind stays in use. A connection of exactly that class
 * is then read and written at its slots' offsets (wb_cget, wb_cset); any other object, and a
 * name that is not one of its kind's slots, by PyObject_GetAttr. */
PyObject *
wb_conn_setup(PyObject *module, PyObject *args)
{
    PyObject *cls;
    const char *kind;
    if (!PyArg_ParseTuple(args, "O!s:conn_setup", &PyType_Type, &cls, &kind))
        return NULL;
    int t = strcmp(kind, "cql") == 0 ? WB_CQL : strcmp(kind, "hbase") == 0 ? WB_HBASE : -1;
    if (t < 0) {
        PyErr_Format(PyExc_ValueError, "conn_setup: kind is \"cql\" or \"hbase\", not %.50s", kind);
        return NULL;
    }
    Py_ssize_t found[WB_CONN_SLOTS];
    WbSlot slots[WB_CONN_SLOTS];
    size_t count = 0;
    for (int k = 0; k < WB_CONN_SLOTS; k++) {
        found[k] = -1;
        if (conn_slot_kinds[k] & (1 << t))
            slots[count++] = (WbSlot){cls, *wb_conn_slot_names[k], &found[k]};
    }
    if (wb_find_slots("conn_setup", slots, count) < 0)
        return NULL;
    Py_CLEAR(wb_conn_layouts[t].type); /* (no layout while it changes) */
    memcpy(wb_conn_layouts[t].offset, found, sizeof(found));
    wb_conn_layouts[t].type = Py_NewRef(cls);
    Py_RETURN_NONE;
}

static PyObject *s_flush, *s_call_soon, *s_arm; /* "_flush", "call_soon", "_arm" */

/* conn.sent += 1 (the Python send paths count theirs): 0, or -1 with an exception. */
int
wb_count_sent(PyObject *conn)
{
    PyObject *sent = wb_cget(conn, wb_names.sent);
    if (sent == NULL)
        return -1;
    long n = PyLong_AsLong(sent);
    Py_DECREF(sent);
    if (n == -1 && PyErr_Occurred())
        return -1;
    PyObject *more = PyLong_FromLong(n + 1);
    if (more == NULL)
        return -1;
    int r = wb_cset(conn, wb_names.sent, more);
    Py_DECREF(more);
    return r;
}

/* 1: true, 0: false, -1: error */
static int
attr_truth(PyObject *obj, PyObject *name)
{
    PyObject *v = wb_cget(obj, name);
    if (v == NULL)
        return -1;
    int truth = PyObject_IsTrue(v);
    Py_DECREF(v);
    return truth;
}

/* -- what every receive path shares (wire.py's SharedConnection) ----------------------------- */

/* A request made while nothing waits in _out: the write is a callback of the loop, unless the
 * connection is answering a read (buffer_updated writes at its end). 0, or -1 error. */
int
wb_schedule_flush(PyObject *conn, PyObject *out)
{
    if (PyList_GET_SIZE(out) != 0)
        return 0;
    int receiving = attr_truth(conn, wb_names.receiving);
    if (receiving <= 0) {
        if (receiving < 0)
            return -1;
        PyObject *loop = wb_cget(conn, wb_names.loop);
        PyObject *flush = loop ? wb_cget(conn, s_flush) : NULL;
        PyObject *handle = flush ? PyObject_CallMethodOneArg(loop, s_call_soon, flush) : NULL;
        Py_XDECREF(loop);
        Py_XDECREF(flush);
        if (handle == NULL)
            return -1;
        Py_DECREF(handle);
    }
    return 0;
}

/* A request now in flight: the connection's timeout timer runs (BufferedConnection._arm). */
int
wb_arm_timer(PyObject *conn)
{
    int no_timer = wb_attr_is_none(conn, wb_names.timer);
    if (no_timer <= 0)
        return no_timer;
    PyObject *armed = PyObject_CallMethodNoArgs(conn, s_arm);
    if (armed == NULL)
        return -1;
    Py_DECREF(armed);
    return 0;
}

/* buffer_updated's start: n becomes _n + nbytes, _receiving is set; the buffer (a new reference),
 * or NULL with an error. */
PyObject *
wb_receive_begin(PyObject *conn, Py_ssize_t nbytes, Py_ssize_t *n)
{
    PyObject *n_obj = wb_cget(conn, wb_names.n);
    if (n_obj == NULL)
        return NULL;
    *n = PyLong_AsSsize_t(n_obj);
    Py_DECREF(n_obj);
    if (*n == -1 && PyErr_Occurred())
        return NULL;
    *n += nbytes;
    PyObject *buf = wb_cget(conn, wb_names.in);
    if (buf == NULL)
        return NULL;
    if (!PyByteArray_CheckExact(buf) || *n > PyByteArray_GET_SIZE(buf)) {
        Py_DECREF(buf);
        PyErr_SetString(PyExc_TypeError, "the connection's buffer is not a bytearray holding n bytes");
        return NULL;
    }
    if (wb_cset(conn, wb_names.receiving, Py_True) < 0) {
        Py_DECREF(buf);
        return NULL;
    }
    return buf;
}

static PyObject *conn_flush(PyObject *conn, PyObject *unused);

/* buffer_updated's end (its finally, then the write): the first `at` bytes, answered, leave the
 * buffer even after an error (`failed`: one is set, and kept), _receiving is cleared, and the
 * requests the answers made go out in one write. Steals buf. */
PyObject *
wb_receive_end(PyObject *conn, PyObject *buf, Py_ssize_t n, Py_ssize_t at, int failed)
{
    PyObject *exc_type, *exc_value, *exc_tb;
    PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
    int cleanup_failed = wb_cset(conn, wb_names.receiving, Py_False) < 0;
    if (!cleanup_failed) {
        Py_ssize_t rest = n - at;
        if (at && rest)
            memmove(PyByteArray_AS_STRING(buf), PyByteArray_AS_STRING(buf) + at, (size_t)rest);
        PyObject *left = PyLong_FromSsize_t(rest);
        cleanup_failed = left == NULL || wb_cset(conn, wb_names.n, left) < 0;
        Py_XDECREF(left);
    }
    Py_DECREF(buf);
    if (failed || cleanup_failed) {
        if (exc_type != NULL) /* the first error is the one to report (it replaces a later one) */
            PyErr_Restore(exc_type, exc_value, exc_tb);
        return NULL;
    }
    PyObject *out = wb_cget(conn, wb_names.out);
    if (out == NULL)
        return NULL;
    int pending = PyObject_IsTrue(out);
    Py_DECREF(out);
    if (pending < 0)
        return NULL;
    if (pending)
        return conn_flush(conn, NULL);
    Py_RETURN_NONE;
}


/* -- a connection's loop hooks, without a Python frame a wake-up ------------------------------ *
 *
 * hooks(conn, kind) gives (get_buffer, buffer_updated, _flush) as builtins bound to conn, for
 * the connection to set on itself (the loop then calls them as it would its methods, and a
 * request's call_soon(self._flush) finds the compiled one): BufferedConnection.get_buffer,
 * cql_receive or hbase_receive (kind "cql" or "hbase"), and SharedConnection._flush. Each wake-up
 * of the loop calls all three; as methods, that is three Python frames a wake-up. */

static PyObject *s_write, *join_bytes; /* join_bytes: b"".join */

/* BufferedConnection.get_buffer: the free part of the receive buffer; a full buffer grows in
 * the Python method (the class's), which this does not repeat. */
static PyObject *
conn_get_buffer(PyObject *conn, PyObject *sizehint)
{
    PyObject *n_obj = wb_cget(conn, wb_names.n);
    if (n_obj == NULL)
        return NULL;
    Py_ssize_t n = PyLong_AsSsize_t(n_obj);
    Py_DECREF(n_obj);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    PyObject *buf = wb_cget(conn, wb_names.in);
    if (buf == NULL)
        return NULL;
    int full = !PyByteArray_CheckExact(buf) || n >= PyByteArray_GET_SIZE(buf) || n < 0;
    Py_DECREF(buf);
    if (full) {
        PyObject *method = PyObject_GetAttrString((PyObject *)Py_TYPE(conn), "get_buffer");
        if (method == NULL)
            return NULL;
        PyObject *call_args[2] = {conn, sizehint};
        PyObject *r = PyObject_Vectorcall(method, call_args, 2, NULL);
        Py_DECREF(method);
        return r;
    }
    PyObject *view = wb_cget(conn, wb_names.view);
    if (view == NULL)
        return NULL;
    PyObject *part = PySequence_GetSlice(view, n, PY_SSIZE_T_MAX);
    Py_DECREF(view);
    return part;
}

/* SharedConnection._flush: what waits in _out, in one write (none once the connection broke). */
static PyObject *
conn_flush(PyObject *conn, PyObject *unused)
{
    PyObject *out = wb_cget(conn, wb_names.out);
    if (out == NULL)
        return NULL;
    PyObject *fresh = PyList_New(0);
    if (fresh == NULL || wb_cset(conn, wb_names.out, fresh) < 0) {
        Py_XDECREF(fresh);
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(fresh);
    PyObject *result = NULL, *transport = NULL, *data = NULL;
    transport = wb_cget(conn, wb_names.transport);
    if (transport == NULL)
        goto done;
    int healthy = transport == Py_None ? 0 : wb_attr_is_none(conn, wb_names.broken);
    if (healthy < 0)
        goto done;
    if (healthy) {
        data = PyObject_CallOneArg(join_bytes, out);
        PyObject *r = data ? PyObject_CallMethodOneArg(transport, s_write, data) : NULL;
        if (r == NULL)
            goto done;
        Py_DECREF(r);
    }
    result = Py_NewRef(Py_None);
done:
    Py_DECREF(out);
    Py_XDECREF(transport);
    Py_XDECREF(data);
    return result;
}

static PyObject *
conn_cql_receive(PyObject *conn, PyObject *nbytes)
{
    Py_ssize_t n = PyLong_AsSsize_t(nbytes);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    return wb_cql_receive(conn, n);
}

static PyObject *
conn_hbase_receive(PyObject *conn, PyObject *nbytes)
{
    Py_ssize_t n = PyLong_AsSsize_t(nbytes);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    return wb_hbase_receive(conn, n);
}

static PyMethodDef hook_get_buffer = {"get_buffer", conn_get_buffer, METH_O,
                                      PyDoc_STR("BufferedConnection.get_buffer, compiled.")};
static PyMethodDef hook_flush = {"_flush", conn_flush, METH_NOARGS, PyDoc_STR("SharedConnection._flush, compiled.")};
static PyMethodDef hook_cql = {"buffer_updated", conn_cql_receive, METH_O, PyDoc_STR("cql_receive(conn, nbytes).")};
static PyMethodDef hook_hbase = {"buffer_updated", conn_hbase_receive, METH_O,
                                 PyDoc_STR("hbase_receive(conn, nbytes).")};

PyObject *
wb_hooks(PyObject *module, PyObject *args)
{
    PyObject *conn;
    const char *kind;
    if (!PyArg_ParseTuple(args, "Os:hooks", &conn, &kind))
        return NULL;
    PyMethodDef *receive = strcmp(kind, "cql") == 0 ? &hook_cql : strcmp(kind, "hbase") == 0 ? &hook_hbase : NULL;
    if (receive == NULL) {
        PyErr_Format(PyExc_ValueError, "hooks: kind is \"cql\" or \"hbase\", not %.50s", kind);
        return NULL;
    }
    PyObject *get_buffer = PyCFunction_New(&hook_get_buffer, conn);
    PyObject *updated = get_buffer ? PyCFunction_New(receive, conn) : NULL;
    PyObject *flush = updated ? PyCFunction_New(&hook_flush, conn) : NULL;
    PyObject *r = flush ? PyTuple_Pack(3, get_buffer, updated, flush) : NULL;
    Py_XDECREF(get_buffer);
    Py_XDECREF(updated);
    Py_XDECREF(flush);
    return r;
}

int
wb_conn_init(void)
{
    const WbName names[] = {{&s_flush, "_flush"}, {&s_call_soon, "call_soon"}, {&s_arm, "_arm"}, {&s_write, "write"}};
    if (wb_intern(names, sizeof(names) / sizeof(names[0])) < 0)
        return -1;
    PyObject *empty = PyBytes_FromStringAndSize(NULL, 0);
    join_bytes = empty ? PyObject_GetAttrString(empty, "join") : NULL;
    Py_XDECREF(empty);
    return join_bytes == NULL ? -1 : 0;
}
