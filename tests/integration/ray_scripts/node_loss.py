"""Run inside a test's network namespace: Ray's own test-cluster utility starts a head with no CPUs
and two nodes of one CPU each (one workbench worker lands on each), `workbench run` loads them,
and once the run reports operations the second node is removed. Prints the run's exit status."""

import re
import subprocess
import sys

from ray.cluster_utils import Cluster

export, onlost = sys.argv[1], sys.argv[2]
node_args = {"node_ip_address": "127.0.0.1", "object_store_memory": 80_000_000}
cluster = Cluster(initialize_head=True,
                  head_node_args={"num_cpus": 0, "include_dashboard": False, **node_args})
nodes = [cluster.add_node(num_cpus=1, **node_args) for _ in range(2)]
cluster.wait_for_nodes()
argv = [sys.executable, "-m", "workbench", "run", "-P", "workloada", "-p", "recordcount=2000",
        "-p", "operationcount=16000", "-target", "2000", "-threads", "4", "--workers", "2",
        "--ray", cluster.address, "-p", f"ray.onlost={onlost}", "-p", "status.interval=1",
        "--no-store", "--export", f"json={export}"]
run = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
removed = False
for line in run.stderr:
    sys.stderr.write(line)
    m = re.search(r" sec: (\d+) operations", line)
    if not removed and m and int(m.group(1)) > 0:
        cluster.remove_node(nodes[1], allow_graceful=False)
        removed = True
        print("removed", flush=True)
print("exit", run.wait(), flush=True)
cluster.shutdown()
