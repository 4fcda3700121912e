/* cql.h: the CQL protocol's connection side (cql.c), as the module calls it. */
#ifndef WORKBENCH_CQL_H
#define WORKBENCH_CQL_H

#include "common.h"

/* the module's cql_setup(_Chain, LazyRow, NativeSession._route) */
WB_INTERNAL PyObject *wb_cql_setup(PyObject *module, PyObject *args);
/* cql.c's names interned and its protocol handed to conn.c: 0, or -1 with an exception */
WB_INTERNAL int wb_cql_init(void);

#endif /* WORKBENCH_CQL_H */
