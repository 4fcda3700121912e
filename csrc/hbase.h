/* hbase.h: the HBase RPC protocol's hot path (hbase.c), as the module calls it. */
#ifndef WORKBENCH_HBASE_H
#define WORKBENCH_HBASE_H

#include "common.h"

/* the module's hbase_setup(...) and hbase_make(ctx, step) */
WB_INTERNAL PyObject *wb_hbase_setup(PyObject *module, PyObject *args);
WB_INTERNAL PyObject *wb_hbase_make(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
/* hbase.c's names interned and its protocol handed to conn.c: 0, or -1 with an exception */
WB_INTERNAL int wb_hbase_init(void);

#endif /* WORKBENCH_HBASE_H */
