// Split an HBase table's region at a row key and wait until the split regions are online: a
// region moving under a running client (tests/integration/test_hbase_binding.py).
// Run by the Java launcher straight from source, with the cluster's conf/ and jars on the class
// path: java -cp CONF:LIB/* HBaseSplit.java TABLE ROW TIMEOUT_SECONDS
// Exit status: 0 split, 4 not split by the deadline.

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.util.Bytes;

public class HBaseSplit {
    public static void main(String[] args) throws Exception {
        TableName table = TableName.valueOf(args[0]);
        long deadline = System.nanoTime() + Long.parseLong(args[2]) * 1_000_000_000L;
        Configuration conf = HBaseConfiguration.create();
        try (Connection connection = ConnectionFactory.createConnection(conf);
             Admin admin = connection.getAdmin()) {
            int before = admin.getRegions(table).size();
            admin.split(table, Bytes.toBytes(args[1]));
            while (admin.getRegions(table).size() <= before) {
                if (System.nanoTime() > deadline) {
                    System.out.println("not split");
                    System.exit(4);
                }
                Thread.sleep(100);
            }
            System.out.println("split " + table + " at " + args[1] + ": " + admin.getRegions(table).size()
                               + " regions");
        }
    }
}
