"""The native CQL client's settings as the Cassandra binding fills them from its properties:
each property in its field, the defaults as PROPERTIES gives them, and a bad property still
refused by the binding before any setting is made."""

from __future__ import annotations

import dataclasses
import ssl

import pytest

from workbench.databases.cassandra.options import PROPERTIES, parse_options
from workbench.databases.cassandra.protocol.session import NativeSession
from workbench.databases.cassandra.protocol.settings import CqlSettings, CqlTls
from workbench.errors import ConfigError


def test_each_property_lands_in_its_field(tmp_path):
    ca, cert, key = (tmp_path / name for name in ("ca.pem", "client.pem", "client.key"))
    for path in (ca, cert, key):
        path.write_text("-----BEGIN-----\n")
    settings = parse_options({
        "hosts": "127.0.0.2, 127.0.0.3", "port": "9043", "cassandra.keyspace": "bench",
        "cassandra.username": "ann", "cassandra.password": "secret",
        "cassandra.connecttimeoutmillis": "700", "cassandra.readtimeoutmillis": "900",
        "cassandra.useSSL": "true", "cassandra.ssl.cafile": str(ca), "cassandra.ssl.certfile": str(cert),
        "cassandra.ssl.keyfile": str(key), "cassandra.ssl.keypassword": "pw",
        "cassandra.ssl.verify": "identity", "cassandra.protocolversion": "3", "cassandra.replicas": "first",
        # the binding's own: consistency goes with each statement, the rest to the schema
        "cassandra.readconsistencylevel": "ONE", "cassandra.drop": "true",
    }).cql_settings()
    assert settings == CqlSettings(
        hosts=("127.0.0.2", "127.0.0.3"), port=9043, keyspace="bench", protocol_version=3,
        username="ann", password="secret", connect_timeout_ms=700, read_timeout_ms=900,
        tls=CqlTls(cafile=str(ca), certfile=str(cert), keyfile=str(key), keypassword="pw", verify="identity"),
        shuffle_replicas=False, reconnect_first_s=0.25, reconnect_max_s=2.0)
    assert settings.where == "127.0.0.2,127.0.0.3:9043"
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.port = 1  # type: ignore[misc]


def test_the_defaults_are_the_properties_defaults():
    settings = parse_options({}).cql_settings()
    assert settings == CqlSettings(hosts=("127.0.0.1",), port=int(PROPERTIES["port"][0]), keyspace="ycsb",
                                   protocol_version=4, username=None, password=None,
                                   connect_timeout_ms=5000, read_timeout_ms=12000, tls=None,
                                   shuffle_replicas=True)
    # TLS without verification: no CA needed, and the session's context checks nothing
    tls = parse_options({"cassandra.useSSL": "true", "cassandra.ssl.verify": "none"}).cql_settings().tls
    assert tls == CqlTls(verify="none")
    context = NativeSession(parse_options({"cassandra.useSSL": "true",
                                           "cassandra.ssl.verify": "none"}).cql_settings())._ssl
    assert context.verify_mode == ssl.CERT_NONE and not context.check_hostname


@pytest.mark.parametrize(("properties", "refused"), [
    ({"cassandra.replica": "first"}, "unknown Cassandra property 'cassandra.replica'"),
    ({"cassandra.replicas": "banana"}, "cassandra.replicas='banana' is not valid"),
    ({"port": "0"}, "port='0' is not an integer from 1 to 65535"),
    ({"hosts": " , "}, "hosts is empty"),
    ({"cassandra.protocolversion": "5"}, "cassandra.protocolversion=5 is not available"),
    ({"cassandra.useSSL": "true"}, "cassandra.ssl.cafile is not set"),
])
def test_a_bad_property_is_refused_before_any_setting_is_made(properties, refused):
    with pytest.raises(ConfigError, match=refused.replace("(", r"\(")):
        parse_options(properties).cql_settings()
