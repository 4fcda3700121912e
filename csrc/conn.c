/* conn.c: a connection's side of both native clients (workbench/protocols/wire.py's
 * BufferedConnection and SharedConnection), which knows no protocol (conn.h):
 *
 *   conn_setup(cls, kind)
 *                     the slots of a connection class of a protocol (kind: its name, "cql" for
 *                     CqlConnection, "hbase" for RpcConnection), read at their offsets
 *   hooks(conn, kind) a connection's get_buffer, buffer_updated (its protocol's) and _flush as
 *                     builtins
 *
 * and the steps every receive path shares (wb_receive, wb_schedule_flush, wb_arm_timer,
 * wb_count_sent). tests/unit/test_cassandra_native.py and test_hbase_native.py run the
 * connections with these and with the Python methods.
 */
#include "conn.h"

/* -- the protocols, and their connections' slots ---------------------------------------------- */

WbConnLayout wb_conn_layouts[WB_PROTOCOLS];
static const WbProtocol *protocols[WB_PROTOCOLS]; /* in wb_conn_protocol's order, as the layouts */
static int protocol_count;

/* wire.py's slots, every connection class's, in wb_conn_layouts's order */
static PyObject **const wire_slots[WB_WIRE_SLOTS] = {
    &wb_names.n, &wb_names.in, &wb_names.view, &wb_names.receiving, &wb_names.broken, &wb_names.inflight,
    &wb_names.out, &wb_names.timer, &wb_names.loop, &wb_names.transport, &wb_names.sent,
};

int
wb_conn_protocol(const WbProtocol *protocol)
{
    for (int t = 0; t < protocol_count; t++)
        if (protocols[t] == protocol) /* (the module started again after a failed start) */
            return 0;
    if (protocol_count == WB_PROTOCOLS) {
        PyErr_Format(PyExc_SystemError, "conn.c: more than %d protocols", WB_PROTOCOLS);
        return -1;
    }
    protocols[protocol_count++] = protocol;
    return 0;
}

/* The protocol named `kind`, or -1 with ValueError "<who>: kind is "cql" or "hbase", not ...". */
static int
protocol_named(const char *who, const char *kind)
{
    for (int t = 0; t < protocol_count; t++)
        if (strcmp(protocols[t]->name, kind) == 0)
            return t;
    PyObject *known = PyUnicode_FromString("");
    for (int t = 0; known != NULL && t < protocol_count; t++)
        Py_SETREF(known, PyUnicode_FromFormat("%U%s\"%s\"", known, t == 0 ? "" : t + 1 < protocol_count ? ", " : " or ",
                                              protocols[t]->name));
    if (known != NULL) {
        PyErr_Format(PyExc_ValueError, "%s: kind is %U, not %.50s", who, known, kind);
        Py_DECREF(known);
    }
    return -1;
}

/* conn_setup(cls, kind): the slots of a connection class of the protocol `kind` (wire.py's and
 * the protocol's own), all or none (wb_find_slots): a class without one of them is refused, and
 * the class in use for that protocol stays in use. A connection of exactly that class is then
 * read and written at its slots' offsets (wb_cget, wb_cset); any other object, and a name that
 * is not one of its slots, by PyObject_GetAttr. */
PyObject *
wb_conn_setup(PyObject *module, PyObject *args)
{
    PyObject *cls;
    const char *kind;
    if (!PyArg_ParseTuple(args, "O!s:conn_setup", &PyType_Type, &cls, &kind))
        return NULL;
    int t = protocol_named("conn_setup", kind);
    if (t < 0)
        return NULL;
    PyObject *names[WB_CONN_SLOTS];
    Py_ssize_t found[WB_CONN_SLOTS];
    WbSlot slots[WB_CONN_SLOTS];
    int count = 0;
    for (int k = 0; k < WB_WIRE_SLOTS; k++)
        names[count++] = *wire_slots[k];
    for (int k = 0; k < WB_OWN_SLOTS && protocols[t]->own[k] != NULL; k++)
        names[count++] = *protocols[t]->own[k];
    for (int k = 0; k < count; k++)
        slots[k] = (WbSlot){cls, names[k], &found[k]};
    if (wb_find_slots("conn_setup", slots, (size_t)count) < 0)
        return NULL;
    WbConnLayout *layout = &wb_conn_layouts[t];
    Py_CLEAR(layout->type); /* (no layout while it changes) */
    memcpy(layout->names, names, sizeof(names));
    memcpy(layout->offset, found, sizeof(found));
    layout->count = count;
    layout->type = Py_NewRef(cls);
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

/* -- buffer_updated, every protocol's ------------------------------------------------------- */

/* buffer_updated's start: n becomes _n + nbytes, _receiving is set; the buffer (a new reference),
 * or NULL with an error. */
static PyObject *
receive_begin(PyObject *conn, Py_ssize_t nbytes, Py_ssize_t *n)
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
static PyObject *
receive_end(PyObject *conn, PyObject *buf, Py_ssize_t n, Py_ssize_t at, int failed)
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

/* The loop both protocols' buffer_updated share (CqlConnection's and RpcConnection's are the same
 * but for the header): while a frame's header is in and the connection stands (an answer's
 * callback may break it), a frame of a length no server sends is _malformed, and the stream
 * lost; a whole one goes to the protocol's answer; part of one waits for the next read. */
PyObject *
wb_receive(PyObject *conn, PyObject *nbytes, const WbProtocol *protocol)
{
    Py_ssize_t more = PyLong_AsSsize_t(nbytes);
    if (more == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t n;
    PyObject *buf = receive_begin(conn, more, &n);
    if (buf == NULL)
        return NULL;
    Py_ssize_t at = 0;
    int failed = 0;
    while (n - at >= protocol->header) {
        int healthy = wb_attr_is_none(conn, wb_names.broken);
        if (healthy <= 0) {
            failed = healthy < 0;
            break;
        }
        uint32_t word = wb_be32((const unsigned char *)PyByteArray_AS_STRING(buf) + at + protocol->length_at);
        int64_t size = protocol->signed_length ? (int64_t)(int32_t)word : (int64_t)word;
        if (size < 0 || size > protocol->max_body) {
            PyObject *why = PyUnicode_FromFormat("a %s of %lld bytes", protocol->unit, (long long)size);
            PyObject *r = why ? PyObject_CallMethodOneArg(conn, wb_names.malformed, why) : NULL; /* a MalformedAnswer */
            Py_XDECREF(why);
            if (r == NULL)
                failed = 1;
            Py_XDECREF(r);
            break;
        }
        Py_ssize_t end = at + protocol->header + (Py_ssize_t)size;
        if (end > n)
            break;
        if (protocol->answer(conn, buf, &at, end) < 0) {
            failed = 1;
            break;
        }
    }
    return receive_end(conn, buf, n, at, failed);
}


/* -- a connection's loop hooks, without a Python frame a wake-up ------------------------------ *
 *
 * hooks(conn, kind) gives (get_buffer, buffer_updated, _flush) as builtins bound to conn, for
 * the connection to set on itself (the loop then calls them as it would its methods, and a
 * request's call_soon(self._flush) finds the compiled one): BufferedConnection.get_buffer,
 * the protocol's buffer_updated (WbProtocol.receive: wb_receive with its answer), and
 * SharedConnection._flush. Each wake-up
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

static PyMethodDef hook_get_buffer = {"get_buffer", conn_get_buffer, METH_O,
                                      PyDoc_STR("BufferedConnection.get_buffer, compiled.")};
static PyMethodDef hook_flush = {"_flush", conn_flush, METH_NOARGS, PyDoc_STR("SharedConnection._flush, compiled.")};

PyObject *
wb_hooks(PyObject *module, PyObject *args)
{
    PyObject *conn;
    const char *kind;
    if (!PyArg_ParseTuple(args, "Os:hooks", &conn, &kind))
        return NULL;
    int t = protocol_named("hooks", kind);
    if (t < 0)
        return NULL;
    PyMethodDef *receive = (PyMethodDef *)&protocols[t]->receive; /* (PyCFunction_New keeps it, unchanged) */
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
