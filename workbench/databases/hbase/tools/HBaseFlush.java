// Flush an HBase table's memstores to store files and wait until no compaction of it runs:
// the settle step between the runs of an experiment (workbench/databases/hbase/cluster_maintenance.py).
// Run by the Java launcher straight from source, with the cluster's conf/ and jars on the class
// path: java -cp CONF:LIB/* HBaseFlush.java TABLE TIMEOUT_SECONDS
// Exit status: 0 settled, 3 no such table, 4 compactions still running at the deadline.

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.CompactionState;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;

public class HBaseFlush {
    public static void main(String[] args) throws Exception {
        TableName table = TableName.valueOf(args[0]);
        long deadline = System.nanoTime() + Long.parseLong(args[1]) * 1_000_000_000L;
        Configuration conf = HBaseConfiguration.create();
        try (Connection connection = ConnectionFactory.createConnection(conf);
             Admin admin = connection.getAdmin()) {
            if (!admin.tableExists(table)) {
                System.out.println("no table " + table);
                System.exit(3);
            }
            long started = System.nanoTime();
            admin.flush(table);
            while (admin.getCompactionState(table) != CompactionState.NONE) {
                if (System.nanoTime() > deadline) {
                    System.out.println("compactions of " + table + " still running");
                    System.exit(4);
                }
                Thread.sleep(200);
            }
            System.out.printf("settled %s in %.1f s%n", table, (System.nanoTime() - started) / 1e9);
        }
    }
}
