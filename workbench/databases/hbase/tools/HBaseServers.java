// Flush or major-compact everything a RegionServer holds (`workbench cluster flush|compact`,
// workbench/databases/hbase/cluster_maintenance.py): the equivalent of nodetool flush/compact on a node.
// Run by the Java launcher straight from source, with the cluster's conf/ and jars on the class
// path: java -cp CONF:LIB/* HBaseServers.java flush|compact [HOST:PORT ...]
// No HOST:PORT: every RegionServer. Prints one line per server done.
// Exit status: 0 done, 3 a named server is not among those the master knows (the line lists them).

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;

public class HBaseServers {
    public static void main(String[] args) throws Exception {
        String action = args[0];
        Configuration conf = HBaseConfiguration.create();
        try (Connection connection = ConnectionFactory.createConnection(conf);
             Admin admin = connection.getAdmin()) {
            List<ServerName> known = new ArrayList<>(admin.getRegionServers());
            List<ServerName> chosen = new ArrayList<>();
            for (int i = 1; i < args.length; i++) {
                ServerName found = null;
                for (ServerName server : known) {
                    if (server.getAddress().toString().equals(args[i])) {
                        found = server;
                    }
                }
                if (found == null) {
                    System.out.println("no RegionServer at " + args[i] + " (the master knows " + known + ")");
                    System.exit(3);
                }
                chosen.add(found);
            }
            for (ServerName server : chosen.isEmpty() ? known : chosen) {
                if (action.equals("flush")) {
                    admin.flushRegionServer(server);
                } else {
                    admin.majorCompactRegionServer(server);
                }
                System.out.println(action + " " + server.getAddress());
            }
        }
    }
}
