/* hbase.c: the HBase RPC protocol's hot path.
 *
 *   hbase_setup(_Chain, _finish, _METHODS, CALL_IDS, found_cells, decode_mutate, LazyCells)
 *                     what hbase_answer knows (the classes, with their slots, and functions)
 *   hbase_make(ctx, step)
 *                     NativeBinding._maker's make for a table of one region, its usual steps
 *   hooks(conn, "hbase")'s buffer_updated
 *                     (conn.c's wb_receive with hbase_answer) RpcConnection.buffer_updated with
 *                     _answer, _next and _send's usual path
 *
 * mirroring workbench/databases/hbase/protocol/messages.py (the messages: found_cells, LazyCells),
 * databases/hbase/protocol/rpc.py (RpcConnection, _Chain) and databases/hbase/native.py (the make):
 * tests/unit/test_hbase_native.py, test_hbase_protobuf_reference.py and test_parsers_fuzz.py run
 * both, byte for byte.
 *
 * RpcConnection.buffer_updated is conn.c's loop, every protocol's. An answer whose header is the
 * call id alone (nearly all are) to a chain's call is answered here as RpcConnection._answer,
 * _next and _send do: its body decoded as the chain's decode would (found_cells's usual answer,
 * a LazyCells, and decode_mutate's None are made here; any other decode is called), the lane
 * asked, the next request made by the chain's make (Python) and framed here. Every other
 * answer, and every step that does not go as usual, goes to that Python code.
 */
#include "hbase.h"
#include "conn.h"
#include "deadline.h"

static PyObject *hchain_type, *hfinish, *hmethods; /* _Chain, _finish, _METHODS (hbase_setup) */
static PyObject *hfound_cells, *hdecode_mutate, *hcells_type; /* found_cells, decode_mutate, LazyCells */
static long hcall_ids;
#define HBASE_MAX_MESSAGE 0x7FFFFFFFu /* hbase_messages.MAX_MESSAGE */
#define HBASE_HEADER 4 /* a message's header: its length */
static PyObject *s_decode, *s_make, *s_hsend, *s_lc_body, *s_failed_answer; /* (hbase.c's own names) */
static PyObject *s_call_id; /* RpcConnection's own slot (the HBase protocol's) */

/* hbase_rpc._Chain's slots, found by hbase_setup (its chains are checked to be of exactly it),
 * and LazyCells's */
static Py_ssize_t hc_items, hc_make, hc_more, hc_answers, hc_decode, hc_t0, lc_body, lc_row;

/* hbase_setup(...): what hbase_answer knows. _Chain's and LazyCells's slots, all or none
 * (wb_find_slots): a class without one of them is refused, and the classes in use stay in use. */
PyObject *
wb_hbase_setup(PyObject *module, PyObject *args)
{
    PyObject *chain, *finish, *methods, *found_cells, *decode_mutate, *cells;
    long call_ids;
    if (!PyArg_ParseTuple(args, "OOO!lOOO:hbase_setup", &chain, &finish, &PyDict_Type, &methods, &call_ids,
                          &found_cells, &decode_mutate, &cells))
        return NULL;
    if (!PyType_Check(chain) || !PyType_Check(cells)) {
        PyErr_SetString(PyExc_TypeError, "hbase_setup: _Chain and LazyCells must be classes");
        return NULL;
    }
    const WbSlot slots[] = {
        {chain, wb_names.items, &hc_items}, {chain, s_make, &hc_make}, {chain, wb_names.more, &hc_more},
        {chain, wb_names.answers, &hc_answers}, {chain, s_decode, &hc_decode}, {chain, wb_names.t0, &hc_t0},
        {cells, s_lc_body, &lc_body}, {cells, wb_names.row, &lc_row},
    };
    if (wb_find_slots("hbase_setup", slots, sizeof(slots) / sizeof(slots[0])) < 0)
        return NULL;
    Py_XSETREF(hchain_type, Py_NewRef(chain));
    Py_XSETREF(hfinish, Py_NewRef(finish));
    Py_XSETREF(hmethods, Py_NewRef(methods));
    Py_XSETREF(hfound_cells, Py_NewRef(found_cells));
    Py_XSETREF(hdecode_mutate, Py_NewRef(decode_mutate));
    Py_XSETREF(hcells_type, Py_NewRef(cells));
    hcall_ids = call_ids;
    Py_RETURN_NONE;
}

static inline int
put_varint(unsigned char *at, uint64_t n)
{
    int k = 0;
    while (n >= 0x80) {
        at[k++] = (unsigned char)(n & 0x7F) | 0x80;
        n >>= 7;
    }
    at[k++] = (unsigned char)n;
    return k;
}

static inline int
varint_size(uint64_t n)
{
    int k = 1;
    while (n >= 0x80) {
        n >>= 7;
        k++;
    }
    return k;
}

static int
call_python_method(PyObject *obj, PyObject *name, PyObject *arg)
{
    PyObject *r = PyObject_CallMethodOneArg(obj, name, arg);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

static int
finish_chain(PyObject *chain)
{
    PyObject *r = PyObject_CallOneArg(hfinish, chain);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* RpcConnection._send(chain) where its request is made and framed as usual: 0 done (sent, or
 * handed to the Python _send, which answers what goes wrong), -1 error. */
static int
hbase_send(PyObject *conn, PyObject *chain, Py_ssize_t step)
{
    int result = -1;
    PyObject *items = NULL, *item = NULL, *made = NULL, *inflight = NULL, *out = NULL, *frame = NULL;
    PyObject *last = NULL, *key = NULL, *t0 = NULL;
    items = wb_slot_get(chain, hc_items, wb_names.items);
    item = items ? PySequence_GetItem(items, step) : NULL;
    PyObject *make = item ? wb_slot_get(chain, hc_make, s_make) : NULL;
    if (make == NULL)
        goto done;
    made = PyObject_CallOneArg(make, item);
    Py_DECREF(make);
    if (made == NULL)
        goto python;
    if (!PyTuple_CheckExact(made) || PyTuple_GET_SIZE(made) != 3)
        goto python;
    PyObject *method = PyTuple_GET_ITEM(made, 0), *param = PyTuple_GET_ITEM(made, 1);
    PyObject *decode = PyTuple_GET_ITEM(made, 2);
    PyObject *method_header = PyDict_GetItemWithError(hmethods, method); /* borrowed */
    if (method_header == NULL || !PyBytes_CheckExact(method_header) || !PyBytes_CheckExact(param))
        goto python; /* (an error from the lookup is left to the Python _send too) */
    inflight = wb_cget(conn, wb_names.inflight);
    if (inflight == NULL)
        goto done;
    if (!PyDict_CheckExact(inflight) || PyDict_GET_SIZE(inflight) >= hcall_ids)
        goto python;
    last = wb_cget(conn, s_call_id);
    if (last == NULL)
        goto done;
    long call_id = PyLong_AsLong(last);
    if (call_id == -1 && PyErr_Occurred())
        goto done;
    for (;;) {
        call_id = call_id < hcall_ids ? call_id + 1 : 1;
        Py_XSETREF(key, PyLong_FromLong(call_id));
        if (key == NULL)
            goto done;
        int taken = PyDict_Contains(inflight, key);
        if (taken < 0)
            goto done;
        if (!taken)
            break;
    }
    if (wb_cset(conn, s_call_id, key) < 0)
        goto done;
    wb_slot_set(chain, hc_decode, decode);
    /* RequestHeader: call_id = 1, then the method's constant fields; the message: total length,
     * header length, header, param length (then the param, appended as it is) */
    Py_ssize_t mlen = PyBytes_GET_SIZE(method_header), plen = PyBytes_GET_SIZE(param);
    Py_ssize_t hlen = 1 + varint_size((uint64_t)call_id) + mlen;
    Py_ssize_t total = varint_size((uint64_t)hlen) + hlen + varint_size((uint64_t)plen) + plen;
    if (total > 0xFFFFFFFFLL)
        goto python;
    frame = PyBytes_FromStringAndSize(NULL, 4 + total - plen);
    if (frame == NULL)
        goto done;
    unsigned char *at = (unsigned char *)PyBytes_AS_STRING(frame);
    at[0] = (unsigned char)(total >> 24);
    at[1] = (unsigned char)(total >> 16);
    at[2] = (unsigned char)(total >> 8);
    at[3] = (unsigned char)total;
    at += 4;
    at += put_varint(at, (uint64_t)hlen);
    *at++ = 0x08; /* RequestHeader.call_id (1, varint): REQUEST_HEADER_CALL_ID */
    at += put_varint(at, (uint64_t)call_id);
    memcpy(at, PyBytes_AS_STRING(method_header), (size_t)mlen);
    at += mlen;
    put_varint(at, (uint64_t)plen);
    out = wb_cget(conn, wb_names.out);
    if (out == NULL)
        goto done;
    if (!PyList_CheckExact(out)) {
        PyErr_SetString(PyExc_TypeError, "hbase_receive: the connection's _out is not a list");
        goto done;
    }
    if (wb_schedule_flush(conn, out) < 0)
        goto done;
    if (PyList_Append(out, frame) < 0 || PyList_Append(out, param) < 0)
        goto done;
    t0 = PyLong_FromLongLong(wb_now_ns());
    if (t0 == NULL)
        goto done;
    wb_slot_set(chain, hc_t0, t0);
    if (PyDict_SetItem(inflight, key, chain) < 0)
        goto done;
    if (wb_arm_timer(conn) < 0 || wb_count_sent(conn) < 0)
        goto done;
    result = 0;
    goto done;
python:
    if (PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_Exception))
            goto done;
        PyErr_Clear(); /* the Python _send makes the request again and answers the failure */
    }
    result = call_python_method(conn, s_hsend, chain);
done:
    Py_XDECREF(items);
    Py_XDECREF(item);
    Py_XDECREF(made);
    Py_XDECREF(inflight);
    Py_XDECREF(out);
    Py_XDECREF(frame);
    Py_XDECREF(last);
    Py_XDECREF(key);
    Py_XDECREF(t0);
    return result;
}

/* A length-delimited protobuf field (its key one byte) at `at`: the end of it. */
static inline unsigned char *
put_bytes_field(unsigned char *at, unsigned char key, const char *data, Py_ssize_t n)
{
    *at++ = key;
    at += put_varint(at, (uint64_t)n);
    memcpy(at, data, (size_t)n);
    return at + n;
}

/* hbase_make(ctx, step): NativeBinding._maker's make for a table of one region, in C, for the
 * usual steps: a Get of every field of a row shorter than ctx's limit, and a Put of one cell
 * (every update of YCSB's default workloads). Any other step goes to ctx's Python make, which
 * gives the same bytes for these (test_hbase_native.py compares both). ctx is a tuple: (region
 * specifier, the Get's Column of the family, family, what follows a Put's cell (durability),
 * the Python make, found_cells, decode_mutate, b"Get", b"Mutate", READ). */
PyObject *
wb_hbase_make(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyTuple_CheckExact(args[0]) || PyTuple_GET_SIZE(args[0]) != 10) {
        PyErr_SetString(PyExc_TypeError, "hbase_make(ctx, step): ctx is a tuple of 10");
        return NULL;
    }
    PyObject *ctx = args[0], *step = args[1];
    PyObject *spec = PyTuple_GET_ITEM(ctx, 0), *every = PyTuple_GET_ITEM(ctx, 1);
    PyObject *family = PyTuple_GET_ITEM(ctx, 2), *after = PyTuple_GET_ITEM(ctx, 3);
    PyObject *fallback = PyTuple_GET_ITEM(ctx, 4);
    if (!PyTuple_CheckExact(step) || PyTuple_GET_SIZE(step) != 3 || !PyBytes_CheckExact(spec)
        || !PyBytes_CheckExact(every) || !PyBytes_CheckExact(family) || !PyBytes_CheckExact(after))
        return PyObject_CallOneArg(fallback, step);
    PyObject *op = PyTuple_GET_ITEM(step, 0), *key = PyTuple_GET_ITEM(step, 1);
    PyObject *arg = PyTuple_GET_ITEM(step, 2);
    if (!PyUnicode_CheckExact(key) || !PyUnicode_CheckExact(op))
        return PyObject_CallOneArg(fallback, step);
    int is_read = op == PyTuple_GET_ITEM(ctx, 9) ? 1 : PyUnicode_Compare(op, PyTuple_GET_ITEM(ctx, 9)) == 0;
    if (is_read == 0 && PyErr_Occurred())
        return NULL;
    Py_ssize_t lr;
    const char *row = PyUnicode_AsUTF8AndSize(key, &lr);
    if (row == NULL)
        return NULL;
    Py_ssize_t ls = PyBytes_GET_SIZE(spec);
    PyObject *request, *out;
    if (is_read) {
        Py_ssize_t tail = PyBytes_GET_SIZE(every);
        if (arg != Py_None || lr >= 0x80 - 2 - tail)
            return PyObject_CallOneArg(fallback, step);
        /* spec, Get (2): [row (1), Column (2) of the family] -- one-byte lengths. The field
         * numbers are databases/hbase/protocol/messages.py's constants, named after Client.proto's fields. */
        request = PyBytes_FromStringAndSize(NULL, ls + 4 + lr + tail);
        if (request == NULL)
            return NULL;
        unsigned char *at = (unsigned char *)PyBytes_AS_STRING(request);
        memcpy(at, PyBytes_AS_STRING(spec), (size_t)ls);
        at += ls;
        *at++ = 0x12; /* GetRequest.get (2): GET_REQUEST_GET */
        *at++ = (unsigned char)(2 + lr + tail);
        at = put_bytes_field(at, 0x0a, row, lr); /* Get.row (1): GET_ROW */
        memcpy(at, PyBytes_AS_STRING(every), (size_t)tail);
        out = PyTuple_Pack(3, PyTuple_GET_ITEM(ctx, 7), request, PyTuple_GET_ITEM(ctx, 5));
        Py_DECREF(request);
        return out;
    }
    if (!PyDict_CheckExact(arg) || PyDict_GET_SIZE(arg) != 1)
        return PyObject_CallOneArg(fallback, step);
    PyObject *qualifier, *value;
    Py_ssize_t pos = 0;
    PyDict_Next(arg, &pos, &qualifier, &value);
    if (!PyUnicode_CheckExact(qualifier) || !PyUnicode_CheckExact(value))
        return PyObject_CallOneArg(fallback, step);
    Py_ssize_t lq, lv;
    const char *q = PyUnicode_AsUTF8AndSize(qualifier, &lq);
    const char *v = q ? PyUnicode_AsUTF8AndSize(value, &lv) : NULL;
    if (v == NULL)
        return NULL;
    /* spec, Mutation (2): [row (1), PUT (2), ColumnValue (3): [family (1),
     * QualifierValue (2): [qualifier (1), value (2)]], durability (6) if any]. The field numbers
     * are databases/hbase/protocol/messages.py's constants, named after Client.proto's fields (MutateRequest,
     * MutationProto, its ColumnValue and QualifierValue). */
    Py_ssize_t lf = PyBytes_GET_SIZE(family), la = PyBytes_GET_SIZE(after);
    uint64_t qv = 1 + varint_size(lq) + lq + 1 + varint_size(lv) + lv;
    uint64_t cv = 1 + varint_size(lf) + lf + 1 + varint_size(qv) + qv;
    uint64_t put = 1 + varint_size(lr) + lr + 2 + 1 + varint_size(cv) + cv + la;
    request = PyBytes_FromStringAndSize(NULL, ls + 1 + varint_size(put) + (Py_ssize_t)put);
    if (request == NULL)
        return NULL;
    unsigned char *at = (unsigned char *)PyBytes_AS_STRING(request);
    memcpy(at, PyBytes_AS_STRING(spec), (size_t)ls);
    at += ls;
    *at++ = 0x12; /* MutateRequest.mutation (2): MUTATE_REQUEST_MUTATION */
    at += put_varint(at, put);
    at = put_bytes_field(at, 0x0a, row, lr); /* MutationProto.row (1): MUTATION_PROTO_ROW */
    *at++ = 0x10; /* MutationProto.mutate_type (2, varint): MUTATION_PROTO_MUTATE_TYPE */
    *at++ = 0x02; /* MutationType.PUT */
    *at++ = 0x1a; /* MutationProto.column_value (3): MUTATION_PROTO_COLUMN_VALUE */
    at += put_varint(at, cv);
    at = put_bytes_field(at, 0x0a, PyBytes_AS_STRING(family), lf); /* ColumnValue.family (1) */
    *at++ = 0x12; /* ColumnValue.qualifier_value (2): COLUMN_VALUE_QUALIFIER_VALUE */
    at += put_varint(at, qv);
    at = put_bytes_field(at, 0x0a, q, lq); /* QualifierValue.qualifier (1) */
    at = put_bytes_field(at, 0x12, v, lv); /* QualifierValue.value (2) */
    memcpy(at, PyBytes_AS_STRING(after), (size_t)la);
    out = PyTuple_Pack(3, PyTuple_GET_ITEM(ctx, 8), request, PyTuple_GET_ITEM(ctx, 6));
    Py_DECREF(request);
    return out;
}

/* hbase_messages.found_cells(body): a LazyCells of the body (made without its __init__'s Python
 * frame: the same two slots) where the body starts as a row's result with a cell, as nearly every
 * read's does; any other body goes to the Python found_cells, which walks it. */
static PyObject *
found_cells(PyObject *body)
{
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(body);
    Py_ssize_t n = PyBytes_GET_SIZE(body);
    /* GetResponse.result (1): GET_RESPONSE_RESULT, whose first field is Result.cell (1): RESULT_CELL */
    if (n > 3 && p[0] == 0x0A && p[1]) {
        int at = p[1] < 0x80 ? 2 : p[2] < 0x80 ? 3 : 0;
        if (at && p[at] == 0x0A) {
            PyTypeObject *type = (PyTypeObject *)hcells_type;
            PyObject *cells = type->tp_alloc(type, 0);
            if (cells == NULL)
                return NULL;
            wb_slot_set(cells, lc_body, body);
            wb_slot_set(cells, lc_row, Py_None);
            return cells;
        }
    }
    return PyObject_CallOneArg(hfound_cells, body);
}

/* One message buf[i:end]: 1 answered here, 0 not the usual case (the caller hands it to
 * _answer, untouched), -1 error. */
static int
hbase_answer_fast(PyObject *conn, PyObject *buf, Py_ssize_t i, Py_ssize_t end)
{
    if (hchain_type == NULL)
        return 0;
    const unsigned char *b = (const unsigned char *)PyByteArray_AS_STRING(buf);
    long call_id;
    if (i >= end)
        return 0;
    /* a ResponseHeader of ResponseHeader.call_id (1, varint: 0x08, RESPONSE_HEADER_CALL_ID) alone */
    if (b[i] == 2 && i + 3 < end && b[i + 1] == 0x08 && b[i + 2] < 0x80) {
        call_id = b[i + 2];
        i += 3;
    } else if (b[i] == 3 && i + 4 < end && b[i + 1] == 0x08 && b[i + 2] >= 0x80 && b[i + 3] < 0x80) {
        call_id = (b[i + 2] & 0x7F) | ((long)b[i + 3] << 7);
        i += 4;
    } else {
        return 0;
    }
    /* the body's length, a varint */
    uint64_t size = 0;
    int shift = 0;
    for (;;) {
        if (i >= end || shift > 63)
            return 0;
        unsigned char c = b[i++];
        size |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80))
            break;
        shift += 7;
    }
    if (size > (uint64_t)(end - i))
        return 0;
    int result = -1;
    PyObject *inflight = NULL, *key = NULL, *decode = NULL, *body = NULL, *value = NULL, *t0 = NULL;
    PyObject *t1 = NULL, *answers = NULL, *entry = NULL, *chain = NULL, *items = NULL, *more = NULL;
    inflight = wb_cget(conn, wb_names.inflight);
    key = inflight ? PyLong_FromLong(call_id) : NULL;
    if (key == NULL)
        goto done;
    if (!PyDict_CheckExact(inflight)) {
        result = 0;
        goto done;
    }
    chain = PyDict_GetItemWithError(inflight, key);
    if (chain == NULL) {
        result = PyErr_Occurred() ? -1 : 0;
        goto done;
    }
    Py_INCREF(chain);
    if ((PyObject *)Py_TYPE(chain) != hchain_type) {
        result = 0;
        goto done;
    }
    decode = wb_slot_get(chain, hc_decode, s_decode);
    if (decode == NULL)
        goto done;
    if (PyDict_DelItem(inflight, key) < 0)
        goto done;
    long long answered_at = wb_now_ns(); /* as _answer: out of _inflight, then the time */
    t1 = PyLong_FromLongLong(answered_at);
    t0 = t1 ? wb_slot_get(chain, hc_t0, wb_names.t0) : NULL;
    answers = t0 ? wb_slot_get(chain, hc_answers, wb_names.answers) : NULL;
    if (answers == NULL)
        goto done;
    if (decode == hdecode_mutate) /* an update's answer: decode_mutate's None, its body unread */
        value = Py_NewRef(Py_None);
    else {
        body = PyBytes_FromStringAndSize((const char *)b + i, (Py_ssize_t)size);
        if (body == NULL)
            goto done;
        value = decode == hfound_cells ? found_cells(body) : PyObject_CallOneArg(decode, body);
    }
    if (value == NULL) {
        /* an answer that does not parse: that step's error, the chain ends, the stream is suspect */
        if (!PyErr_ExceptionMatches(PyExc_Exception))
            goto done;
        PyObject *type, *exc, *tb;
        PyErr_Fetch(&type, &exc, &tb);
        PyErr_NormalizeException(&type, &exc, &tb);
        Py_XDECREF(type);
        Py_XDECREF(tb);
        if (exc == NULL)
            goto done;
        /* RpcConnection._failed_answer: the connection breaks, the call fails with its MalformedAnswer */
        PyObject *r = PyObject_CallMethodObjArgs(conn, s_failed_answer, chain, exc, t1, NULL);
        Py_DECREF(exc);
        result = r == NULL ? -1 : 1;
        Py_XDECREF(r);
        goto done;
    }
    entry = PyTuple_Pack(4, Py_True, value, t0, t1);
    if (entry == NULL || PyList_Append(answers, entry) < 0)
        goto done;
    /* _next: another step while there is one, the connection stands and the lane says go on */
    items = wb_slot_get(chain, hc_items, wb_names.items);
    more = items ? wb_slot_get(chain, hc_more, wb_names.more) : NULL;
    if (more == NULL)
        goto done;
    Py_ssize_t n = PyList_GET_SIZE(answers), count = PyObject_Length(items);
    if (count < 0)
        goto done;
    int go_on = n < count;
    if (go_on) {
        int healthy = wb_attr_is_none(conn, wb_names.broken);
        if (healthy < 0)
            goto done;
        go_on = healthy;
    }
    if (go_on)
        go_on = wb_ask_more(more);
    if (go_on < 0)
        goto done;
    if (go_on)
        result = hbase_send(conn, chain, n) < 0 ? -1 : 1;
    else
        result = finish_chain(chain) < 0 ? -1 : 1;
done:
    Py_XDECREF(inflight);
    Py_XDECREF(key);
    Py_XDECREF(chain);
    Py_XDECREF(decode);
    Py_XDECREF(body);
    Py_XDECREF(value);
    Py_XDECREF(t0);
    Py_XDECREF(t1);
    Py_XDECREF(answers);
    Py_XDECREF(entry);
    Py_XDECREF(items);
    Py_XDECREF(more);
    return result;
}

/* One whole message, buf[*at:end] (WbProtocol.answer): as RpcConnection.buffer_updated, answered
 * (here, or by _answer) before it counts as read. */
static int
hbase_answer(PyObject *conn, PyObject *buf, Py_ssize_t *at, Py_ssize_t end)
{
    int done = hbase_answer_fast(conn, buf, *at + HBASE_HEADER, end);
    if (done == 0) {
        PyObject *r = PyObject_CallMethod(conn, "_answer", "Onn", buf, *at + HBASE_HEADER, end);
        done = r ? 1 : -1;
        Py_XDECREF(r);
    }
    if (done < 0)
        return -1;
    *at = end;
    return 0;
}

static PyObject *hbase_receive(PyObject *conn, PyObject *nbytes);

/* The HBase RPC protocol, as conn.c knows it: RpcConnection's own slot, a message's header (its
 * length, an unsigned int), and its answer. */
static WbProtocol hbase = {
    .name = "hbase",
    .own = {&s_call_id, NULL},
    .header = HBASE_HEADER,
    .length_at = 0,
    .signed_length = 0,
    .max_body = HBASE_MAX_MESSAGE,
    .unit = "message",
    .answer = hbase_answer,
    .receive = {"buffer_updated", hbase_receive, METH_O, PyDoc_STR("RpcConnection.buffer_updated, compiled.")},
};

static PyObject *
hbase_receive(PyObject *conn, PyObject *nbytes)
{
    return wb_receive(conn, nbytes, &hbase);
}

int
wb_hbase_init(void)
{
    const WbName names[] = {
        {&s_decode, "decode"}, {&s_make, "make"}, {&s_hsend, "_send"}, {&s_lc_body, "_body"},
        {&s_failed_answer, "_failed_answer"}, {&s_call_id, "_call_id"},
    };
    if (wb_intern(names, sizeof(names) / sizeof(names[0])) < 0)
        return -1;
    return wb_conn_protocol(&hbase);
}
