"""HBase's wire, with no YCSB in it: the native RPC (messages.py, rpc.py) and the Thrift1 client
(thrift.py, thrift_idl.py)."""
