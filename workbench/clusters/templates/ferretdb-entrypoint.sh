#!/bin/sh
# workbench/ferretdb entry point: the official mongo image's contract (mongod [--port N]
# [--bind_ip A], data under /data/db, MONGO_INITDB_ROOT_USERNAME/PASSWORD), served by FerretDB on
# PostgreSQL, or on SQLite with FERRETDB_BACKEND=sqlite. PID 1 stays this shell: on SIGTERM it
# stops FerretDB, then PostgreSQL (fast shutdown).
set -e
if [ "$1" = mongod ]; then
    shift
    PORT=27017
    BIND=0.0.0.0
    while [ $# -gt 0 ]; do
        case "$1" in
            --port) PORT=$2; shift 2 ;;
            --bind_ip) BIND=$2; shift 2 ;;
            *) shift ;;
        esac
    done
    DATA=/data/db
    mkdir -p "$DATA/ferretdb"
    FLAGS="--listen-addr=$BIND:$PORT --debug-addr=- --telemetry=disable --state-dir=$DATA/ferretdb --log-format=text"
    if [ "${FERRETDB_BACKEND:-postgresql}" = sqlite ]; then
        mkdir -p "$DATA/sqlite"
        # shellcheck disable=SC2086 # FLAGS is a list of flags without spaces
        exec ferretdb --handler=sqlite "--sqlite-url=file:$DATA/sqlite/" $FLAGS
    fi
    PGPORT=${WORKBENCH_POSTGRES_PORT:-5432}
    PGBIN=$(ls -d /usr/lib/postgresql/*/bin | tail -n 1)
    PGDATA=$DATA/postgres
    SOCK=/run/postgresql
    mkdir -p "$SOCK"
    chown postgres "$DATA" "$SOCK"
    if [ ! -s "$PGDATA/PG_VERSION" ]; then
        su postgres -s /bin/sh -c "$PGBIN/initdb -D $PGDATA -U ferretdb --auth-local=trust \
            --auth-host=scram-sha-256 -E UTF8 --locale=C --no-sync" >/dev/null
    fi
    rm -f "$PGDATA/postmaster.pid" "$SOCK"/.s.PGSQL.*  # the container starts alone: any is stale
    su postgres -s /bin/sh -c "exec $PGBIN/postgres -D $PGDATA -p $PGPORT \
        -c listen_addresses=127.0.0.1 -c unix_socket_directories=$SOCK \
        -c shared_buffers=${POSTGRES_SHARED_BUFFERS:-128MB}" &
    PG=$!
    # Ready to serve, not only listening: after a kill, PostgreSQL first replays its WAL.
    until "$PGBIN/pg_isready" -q -h "$SOCK" -p "$PGPORT"; do kill -0 "$PG"; sleep 0.1; done
    URL="postgres:///postgres?host=$SOCK&port=$PGPORT&user=ferretdb"
    if [ -n "$MONGO_INITDB_ROOT_USERNAME" ]; then
        # A PostgreSQL role of that name and password: FerretDB 1.x checks logins (PLAIN) there.
        printf '%s\n' \
            "SELECT 'CREATE ROLE ' || quote_ident(:'u') || ' LOGIN SUPERUSER' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'u') \gexec" \
            "ALTER ROLE :\"u\" PASSWORD :'p';" |
            "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PGPORT" -U ferretdb -d postgres \
                -v u="$MONGO_INITDB_ROOT_USERNAME" -v p="$MONGO_INITDB_ROOT_PASSWORD" >/dev/null
        URL="postgres://127.0.0.1:$PGPORT/postgres"
    fi
    # shellcheck disable=SC2086
    ferretdb --handler=postgresql "--postgresql-url=$URL" $FLAGS &
    FDB=$!
    trap 'kill -TERM "$FDB" 2>/dev/null || true' TERM INT
    wait "$FDB" || true
    wait "$FDB" 2>/dev/null || true
    kill -INT "$PG" 2>/dev/null || true
    wait "$PG" || true
    exit 0
fi
exec "$@"
