/* cql.c: the CQL protocol's hot path.
 *
 *   pending(...)      the first loop of bindings/cassandra.py's CassandraBinding.sequence: a
 *                     sequence's prepared statements and values
 *   cql_setup(_Chain, LazyRow, NativeSession._route)
 *                     the classes (and their slots) cql_receive knows
 *   cql_receive       (hooks(conn, "cql")'s buffer_updated, conn.c) CqlConnection.buffer_updated
 *                     with _answer, _Chain.answered, _Chain.go and CqlConnection.send's usual path
 *
 * mirroring workbench/protocols/cql.py (the codec: LazyRow, Statement), cql_connection.py
 * (CqlConnection, _Chain), cql_session.py (NativeSession._route) and bindings/cassandra.py:
 * tests/unit/test_cassandra_native.py and test_parsers_fuzz.py run both, answer for answer and
 * byte for byte.
 *
 * cql_receive(conn, nbytes) is CqlConnection.buffer_updated: it answers every whole frame in the
 * connection's buffer, keeps what is left of a frame for the next read, and writes the requests
 * the answers' callbacks made in one go. Most frames are the answer to a chain's step (a read's
 * one row of the usual layout, or an update's Void), and for those it does in C what
 * CqlConnection._answer, _Chain.answered, _Chain.go and CqlConnection.send do: record the answer,
 * ask the lane whether to go on, and send the next step. Every other frame (an error, a set-up
 * answer, an event, rows of another shape, flags) and every step that does not go as usual (a
 * value its statement cannot take, no node, no free stream id) goes to that Python code, which
 * stays the reference (tests/unit/test_cassandra_native.py runs both).
 */
#include "speedups.h"

static PyObject *chain_type, *lazyrow_type;  /* _Chain and LazyRow, given by cql_setup */
static PyObject *route_function;              /* NativeSession._route */
/* the names cql.c alone reads (wb_names has those it shares) */
static PyObject *s_stmt, *s_columns, *s_layout, *s_retried, *s_go, *s_done, *s_set_result, *s_body, *s_route,
    *s_send, *s_size, *s_done_method, *s_text_head, *s_arity, *s_conns, *s_lr_columns, *s_lr_layout, *s_lr_buf,
    *s_lr_i;

#define CQL_RESULT 0x08
#define CQL_EXECUTE 0x0A
#define CQL_ROWS 2
#define CQL_NO_METADATA 0x0004
#define CQL_MAX_FRAME (256 * 1024 * 1024) /* protocols/cql.py's MAX_FRAME */

/* _Chain's slots (its own and _Call's) and LazyRow's, found by cql_setup */
static Py_ssize_t ch_t0, ch_stmt, ch_body, ch_retried, ch_items, ch_more, ch_answers, ch_done, ch_route;
static Py_ssize_t lr_columns, lr_layout, lr_buf, lr_i, lr_row;

/* cql_setup(_Chain, LazyRow, NativeSession._route): the classes cql_receive knows, with their
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
    orphans = inflight ? wb_cget(conn, wb_names.orphans) : NULL;
    stream = orphans ? wb_cget(conn, wb_names.stream) : NULL;
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
    version = out ? wb_cget(conn, wb_names.version) : NULL;
    if (version == NULL)
        goto done;
    if (!PyList_CheckExact(out)) {
        result = 0;
        goto done;
    }
    long v = PyLong_AsLong(version);
    if (v == -1 && PyErr_Occurred())
        goto done;
    if (wb_cset(conn, wb_names.stream, next) < 0)
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

/* Statement.body(params) of a statement whose values are all text (every YCSB statement but a
 * scan's; Statement.text_head is then its head), for params that are all str: head, then each
 * value's length and UTF-8. 1 made, 0 not such a statement or such values (the caller uses
 * Statement.body), -1 error. */
static int
text_body(PyObject *stmt, PyObject *params, PyObject **body)
{
    PyObject *head = PyObject_GetAttr(stmt, s_text_head);
    if (head == NULL)
        return -1;
    int result = 0;
    if (!PyBytes_CheckExact(head) || !PyTuple_CheckExact(params))
        goto done;
    PyObject *arity = PyObject_GetAttr(stmt, s_arity);
    if (arity == NULL) {
        result = -1;
        goto done;
    }
    Py_ssize_t n = PyLong_AsSsize_t(arity);
    Py_DECREF(arity);
    if (n == -1 && PyErr_Occurred()) {
        result = -1;
        goto done;
    }
    if (PyTuple_GET_SIZE(params) != n)
        goto done;
    Py_ssize_t size = PyBytes_GET_SIZE(head);
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *value = PyTuple_GET_ITEM(params, k);
        if (!PyUnicode_CheckExact(value))
            goto done;
        Py_ssize_t length;
        if (PyUnicode_AsUTF8AndSize(value, &length) == NULL) { /* e.g. a lone surrogate */
            PyErr_Clear();
            goto done;
        }
        if (length > 0x7FFFFFFF)
            goto done;
        size += 4 + length;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, size);
    if (out == NULL) {
        result = -1;
        goto done;
    }
    char *at = PyBytes_AS_STRING(out);
    memcpy(at, PyBytes_AS_STRING(head), (size_t)PyBytes_GET_SIZE(head));
    at += PyBytes_GET_SIZE(head);
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_ssize_t length;
        const char *data = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(params, k), &length);
        at[0] = (char)(length >> 24);
        at[1] = (char)(length >> 16);
        at[2] = (char)(length >> 8);
        at[3] = (char)length;
        memcpy(at + 4, data, (size_t)length);
        at += 4 + length;
    }
    *body = out;
    result = 1;
done:
    Py_DECREF(head);
    return result;
}

/* NativeSession._route(stmt, params) of a session with one connection: that connection while it
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
    int made = text_body(stmt, params, &body);
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
        /* protocols/cql.py's _fills: the cells' lengths (one per column of the layout) add up to the
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

PyObject *
wb_cql_receive(PyObject *conn, Py_ssize_t nbytes)
{
    Py_ssize_t n;
    PyObject *buf = wb_receive_begin(conn, nbytes, &n);
    if (buf == NULL)
        return NULL;
    Py_ssize_t at = 0;
    int failed = 0;
    while (n - at >= 9) {
        int healthy = wb_attr_is_none(conn, wb_names.broken); /* (an answer's callback may break it) */
        if (healthy <= 0) {
            failed = healthy < 0;
            break;
        }
        const unsigned char *p = (const unsigned char *)PyByteArray_AS_STRING(buf) + at;
        int flags = p[1], opcode = p[4];
        int sid = (int16_t)(((unsigned)p[2] << 8) | p[3]);
        int32_t size = (int32_t)wb_be32(p + 5);
        if (size < 0 || size > CQL_MAX_FRAME) { /* a frame no server sends: the stream is lost */
            PyObject *why = PyUnicode_FromFormat("a frame of %d bytes", (int)size);
            PyObject *r = why ? PyObject_CallMethodOneArg(conn, wb_names.malformed, why) : NULL; /* a MalformedAnswer */
            Py_XDECREF(why);
            if (r == NULL)
                failed = 1;
            Py_XDECREF(r);
            break;
        }
        Py_ssize_t end = at + 9 + (Py_ssize_t)size;
        if (end > n)
            break;
        PyObject *body = PyByteArray_FromStringAndSize((const char *)p + 9, size);
        if (body == NULL) {
            failed = 1;
            break;
        }
        at = end;
        PyObject *inflight = wb_cget(conn, wb_names.inflight);
        int done = inflight ? answer_fast(conn, inflight, flags, sid, opcode, body) : -1;
        Py_XDECREF(inflight);
        if (done == 0) {
            PyObject *r = PyObject_CallMethod(conn, "_answer", "iiiO", flags, sid, opcode, body);
            done = r ? 1 : -1;
            Py_XDECREF(r);
        }
        Py_DECREF(body);
        if (done < 0) {
            failed = 1;
            break;
        }
    }
    return wb_receive_end(conn, buf, n, at, failed);
}

/* -- pending: a CQL sequence's statements and values ------------------------------------------- *
 *
 * pending(steps, READ, read_every, updates) is the first loop of CassandraBinding.sequence where
 * every statement is prepared already: a read of every field (arg None) is (read_every, (key,)),
 * an update (op, key, values) is (updates[tuple(values)], (*values.values(), key)). None where a
 * step needs the Python loop (a read of some fields, no read_every, an update of a shape not
 * prepared yet, values that are not a dict), or steps are not a list. */

PyObject *
wb_pending(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "pending(steps, READ, read_every, updates)");
        return NULL;
    }
    PyObject *READ = args[1], *read_every = args[2], *updates = args[3];
    if (!PyList_CheckExact(args[0]) || !PyDict_CheckExact(updates))
        Py_RETURN_NONE;
    PyObject *steps = args[0];
    Py_ssize_t count = PyList_GET_SIZE(steps);
    PyObject *out = PyList_New(count);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *step = PyList_GET_ITEM(steps, k);
        if (!PyTuple_Check(step) || PyTuple_GET_SIZE(step) != 3) {
            PyErr_SetString(PyExc_TypeError, "pending: a step is (op, key, arg)");
            goto fail;
        }
        PyObject *key = PyTuple_GET_ITEM(step, 1), *arg = PyTuple_GET_ITEM(step, 2), *bind, *params;
        int is_read = PyObject_RichCompareBool(PyTuple_GET_ITEM(step, 0), READ, Py_EQ);
        if (is_read < 0)
            goto fail;
        if (is_read) {
            if (arg != Py_None || read_every == Py_None)
                goto python;
            bind = read_every;
            params = PyTuple_Pack(1, key);
            if (params == NULL)
                goto fail;
        } else {
            if (!PyDict_CheckExact(arg))
                goto python;
            Py_ssize_t n = PyDict_GET_SIZE(arg), pos = 0, i = 0;
            PyObject *shape = PyTuple_New(n), *field, *value;
            if (shape == NULL)
                goto fail;
            params = PyTuple_New(n + 1);
            if (params == NULL) {
                Py_DECREF(shape);
                goto fail;
            }
            while (i < n && PyDict_Next(arg, &pos, &field, &value)) {
                PyTuple_SET_ITEM(shape, i, Py_NewRef(field));
                PyTuple_SET_ITEM(params, i, Py_NewRef(value));
                i++;
            }
            PyTuple_SET_ITEM(params, n, Py_NewRef(key));
            bind = i == n ? PyDict_GetItemWithError(updates, shape) : NULL; /* borrowed */
            Py_DECREF(shape);
            if (bind == NULL) {
                Py_DECREF(params);
                if (PyErr_Occurred())
                    goto fail;
                goto python;
            }
        }
        PyObject *item = PyTuple_Pack(2, bind, params);
        Py_DECREF(params);
        if (item == NULL)
            goto fail;
        PyList_SET_ITEM(out, k, item);
    }
    return out;
python:
    Py_DECREF(out);
    Py_RETURN_NONE;
fail:
    Py_DECREF(out);
    return NULL;
}

int
wb_cql_init(void)
{
    const WbName names[] = {
        {&s_stmt, "stmt"}, {&s_columns, "columns"}, {&s_layout, "layout"}, {&s_retried, "retried"}, {&s_go, "go"},
        {&s_done, "done"}, {&s_set_result, "set_result"}, {&s_body, "body"}, {&s_route, "route"}, {&s_send, "send"},
        {&s_size, "size"}, {&s_done_method, "done"}, {&s_text_head, "text_head"}, {&s_arity, "arity"},
        {&s_conns, "conns"}, {&s_lr_columns, "_columns"}, {&s_lr_layout, "_layout"}, {&s_lr_buf, "_buf"},
        {&s_lr_i, "_i"},
    };
    return wb_intern(names, sizeof(names) / sizeof(names[0]));
}
