/* cql_statements.h: a CQL statement's values, and a sequence's statements (cql_statements.c). */
#ifndef WORKBENCH_CQL_STATEMENTS_H
#define WORKBENCH_CQL_STATEMENTS_H

#include "common.h"

/* Statement.body(params) where the statement's values and params are all text: 1 made (*body, a
 * new reference), 0 not such a statement or such values (the caller uses Statement.body), -1 error */
WB_INTERNAL int wb_cql_text_body(PyObject *stmt, PyObject *params, PyObject **body);
/* the module's pending(steps, READ, read_every, updates) */
WB_INTERNAL PyObject *wb_pending(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
WB_INTERNAL int wb_cql_statements_init(void);

#endif /* WORKBENCH_CQL_STATEMENTS_H */
