"""The wire protocols under the bindings: CQL (codec, connection, session), HBase's RPC and its
Thrift gateway, and the shared connection base. They speak to servers and know nothing of YCSB;
the bindings (workbench/bindings) give them YCSB's meaning. See docs/ARCHITECTURE.md."""
