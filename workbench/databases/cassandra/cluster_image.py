"""The workbench/cassandra image's files (clusters/images.py builds it from the locked jars): its
Dockerfile, a config under /etc/cassandra (the local provider's templates with single-node
defaults) and an entry point that honours the official `cassandra` image's environment
contract, so the provider can start either image the same way."""

from __future__ import annotations

from string import Template

from workbench.clusters.images import BASE
from workbench.clusters.launch import template_text

CASSANDRA_ENTRYPOINT = r"""#!/bin/sh
# workbench/cassandra entry point: the official cassandra image's environment contract.
set -e
CONF=${CASSANDRA_CONF:-/etc/cassandra}
if [ "$1" = cassandra ]; then
    shift
    [ "$1" = -f ] && shift
    mkdir -p /var/lib/cassandra /var/log/cassandra
    own_address() { getent hosts "$(cat /proc/sys/kernel/hostname)" | awk '{ print $1; exit }'; }
    : "${CASSANDRA_LISTEN_ADDRESS:=auto}"
    [ "$CASSANDRA_LISTEN_ADDRESS" = auto ] && CASSANDRA_LISTEN_ADDRESS=$(own_address)
    : "${CASSANDRA_BROADCAST_ADDRESS:=$CASSANDRA_LISTEN_ADDRESS}"
    [ "$CASSANDRA_BROADCAST_ADDRESS" = auto ] && CASSANDRA_BROADCAST_ADDRESS=$(own_address)
    : "${CASSANDRA_BROADCAST_RPC_ADDRESS:=$CASSANDRA_BROADCAST_ADDRESS}"
    : "${CASSANDRA_RPC_ADDRESS:=0.0.0.0}"
    : "${CASSANDRA_SEEDS:=$CASSANDRA_BROADCAST_ADDRESS}"
    set_yaml() { sed -i -E "s|^(# )?($1:).*|\2 $2|" "$CONF/cassandra.yaml"; }
    sed -i -E "s|(- seeds:).*|\1 \"$CASSANDRA_SEEDS\"|" "$CONF/cassandra.yaml"
    set_yaml listen_address "$CASSANDRA_LISTEN_ADDRESS"
    set_yaml broadcast_address "$CASSANDRA_BROADCAST_ADDRESS"
    set_yaml rpc_address "$CASSANDRA_RPC_ADDRESS"
    set_yaml broadcast_rpc_address "$CASSANDRA_BROADCAST_RPC_ADDRESS"
    [ -n "$CASSANDRA_CLUSTER_NAME" ] && set_yaml cluster_name "'$CASSANDRA_CLUSTER_NAME'"
    [ -n "$CASSANDRA_NUM_TOKENS" ] && set_yaml num_tokens "$CASSANDRA_NUM_TOKENS"
    [ -n "$CASSANDRA_ENDPOINT_SNITCH" ] && set_yaml endpoint_snitch "$CASSANDRA_ENDPOINT_SNITCH"
    [ -n "$CASSANDRA_DC" ] && sed -i -E "s|^dc=.*|dc=$CASSANDRA_DC|" "$CONF/cassandra-rackdc.properties"
    [ -n "$CASSANDRA_RACK" ] && sed -i -E "s|^rack=.*|rack=$CASSANDRA_RACK|" \
        "$CONF/cassandra-rackdc.properties"
    HEAP=${MAX_HEAP_SIZE:-1G}
    # G1 (jvm.options) sizes the young generation itself, as Cassandra's own scripts do with it.
    NEW=""
    if [ -n "$HEAP_NEWSIZE" ] && ! grep -q '^-XX:+UseG1GC' "$CONF/jvm.options"; then
        NEW="-Xmn$HEAP_NEWSIZE"
    fi
    # shellcheck disable=SC2086 # JVM_OPTS and JVM_EXTRA_OPTS are lists of flags
    exec java "@$CONF/jvm.options" "-Xms$HEAP" "-Xmx$HEAP" $NEW \
        -javaagent:/opt/cassandra/lib/jamm-0.4.0.jar \
        -Dcassandra.logdir=/var/log/cassandra -Dcassandra.storagedir=/var/lib/cassandra \
        "-Dcassandra.config=file://$CONF/cassandra.yaml" "-Dlogback.configurationFile=$CONF/logback.xml" \
        $JVM_OPTS $JVM_EXTRA_OPTS -cp "$CONF:/opt/cassandra/lib/*" \
        org.apache.cassandra.service.CassandraDaemon "$@"
fi
exec "$@"
"""

def _cassandra_yaml() -> str:
    """The image's own cassandra.yaml: the local provider's template with single-node defaults,
    addresses left for the entry point, and tokens chosen by Cassandra (num_tokens)."""
    text = Template(template_text("cassandra.yaml")).substitute(
        node_name="(any)", cluster_name="Test Cluster", num_tokens=16, initial_token="",
        seeds="127.0.0.1:7000", listen_address="127.0.0.1", rpc_address="127.0.0.1",
        broadcast_rpc="broadcast_rpc_address: 127.0.0.1", storage_port=7000, native_port=9042,
        data_dir="/var/lib/cassandra", commitlog_sync="periodic",
        commitlog_sync_extra="commitlog_sync_period: 10000ms", commitlog_total_space="256MiB",
        memtable_heap_space="128MiB", memtable_offheap_space="128MiB", concurrent_reads=32,
        concurrent_writes=32, authenticator="AllowAllAuthenticator", client_encryption="",
        auto_bootstrap="false",
    )
    lines = [line for line in text.splitlines() if not line.startswith("initial_token:")]
    return "\n".join(lines) + "\nbroadcast_address: 127.0.0.1\n"


def cassandra_files(kind: str) -> dict[str, tuple[str, int]]:
    return {
        "Dockerfile": ("\n".join((
            f"FROM {BASE}",
            "COPY lib/ /opt/cassandra/lib/",
            "COPY conf/ /etc/cassandra/",
            "COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh",
            "ENV CASSANDRA_HOME=/opt/cassandra CASSANDRA_CONF=/etc/cassandra",
            "VOLUME /var/lib/cassandra",
            "EXPOSE 7000 9042",
            'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]',
            'CMD ["cassandra", "-f"]',
        )) + "\n", 0o644),
        "conf/cassandra.yaml": (_cassandra_yaml(), 0o644),
        "conf/logback.xml": (template_text("logback.xml"), 0o644),
        "conf/jvm.options": (template_text("cassandra-jvm.options"), 0o644),
        "conf/cassandra-rackdc.properties": ("dc=datacenter1\nrack=rack1\n", 0o644),
        "docker-entrypoint.sh": (CASSANDRA_ENTRYPOINT, 0o755),
    }
