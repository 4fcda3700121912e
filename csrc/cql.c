/* cql.c: the CQL protocol's hot path, a connection's side.
 *
 *   cql_setup(_Chain, LazyRow, TokenAwareRouting.route)
 *                     the classes (and their slots) the CQL answers know
 *   hooks(conn, "cql")'s buffer_updated
 *                     (conn.c's wb_receive with cql_answer) CqlConnection.buffer_updated with
 *                     _answer, _Chain.answered, _Chain.go and CqlConnection.send's usual path
 *
 * mirroring workbench/databases/cassandra/protocol/cql.py (the codec: LazyRow), databases/cassandra/protocol/connection.py (CqlConnection,
 * _Chain) and databases/cassandra/protocol/routing.py (TokenAwareRouting.route); a statement's values and a sequence's
 * statements are cql_statements.c's. tests/unit/test_cassandra_native.py and
 * test_parsers_fuzz.py run both, answer for answer and byte for byte.
 *
 * CqlConnection.buffer_updated answers every whole frame in the connection's buffer, keeps what
 * is left of a frame for the next read, and writes the requests the answers' callbacks made in
 * one go (conn.c's loop, every protocol's). Most frames are the answer to a chain's step (a
 * read's one row of the usual layout, or an update's Void), and for those cql_answer does in C
 * what CqlConnection._answer, _Chain.answered, _Chain.go and CqlConnection.send do: record the
 * answer, ask the lane whether to go on, and send the next step. Every other frame (an error, a
 * set-up answer, an event, rows of another shape, flags) and every step that does not go as
 * usual (a value its statement cannot take, no node, no free stream id) goes to that Python
 * code, which stays the reference (tests/unit/test_cassandra_native.py runs both).
 */
#include "cql.h"
#include "cql_statements.h"
#include "conn.h"
#include "deadline.h"

static PyObject *chain_type, *lazyrow_type;  /* _Chain and LazyRow, given by cql_setup */
static PyObject *route_function;              /* TokenAwareRouting.route */
/* the names cql.c alone reads (wb_names has those it shares) */
static PyObject *s_stmt, *s_columns, *s_layout, *s_retried, *s_go, *s_done, *s_set_result, *s_body, *s_route,
    *s_send, *s_size, *s_done_method, *s_conns, *s_lr_columns, *s_lr_layout, *s_lr_buf, *s_lr_i;
static PyObject *s_orphans, *s_stream, *s_version; /* CqlConnection's own slots (the CQL protocol's) */

#define CQL_RESULT 0x08
#define CQL_EXECUTE 0x0A
#define CQL_ROWS 2
#define CQL_NO_METADATA 0x0004
#define CQL_MAX_FRAME (256 * 1024 * 1024) /* databases/cassandra/protocol/cql.py's MAX_FRAME */
#define CQL_HEADER 9 /* a frame's header: databases/cassandra/protocol/cql.py's HEADER */

/* _Chain's slots (its own and _Call's) and LazyRow's, found by cql_setup */
static Py_ssize_t ch_t0, ch_stmt, ch_body, ch_retried, ch_items, ch_more, ch_answers, ch_done, ch_route;
static Py_ssize_t lr_columns, lr_layout, lr_buf, lr_i, lr_row;

/* cql_setup(_Chain, LazyRow, TokenAwareRouting.route): the classes cql_receive knows, with their
 * slots, all or none (wb_find_slots): a class without one of them is refused, and the classes in
 * use stay in use. */
PyObject *
wb_cql_setup(PyObject *module, PyObject *args)
{
    PyObject *chain, *lazyrow, *route;
    if (!PyArg_ParseTuple(args, "OOO:cql_setup", &chain, &lazyrow, &route))
        return NULL;
    if (!PyType_Check(lazyrow) || !PyType_Check(chain)) {
        PyErr_SetString(PyExc_TypeError, "cql_setup: _Chain and LazyRow must be classes");
        return NULL;
    }
    const WbSlot slots[] = {
        {chain, wb_names.t0, &ch_t0}, {chain, s_stmt, &ch_stmt}, {chain, s_body, &ch_body},
        {chain, s_retried, &ch_retried}, {chain, wb_names.items, &ch_items}, {chain, wb_names.more, &ch_more},
        {chain, wb_names.answers, &ch_answers}, {chain, s_done, &ch_done}, {chain, s_route, &ch_route},
        {lazyrow, s_lr_columns, &lr_columns}, {lazyrow, s_lr_layout, &lr_layout}, {lazyrow, s_lr_buf, &lr_buf},
        {lazyrow, s_lr_i, &lr_i}, {lazyrow, wb_names.row, &lr_row},
    };
    if (wb_find_slots("cql_setup", slots, sizeof(slots) / sizeof(slots[0])) < 0)
        return NULL;
    Py_XSETREF(chain_type, Py_NewRef(chain));
    Py_XSETREF(lazyrow_type, Py_NewRef(lazyrow));
    Py_XSETREF(route_function, Py_NewRef(route));
    Py_RETURN_NONE;
}

/* CqlConnection.send(call, EXECUTE, body) where the next stream id is free: 1 sent, 0 not tried
 * (the caller uses the Python send), -1 error. */
static int
send_fast(PyObject *conn, PyObject *call, PyObject *body)
{
    int result = -1;
    PyObject *inflight = NULL, *orphans = NULL, *stream = NULL, *out = NULL, *version = NULL;
    PyObject *next = NULL, *header = NULL, *t0 = NULL;
    inflight = wb_cget(conn, wb_names.inflight);
    orphans = inflight ? wb_cget(conn, s_orphans) : NULL;
    stream = orphans ? wb_cget(conn, s_stream) : NULL;
    if (stream == NULL)
        goto done;
    if (!PyDict_CheckExact(inflight) || !PyLong_CheckExact(stream) || !PyBytes_CheckExact(body)) {
        result = 0;
        goto done;
    }
    long sid = PyLong_AsLong(stream);
    if (sid == -1 && PyErr_Occurred())
        goto done;
    int taken = PyDict_Contains(inflight, stream);
    if (taken == 0)
        taken = PySequence_Contains(orphans, stream);
    if (taken < 0)
        goto done;
    if (taken || sid < 0 || sid > 0x7FFF || PyBytes_GET_SIZE(body) > 0x7FFFFFFF) {
        result = 0;
        goto done;
    }
    next = PyLong_FromLong((sid + 1) & 0x7FFF);
    out = next ? wb_cget(conn, wb_names.out) : NULL;
    version = out ? wb_cget(conn, s_version) : NULL;
    if (version == NULL)
        goto done;
    if (!PyList_CheckExact(out)) {
        result = 0;
        goto done;
    }
    long v = PyLong_AsLong(version);
    if (v == -1 && PyErr_Occurred())
        goto done;
    if (wb_cset(conn, s_stream, next) < 0)
        goto done;
    if (wb_schedule_flush(conn, out) < 0)
        goto done;
    Py_ssize_t size = PyBytes_GET_SIZE(body);
    header = PyBytes_FromStringAndSize(NULL, 9);
    if (header == NULL)
        goto done;
    unsigned char *h = (unsigned char *)PyBytes_AS_STRING(header);
    h[0] = (unsigned char)v;
    h[1] = 0;
    h[2] = (unsigned char)(sid >> 8);
    h[3] = (unsigned char)sid;
    h[4] = CQL_EXECUTE;
    h[5] = (unsigned char)(size >> 24);
    h[6] = (unsigned char)(size >> 16);
    h[7] = (unsigned char)(size >> 8);
    h[8] = (unsigned char)size;
    if (PyList_Append(out, header) < 0 || PyList_Append(out, body) < 0)
        goto done;
    t0 = PyLong_FromLongLong(wb_now_ns());
    if (t0 == NULL)
        goto done;
    wb_slot_set(call, ch_t0, t0); /* (the call is a _Chain: chain_go's) */
    if (PyDict_SetItem(inflight, stream, call) < 0)
        goto done;
    if (wb_arm_timer(conn) < 0 || wb_count_sent(conn) < 0)
        goto done;
    result = 1;
done:
    Py_XDECREF(inflight);
    Py_XDECREF(orphans);
    Py_XDECREF(stream);
    Py_XDECREF(out);
    Py_XDECREF(version);
    Py_XDECREF(next);
    Py_XDECREF(header);
    Py_XDECREF(t0);
    return result;
}

/* The Python step, from the step whose more() has been asked already: call.go(True) (True: do
 * not ask more() again for it; it is asked before each step after). */
static int
go_python(PyObject *call)
{
    PyObject *r = PyObject_CallMethodOneArg(call, s_go, Py_True);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* TokenAwareRouting.route(stmt, params) of a session with one connection: that connection while it
 * is not broken. *target: a new reference to it, or NULL to call the route (several nodes, or
 * the one node down); -1 error. */
static int
single_connection(PyObject *route, PyObject **target)
{
    *target = NULL;
    if (route_function == NULL || !PyMethod_Check(route) || PyMethod_GET_FUNCTION(route) != route_function)
        return 0;
    PyObject *conns = PyObject_GetAttr(PyMethod_GET_SELF(route), s_conns);
    if (conns == NULL)
        return -1;
    int result = 0;
    if (PyList_CheckExact(conns) && PyList_GET_SIZE(conns) == 1) {
        PyObject *conn = PyList_GET_ITEM(conns, 0);
        if (conn != Py_None) {
            int healthy = wb_attr_is_none(conn, wb_names.broken);
            if (healthy < 0)
                result = -1;
            else if (healthy)
                *target = Py_NewRef(conn);
        }
    }
    Py_DECREF(conns);
    return result;
}

/* LazyRow(columns, layout, body, 16) without its __init__'s Python frame: the same five slots. */
static PyObject *
lazy_row(PyObject *columns, PyObject *layout, PyObject *body)
{
    PyTypeObject *type = (PyTypeObject *)lazyrow_type;
    PyObject *row = type->tp_alloc(type, 0);
    if (row == NULL)
        return NULL;
    PyObject *sixteen = PyLong_FromLong(16);
    if (sixteen == NULL) {
        Py_DECREF(row);
        return NULL;
    }
    wb_slot_set(row, lr_columns, columns);
    wb_slot_set(row, lr_layout, layout);
    wb_slot_set(row, lr_buf, body);
    wb_slot_set(row, lr_i, sixteen);
    wb_slot_set(row, lr_row, Py_None);
    Py_DECREF(sixteen);
    return row;
}

/* _Chain.go(False) on its usual path: 0 done (sent the next step or ended the chain), -1 error.
 * A step that does not go as usual is left to the Python go(), from the same step. */
static int
chain_go(PyObject *conn, PyObject *call)
{
    int result = -1;
    PyObject *answers = NULL, *items = NULL, *more = NULL, *item = NULL, *body = NULL, *route = NULL;
    PyObject *target = NULL;
    answers = wb_slot_get(call, ch_answers, wb_names.answers);
    items = answers ? wb_slot_get(call, ch_items, wb_names.items) : NULL;
    more = items ? wb_slot_get(call, ch_more, wb_names.more) : NULL;
    if (more == NULL)
        goto done;
    Py_ssize_t n = PyObject_Length(answers), count = PyObject_Length(items);
    if (n < 0 || count < 0)
        goto done;
    int go_on = n < count ? wb_ask_more(more) : 0;
    if (go_on < 0)
        goto done;
    if (!go_on) {
        PyObject *done_future = wb_slot_get(call, ch_done, s_done);
        if (done_future == NULL)
            goto done;
        PyObject *is_done = PyObject_CallMethodNoArgs(done_future, s_done_method);
        int finished = is_done ? PyObject_IsTrue(is_done) : -1;
        Py_XDECREF(is_done);
        if (finished == 0) {
            PyObject *r = PyObject_CallMethodOneArg(done_future, s_set_result, answers);
            finished = r ? 1 : -1;
            Py_XDECREF(r);
        }
        Py_DECREF(done_future);
        result = finished < 0 ? -1 : 0;
        goto done;
    }
    item = PySequence_GetItem(items, n);
    if (item == NULL)
        goto done;
    if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2)
        goto python;
    PyObject *stmt = PyTuple_GET_ITEM(item, 0), *params = PyTuple_GET_ITEM(item, 1);
    int made = wb_cql_text_body(stmt, params, &body);
    if (made < 0)
        goto fallback;
    if (made == 0) {
        body = PyObject_CallMethodOneArg(stmt, s_body, params);
        if (body == NULL)
            goto fallback;
    }
    route = wb_slot_get(call, ch_route, s_route);
    if (route == NULL)
        goto fallback;
    if (single_connection(route, &target) < 0)
        goto fallback;
    if (target == NULL) {
        PyObject *route_args[2] = {stmt, params};
        target = PyObject_Vectorcall(route, route_args, 2, NULL);
        if (target == NULL)
            goto fallback;
    }
    if (target == Py_None)
        goto python;
    wb_slot_set(call, ch_stmt, stmt);
    wb_slot_set(call, ch_body, body);
    int sent = send_fast(target, call, body);
    if (sent < 0)
        goto fallback;
    if (sent == 0) {
        PyObject *opcode = PyLong_FromLong(CQL_EXECUTE);
        if (opcode == NULL)
            goto done;
        PyObject *r = PyObject_CallMethodObjArgs(target, s_send, call, opcode, body, NULL);
        Py_DECREF(opcode);
        if (r == NULL)
            goto fallback;
        Py_DECREF(r);
    }
    result = 0;
    goto done;
fallback:
    /* Python's go() catches Exception (not KeyboardInterrupt and the like) and answers the
     * step with it: run it from this step, which does the step again and handles it. */
    if (!PyErr_ExceptionMatches(PyExc_Exception))
        goto done;
    PyErr_Clear();
python:
    result = go_python(call);
done:
    Py_XDECREF(answers);
    Py_XDECREF(items);
    Py_XDECREF(more);
    Py_XDECREF(item);
    Py_XDECREF(body);
    Py_XDECREF(route);
    Py_XDECREF(target);
    return result;
}

/* One frame: 1 answered here, 0 not the usual case (the caller hands it to _answer), -1 error. */
static int
answer_fast(PyObject *conn, PyObject *inflight, int flags, int sid, int opcode, PyObject *body)
{
    if (flags != 0 || opcode != CQL_RESULT || chain_type == NULL || !PyDict_CheckExact(inflight))
        return 0;
    PyObject *key = PyLong_FromLong(sid);
    if (key == NULL)
        return -1;
    int result = -1;
    PyObject *stmt = NULL, *columns = NULL, *layout = NULL, *value = NULL, *t0 = NULL, *t1 = NULL;
    PyObject *entry = NULL, *answers = NULL;
    PyObject *call = PyDict_GetItemWithError(inflight, key); /* borrowed */
    if (call == NULL) {
        result = PyErr_Occurred() ? -1 : 0;
        goto done;
    }
    Py_INCREF(call);
    if ((PyObject *)Py_TYPE(call) != chain_type) {
        result = 0;
        goto done;
    }
    stmt = wb_slot_get(call, ch_stmt, s_stmt);
    if (stmt == NULL)
        goto done;
    if (stmt == Py_None) {
        result = 0;
        goto done;
    }
    long long answered_at = wb_now_ns(); /* as _answer: the time is taken before the body is decoded */
    const unsigned char *b = (const unsigned char *)PyByteArray_AS_STRING(body);
    Py_ssize_t size = PyByteArray_GET_SIZE(body);
    if (size < 4) {
        result = 0;
        goto done;
    }
    if ((int32_t)wb_be32(b) != CQL_ROWS) {
        value = Py_NewRef(Py_None); /* Void (an update), or another kind: decode_result gives None */
    } else {
        /* decode_result's usual answer to a prepared SELECT: no metadata, one row of the layout */
        columns = PyObject_GetAttr(stmt, s_columns);
        if (columns == NULL)
            goto done;
        if (columns == Py_None || size < 16 || ((int32_t)wb_be32(b + 4) & 0x0006) != CQL_NO_METADATA
            || (int32_t)wb_be32(b + 12) != 1) {
            result = 0;
            goto done;
        }
        layout = PyObject_GetAttr(columns, s_layout);
        if (layout == NULL)
            goto done;
        if (!PyTuple_CheckExact(layout) || PyTuple_GET_SIZE(layout) != 2) {
            result = 0;
            goto done;
        }
        PyObject *fixed_size = PyObject_GetAttr(PyTuple_GET_ITEM(layout, 0), s_size);
        if (fixed_size == NULL)
            goto done;
        Py_ssize_t want = PyLong_AsSsize_t(fixed_size);
        Py_DECREF(fixed_size);
        if (want == -1 && PyErr_Occurred())
            goto done;
        if (size - 16 != want) {
            result = 0;
            goto done;
        }
        /* databases/cassandra/protocol/cql.py's _fills: the cells' lengths (one per column of the layout) add up to the
         * row exactly (a LazyRow decodes its values only when read); else to _answer, which
         * decodes it cell by cell (or finds it malformed) */
        PyObject *lengths = PyTuple_GET_ITEM(layout, 1);
        if (!PyTuple_Check(lengths)) {
            result = 0;
            goto done;
        }
        Py_ssize_t at = 16, cell = 0, cells = PyTuple_GET_SIZE(lengths);
        while (cell < cells && at + 4 <= size) {
            int32_t length = (int32_t)wb_be32(b + at);
            at += 4 + (length > 0 ? (Py_ssize_t)length : 0);
            cell++;
        }
        if (cell < cells || at != size) {
            result = 0;
            goto done;
        }
        PyObject *row = lazy_row(columns, layout, body);
        if (row == NULL)
            goto done;
        value = PyList_New(1);
        if (value == NULL) {
            Py_DECREF(row);
            goto done;
        }
        PyList_SET_ITEM(value, 0, row);
    }
    /* CqlConnection._answer: the call leaves _inflight, then the answer's time */
    if (PyDict_DelItem(inflight, key) < 0)
        goto done;
    t1 = PyLong_FromLongLong(answered_at);
    t0 = t1 ? wb_slot_get(call, ch_t0, wb_names.t0) : NULL;
    answers = t0 ? wb_slot_get(call, ch_answers, wb_names.answers) : NULL;
    if (answers == NULL)
        goto done;
    /* _Chain.answered(True, value, t1) */
    entry = PyTuple_Pack(4, Py_True, value, t0, t1);
    if (entry == NULL || PyList_Append(answers, entry) < 0)
        goto done;
    wb_slot_set(call, ch_retried, Py_False);
    result = chain_go(conn, call) < 0 ? -1 : 1;
done:
    Py_DECREF(key);
    Py_XDECREF(call);
    Py_XDECREF(stmt);
    Py_XDECREF(columns);
    Py_XDECREF(layout);
    Py_XDECREF(value);
    Py_XDECREF(t0);
    Py_XDECREF(t1);
    Py_XDECREF(entry);
    Py_XDECREF(answers);
    return result;
}

/* One whole frame, buf[*at:end] (WbProtocol.answer): as CqlConnection.buffer_updated, its body
 * copied and the frame read before it is answered, here (answer_fast) or by _answer. */
static int
cql_answer(PyObject *conn, PyObject *buf, Py_ssize_t *at, Py_ssize_t end)
{
    const unsigned char *p = (const unsigned char *)PyByteArray_AS_STRING(buf) + *at;
    int flags = p[1], opcode = p[4];
    int sid = (int16_t)(((unsigned)p[2] << 8) | p[3]);
    PyObject *body = PyByteArray_FromStringAndSize((const char *)p + CQL_HEADER, end - *at - CQL_HEADER);
    if (body == NULL)
        return -1;
    *at = end;
    PyObject *inflight = wb_cget(conn, wb_names.inflight);
    int done = inflight ? answer_fast(conn, inflight, flags, sid, opcode, body) : -1;
    Py_XDECREF(inflight);
    if (done == 0) {
        PyObject *r = PyObject_CallMethod(conn, "_answer", "iiiO", flags, sid, opcode, body);
        done = r ? 1 : -1;
        Py_XDECREF(r);
    }
    Py_DECREF(body);
    return done < 0 ? -1 : 0;
}

static PyObject *cql_receive(PyObject *conn, PyObject *nbytes);

/* The CQL protocol, as conn.c knows it: CqlConnection's own slots, a frame's header (version,
 * flags, stream, opcode, then the body's length, an int), and its answer. */
static WbProtocol cql = {
    .name = "cql",
    .own = {&s_orphans, &s_stream, &s_version, NULL},
    .header = CQL_HEADER,
    .length_at = 5,
    .signed_length = 1,
    .max_body = CQL_MAX_FRAME,
    .unit = "frame",
    .answer = cql_answer,
    .receive = {"buffer_updated", cql_receive, METH_O, PyDoc_STR("CqlConnection.buffer_updated, compiled.")},
};

static PyObject *
cql_receive(PyObject *conn, PyObject *nbytes)
{
    return wb_receive(conn, nbytes, &cql);
}

int
wb_cql_init(void)
{
    const WbName names[] = {
        {&s_orphans, "_orphans"}, {&s_stream, "_stream"}, {&s_version, "version"},
        {&s_stmt, "stmt"}, {&s_columns, "columns"}, {&s_layout, "layout"}, {&s_retried, "retried"}, {&s_go, "go"},
        {&s_done, "done"}, {&s_set_result, "set_result"}, {&s_body, "body"}, {&s_route, "route"}, {&s_send, "send"},
        {&s_size, "size"}, {&s_done_method, "done"}, {&s_conns, "conns"}, {&s_lr_columns, "_columns"}, {&s_lr_layout, "_layout"}, {&s_lr_buf, "_buf"},
        {&s_lr_i, "_i"},
    };
    if (wb_intern(names, sizeof(names) / sizeof(names[0])) < 0)
        return -1;
    return wb_conn_protocol(&cql);
}
