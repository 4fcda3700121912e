/* deadline.h: may a lane go on? (deadline.c), as the module and the native clients' chains
 * (cql.c, hbase.c) call it. */
#ifndef WORKBENCH_DEADLINE_H
#define WORKBENCH_DEADLINE_H

#include "common.h"

/* a lane's more() (None, a Deadline, or any callable): 1 go on, 0 stop, -1 error */
WB_INTERNAL int wb_ask_more(PyObject *more);
/* Deadline readied and added to the module: 0, or -1 with an exception */
WB_INTERNAL int wb_deadline_init(PyObject *module);

#endif /* WORKBENCH_DEADLINE_H */
