/* conn.h: a connection's side of both native clients (conn.c; workbench/protocols/wire.py), which
 * knows no protocol: each protocol (cql.c, hbase.c) describes its connections and frames in a
 * WbProtocol and hands it over when the module starts (wb_conn_protocol); conn_setup(cls, kind)
 * and hooks(conn, kind) find it by its name. conn.c calls the protocol's answer through the
 * WbProtocol alone, so the files call each other in one direction: protocols -> conn -> common.
 */
#ifndef WORKBENCH_CONN_H
#define WORKBENCH_CONN_H

#include "common.h"

#define WB_WIRE_SLOTS 11 /* wire.py's slots (wb_names.n .. wb_names.sent), every connection's */
#define WB_OWN_SLOTS 4   /* at most: a protocol's connection class's slots of its own */
#define WB_CONN_SLOTS (WB_WIRE_SLOTS + WB_OWN_SLOTS)
#define WB_PROTOCOLS 4   /* at most: protocols handed to wb_conn_protocol */

/* A protocol, as conn.c knows it. */
typedef struct {
    const char *name;                 /* the kind conn_setup and hooks are given: "cql", "hbase" */
    PyObject **own[WB_OWN_SLOTS + 1]; /* its connection class's own slots (interned by its file), NULL-ended */
    Py_ssize_t header;                /* a frame's bytes before its body */
    Py_ssize_t length_at;             /* where in them the body's length is: 4 bytes, big-endian */
    int signed_length;                /* that length is an int32 (else a uint32) */
    int64_t max_body;                 /* past it, a frame no server sends: the stream is lost */
    const char *unit;                 /* such a frame is _malformed("a <unit> of <length> bytes") */
    /* One whole frame, buf[*at:end]: 0 answered, with *at moved to end once the frame counts as
     * read (before its answer or after it, as the protocol's Python does), or -1 an exception. */
    int (*answer)(PyObject *conn, PyObject *buf, Py_ssize_t *at, Py_ssize_t end);
    /* hooks's buffer_updated: METH_O, (conn, nbytes) -> wb_receive(conn, nbytes, the protocol) */
    PyMethodDef receive;
} WbProtocol;

/* A protocol hands itself to the connections (its file's init): 0, or -1 with an exception. The
 * protocol must outlive the module (a static). */
WB_INTERNAL int wb_conn_protocol(const WbProtocol *protocol);

/* buffer_updated(nbytes) of every protocol: every whole frame in the connection's buffer to the
 * protocol's answer, what is left of a frame kept for the next read, and the requests the
 * answers made written in one go (wire.py's BufferedConnection and SharedConnection). */
WB_INTERNAL PyObject *wb_receive(PyObject *conn, PyObject *nbytes, const WbProtocol *protocol);

/* What every receive path shares (wire.py's SharedConnection); each 0, or -1 with an exception. */
WB_INTERNAL int wb_schedule_flush(PyObject *conn, PyObject *out); /* a request's write, scheduled */
WB_INTERNAL int wb_arm_timer(PyObject *conn);                     /* BufferedConnection._arm */
WB_INTERNAL int wb_count_sent(PyObject *conn);                    /* conn.sent += 1 */

/* the module's conn_setup(cls, kind) and hooks(conn, kind), and conn.c's start */
WB_INTERNAL PyObject *wb_conn_setup(PyObject *module, PyObject *args);
WB_INTERNAL PyObject *wb_hooks(PyObject *module, PyObject *args);
WB_INTERNAL int wb_conn_init(void);

/* -- a connection's slots -------------------------------------------------------------------- */

/* The slots of a connection class conn_setup was given: their names (wire.py's, then its
 * protocol's own) and offsets; type NULL: none set up yet. */
typedef struct {
    PyObject *type;
    int count;
    PyObject *names[WB_CONN_SLOTS];
    Py_ssize_t offset[WB_CONN_SLOTS];
} WbConnLayout;

WB_INTERNAL extern WbConnLayout wb_conn_layouts[WB_PROTOCOLS]; /* one per protocol, in its order */

/* conn's offset of the slot `name` (an interned name), or -1: not a slot of a class set up */
static inline Py_ssize_t
wb_conn_slot(PyObject *conn, PyObject *name)
{
    for (int t = 0; t < WB_PROTOCOLS; t++) {
        const WbConnLayout *layout = &wb_conn_layouts[t];
        if ((PyObject *)Py_TYPE(conn) != layout->type)
            continue;
        for (int k = 0; k < layout->count; k++)
            if (layout->names[k] == name)
                return layout->offset[k];
        return -1;
    }
    return -1;
}

/* A connection's attribute: at its slot's offset for a connection of exactly a class conn_setup
 * was given, else by PyObject_GetAttr (any other object, and a name that is not a slot). */
static inline PyObject *
wb_cget(PyObject *conn, PyObject *name)
{
    Py_ssize_t offset = wb_conn_slot(conn, name);
    return offset > 0 ? wb_slot_get(conn, offset, name) : PyObject_GetAttr(conn, name);
}

static inline int
wb_cset(PyObject *conn, PyObject *name, PyObject *value)
{
    Py_ssize_t offset = wb_conn_slot(conn, name);
    if (offset > 0) {
        wb_slot_set(conn, offset, value);
        return 0;
    }
    return PyObject_SetAttr(conn, name, value);
}

/* 1: the attribute is None, 0: it is not, -1: error */
static inline int
wb_attr_is_none(PyObject *obj, PyObject *name)
{
    PyObject *v = wb_cget(obj, name);
    if (v == NULL)
        return -1;
    int none = v == Py_None;
    Py_DECREF(v);
    return none;
}

#endif /* WORKBENCH_CONN_H */
