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
 * This file is the module alone: its functions' table and PyInit__speedups, which starts each
 * file in turn. Each job is a file of its own, with its header, along the seams of the Python it
 * mirrors:
 *
 *   common.c    what every file stands on: the names they share, wb_find_slots (with which every
 *                     *_setup finds the slots it reads), the clock; it calls no other file
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
 *                     builtins (protocols/wire.py); it knows no protocol: each protocol hands it
 *                     its receive function and frames (a WbProtocol) when the module starts
 *   cql.c       cql_setup(...), and hooks(conn, "cql")'s answers
 *                     the native CQL client's usual answers and next requests
 *                     (databases/cassandra/protocol/connection.py, databases/cassandra/protocol/session.py)
 *   cql_statements.c  pending(...)
 *                     CassandraBinding._statements where every statement is prepared, and a
 *                     statement's text values (databases/cassandra/protocol/cql.py's Statement.body)
 *   hbase.c     hbase_setup(...), hbase_make(ctx, step), and hooks(conn, "hbase")'s answers
 *                     the native HBase client's usual requests and answers (databases/hbase/protocol/)
 *
 * The files call each other in one direction only: this module calls every file; cql.c and
 * hbase.c call conn.c and deadline.c (and cql.c cql_statements.c); every file calls common.c,
 * which calls none (tests/unit/test_csrc_layers.py checks it, and that no file is over 600 lines).
 */
#include "choice.h"
#include "conn.h"
#include "cql.h"
#include "cql_statements.h"
#include "deadline.h"
#include "hbase.h"
#include "hist.h"
#include "keys.h"
#include "record.h"

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
    if (wb_common_init() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (wb_keys_init(m) < 0 || wb_deadline_init(m) < 0 || wb_record_init() < 0 || wb_conn_init() < 0
        || wb_cql_statements_init() < 0 || wb_cql_init() < 0 || wb_hbase_init() < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
