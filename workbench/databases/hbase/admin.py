"""The happybase connection that administers HBase tables (schema.py: create, pre-split,
drop, look for data), in a thread off the event loop. No operation of a run goes through it: the
data path is native.py and databases/hbase/protocol/thrift.py (happybase's data path was retired).
"""

from __future__ import annotations

import happybase
from thriftpy2.thrift import TClient
from thriftpy2.transport import TSocket

from workbench.databases.hbase.options import HBaseOptions
from workbench.databases.hbase.protocol.thrift_idl import Hbase


class _Connection(happybase.Connection):
    """happybase.Connection whose connect also gives up after the timeout (a paused server
    accepts connections in the kernel and then never answers)."""

    def _refresh_thrift_client(self) -> None:
        sock = self.socket = TSocket(host=self.host, port=self.port, socket_timeout=self.timeout,
                                     connect_timeout=self.timeout)
        self.transport = self._transport_class(sock)
        self.client = TClient(Hbase, self._protocol_class(self.transport, decode_response=False))


DDL_TIMEOUT_MS = 60_000  # a table created, disabled or deleted: seconds on a loaded HBase


def connect(options: HBaseOptions, timeout_ms: int | None = None) -> happybase.Connection:
    """An open connection to the gateway with the configured transport and protocol."""
    return _Connection(options.host, options.port, timeout=timeout_ms or options.timeout_ms,
                       transport=options.transport, protocol=options.protocol)
