"""Creating the HBase table for the user, pre-split over the keys the workload will produce.

Split points are quantiles of the real key names: the sorted names of the load range (every key
up to 200,000 records, an evenly strided sample of 100,000 beyond), so each region starts with
a real key and receives about the same number of rows, whether keys are hashed ("user" + an FNV
hash of 1 to 19 digits) or ordered ("user" + the zero-padded number, sorted as text).

Thrift1 can create a table but not pre-split one (createTable takes no split keys, and there is
no split call). So for `hbase.presplit` > 1 the table is created by HBase's own Java client:
a small source-file program run by `java` (JDK 11+; the runtime's jdk.compiler module compiles
it in memory) on the pinned HBase jars the cluster provider downloads, talking to ZooKeeper
(`hbase.zookeeper`). That costs a JVM start (3-6 s) once per table.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Any

from workbench.config.keys import build_key_name
from workbench.databases.hbase.options import HBaseOptions
from workbench.errors import BindingError

EXACT_LIMIT = 200_000
SAMPLE = 100_000

_JAVA_SOURCE = """\
import java.nio.charset.StandardCharsets;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.*;

public class PresplitTable {
  public static void main(String[] a) throws Exception {
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.zookeeper.quorum", a[0]);
    conf.set("hbase.zookeeper.property.clientPort", a[1]);
    conf.setInt("hbase.client.retries.number", 5);
    byte[][] splits = new byte[a.length - 4][];
    for (int i = 4; i < a.length; i++) splits[i - 4] = a[i].getBytes(StandardCharsets.UTF_8);
    try (Connection c = ConnectionFactory.createConnection(conf); Admin admin = c.getAdmin()) {
      admin.createTable(TableDescriptorBuilder.newBuilder(TableName.valueOf(a[2]))
          .setColumnFamily(ColumnFamilyDescriptorBuilder.of(a[3])).build(), splits);
    }
  }
}
"""


def key_range(spec: Any) -> tuple[int, int]:
    """[first, end) of the key numbers the load inserts, plus the run's expected inserts."""
    first = spec.insertstart
    end = first + spec.insert_total + int(spec.operationcount * spec.insertproportion)
    return first, end


def split_points(spec: Any, regions: int) -> list[str]:
    """regions - 1 split keys that cut the workload's key names into equal shares."""
    if regions <= 1:
        return []
    first, end = key_range(spec)
    count = end - first
    if count <= 0:
        return []
    taken = count if count <= EXACT_LIMIT else SAMPLE
    step = count / taken
    ordered = spec.insertorder == "ordered"
    names = sorted({build_key_name(first + int(i * step), spec.zeropadding, ordered)
                    for i in range(taken)})
    points = [names[len(names) * i // regions] for i in range(1, regions)]
    return sorted(set(points) - {names[0]})


def ensure_table(conn: Any, options: HBaseOptions, spec: Any, phase: str, table: str) -> None:
    """Create `table` with the column family (pre-split if asked); drop it first when
    hbase.drop=true in the load phase; refuse a table that lacks the family."""
    name = table.encode()
    exists = name in conn.tables()
    if exists and options.drop and phase == "load":
        conn.delete_table(table, disable=True)
        exists = False
    if exists:
        families = conn.table(table).families()
        if options.family.encode() not in families:
            have = ", ".join(f.decode() for f in families)
            raise BindingError(f"HBase table {table!r} has no column family {options.family!r}",
                               f"it has: {have}; set columnfamily or hbase.drop=true")
        return
    splits = split_points(spec, options.presplit)
    if not splits:
        # Thrift's ColumnDescriptor defaults differ from HBase's (3 versions, no block cache).
        conn.create_table(table, {options.family: {"max_versions": 1, "block_cache_enabled": True,
                                                   "bloom_filter_type": "ROW"}})
        return
    create_presplit(options, table, splits)


def create_presplit(options: HBaseOptions, table: str, splits: list[str]) -> None:
    """Create the table through HBase's Java client with the given split keys."""
    from workbench.clusters import distributions, java, java_tools, paths

    lib = distributions.fetch("hbase", paths.cache_dir(), progress=False)
    jdk = java.choose()
    zk_host, zk_port = options.zookeeper
    with tempfile.TemporaryDirectory(prefix="workbench-presplit-") as tmp:
        source = Path(tmp) / "PresplitTable.java"
        source.write_text(_JAVA_SOURCE)
        argv = [str(jdk.java), "-Xmx256m", *java_tools.FLAGS, f"-Djava.io.tmpdir={tmp}",
                *java_tools.program(jdk.java, source, f"{lib}/*"),  # compiled once, into the cache
                zk_host, str(zk_port), table, options.family, *splits]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=180, cwd=tmp)
        except subprocess.TimeoutExpired:
            done = None
    if done is None or done.returncode != 0:
        output = "timed out after 180 s" if done is None else (done.stderr or done.stdout)
        last = [line for line in output.strip().splitlines() if "Exception" in line][-1:] or [output]
        raise BindingError(
            f"could not create the pre-split HBase table {table!r} via ZooKeeper at "
            f"{zk_host}:{zk_port}: {last[0].strip()[:300]}",
            "check hbase.zookeeper (host:port of HBase's ZooKeeper), or use hbase.presplit=1",
        )
