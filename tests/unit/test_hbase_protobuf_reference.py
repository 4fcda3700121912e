"""The native HBase client's hand-written protobuf (workbench/databases/hbase/protocol/messages.py, and the
requests csrc/hbase.c makes) against HBase 2.6.1's own .proto files, compiled here.

The .proto files ship inside org.apache.hbase:hbase-protocol-shaded:2.6.1, a jar the HBase
distribution's lockfile pins already (workbench/clusters/locks/hbase-2.6.1.lock): it is taken from
the jar cache where `workbench servers fetch hbase` (or any HBase test) put it, or downloaded
from Maven Central into that cache once, checked against the sha256 pinned below. Without it and
without network the module fails and says how to get it. protoc is grpcio-tools' (the test
extra); the generated modules are imported from a temporary folder.

Every request is compared byte for byte with what protobuf serializes from the same message
(fields in field-number order, as the hand-written encoder writes them), and every answer the
client reads is made by protobuf from a message.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import importlib
import os
import re
import struct
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.support.loopback import Transport
from workbench.clusters import distributions, paths
from workbench.databases.hbase import native as hbase_native
from workbench.databases.hbase.protocol import messages as hbase_messages
from workbench.databases.hbase.protocol import rpc as hbase_rpc
from workbench.databases.hbase.protocol.messages import (
    CALL_IDS,
    DURABILITY,
    PUT,
    REGION_NAME,
    LazyCells,
    RemoteError,
    decode_get,
    decode_mutate,
    field,
    found_cells,
    get_request,
    mutation,
    number,
    put_request,
    region_specifier,
    varint,
)
from workbench.databases.hbase.protocol.rpc import Regions, RpcConnection
from workbench.errors import ClusterError

# The jar with HBase 2.6.1's .proto files (its -sources.jar carries the same 39 files). Maven
# Central's .sha1 for it is 7371ef99b9c2b0e81e675c93cbed28f633c6f9f3; no .sha256 is published.
PROTOCOL_JAR = ("https://repo1.maven.org/maven2/org/apache/hbase/hbase-protocol-shaded/2.6.1/"
                "hbase-protocol-shaded-2.6.1.jar")
PROTOCOL_JAR_SHA256 = "04e87514d7a0815a851328ab2203a1e7e835295596817de655f4c734e4076576"
PROTOCOL_JAR_SIZE = 7238866
# The files the client's messages are in; those they import are taken too.
PROTOS = ("Client.proto", "RPC.proto")
# The jar cache as the test run found it (each test then runs with an empty one of its own:
# tests/conftest.py), read once at import.
CACHE = paths.cache_dir()
COMPILED = hbase_rpc._fast  # workbench._speedups where it is built

EXAMPLES = settings(max_examples=150, deadline=None, database=None)


# -- HBase's .proto files, compiled ----------------------------------------------------------------

def _protocol_artifact() -> distributions.Artifact:
    [art] = [a for a in distributions.read_lock("hbase") if a.artifact == "hbase-protocol-shaded"]
    assert (art.url, art.sha256, art.size) == (PROTOCOL_JAR, PROTOCOL_JAR_SHA256, PROTOCOL_JAR_SIZE), \
        "the HBase lockfile and this test pin different hbase-protocol-shaded jars"
    return art


def protocol_jar(cache: Path) -> Path:
    """hbase-protocol-shaded-2.6.1.jar in the jar cache, verified; fetched into the cache (as
    distributions.fetch fetches each jar) when it is not there."""
    art = _protocol_artifact()
    target = distributions.dist_dir("hbase", cache)
    jar = target / art.filename
    if distributions._is_good(jar, art):
        return jar
    target.mkdir(parents=True, exist_ok=True)
    folder, failed = os.open(target, os.O_RDONLY), None
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)  # (two test processes fetch it once, not into one .part)
        if not distributions._is_good(jar, art):
            distributions._download(art, target, lambda n: None)
    except ClusterError as exc:
        failed = str(exc)  # (its hint included)
    finally:
        os.close(folder)
    if failed:
        pytest.fail(f"HBase 2.6.1's .proto files are in {PROTOCOL_JAR} (sha256 {PROTOCOL_JAR_SHA256}), "
                    f"which is not in the jar cache ({jar}) and could not be downloaded: {failed}. "
                    "With network to Maven Central, `workbench servers fetch hbase` (or this test) "
                    "fetches it once.", pytrace=False)
    digest = hashlib.sha256(jar.read_bytes()).hexdigest()
    assert digest == PROTOCOL_JAR_SHA256, f"{jar}: sha256 {digest}, not the pinned {PROTOCOL_JAR_SHA256}"
    return jar


def _closure(jar: zipfile.ZipFile, names) -> list[str]:
    """The .proto files named and every one they import, at the jar's root."""
    todo, seen = list(names), []
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.append(name)
            todo += re.findall(r'^import\s+"([^"]+)"\s*;', jar.read(name).decode(), re.M)
    return sorted(seen)


def compile_protos(jar_path: Path, out: Path) -> SimpleNamespace:
    from grpc_tools import protoc

    with zipfile.ZipFile(jar_path) as jar:
        names = _closure(jar, PROTOS)
        for name in names:
            (out / name).write_bytes(jar.read(name))
    code = protoc.main(["protoc", f"-I{out}", f"--python_out={out}", *(str(out / n) for n in names)])
    assert code == 0, f"protoc failed on {names} (exit status {code})"
    modules = {}
    sys.path.insert(0, str(out))
    try:
        for name in names:
            module = name.removesuffix(".proto") + "_pb2"
            modules[module.removesuffix("_pb2")] = importlib.import_module(module)
    finally:
        sys.path.remove(str(out))
    for module in modules.values():  # ours, not a module of that name from elsewhere
        assert Path(module.__file__).parent == out, module.__file__
    return SimpleNamespace(**modules)


@pytest.fixture(scope="module")
def pb(tmp_path_factory) -> SimpleNamespace:
    """The generated modules by .proto name: pb.Client, pb.HBase, pb.Cell, pb.RPC, ..."""
    return compile_protos(protocol_jar(CACHE), tmp_path_factory.mktemp("hbase-protos"))


def test_the_proto_files_are_hbase_2_6_1s(pb):
    for module in (pb.Client, pb.HBase, pb.Cell, pb.RPC):
        options = module.DESCRIPTOR.GetOptions()
        assert module.DESCRIPTOR.package == "hbase.pb"
        assert options.java_package == "org.apache.hadoop.hbase.shaded.protobuf.generated"
    assert sorted(vars(pb)) == ["Cell", "Client", "Comparator", "Filter", "HBase", "MapReduce", "RPC",
                                "Tracing"]


# -- the field numbers ---------------------------------------------------------------------------------

def _upper_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


def _messages(pb: SimpleNamespace) -> dict[str, list]:
    """Every message of the compiled files (nested ones too) by its name in upper snake case."""
    found: dict[str, list] = {}

    def add(descriptor) -> None:
        found.setdefault(_upper_snake(descriptor.name), []).append(descriptor)
        for nested in descriptor.nested_types:
            add(nested)

    for module in vars(pb).values():
        for descriptor in module.DESCRIPTOR.message_types_by_name.values():
            add(descriptor)
    return found


# The fields the client writes and reads: each must be a constant of hbase_native (more may be).
FIELDS = """CONNECTION_HEADER_USER_INFO CONNECTION_HEADER_SERVICE_NAME USER_INFORMATION_EFFECTIVE_USER
    REQUEST_HEADER_CALL_ID REQUEST_HEADER_METHOD_NAME REQUEST_HEADER_REQUEST_PARAM RESPONSE_HEADER_CALL_ID
    RESPONSE_HEADER_EXCEPTION EXCEPTION_RESPONSE_EXCEPTION_CLASS_NAME EXCEPTION_RESPONSE_STACK_TRACE
    REGION_SPECIFIER_TYPE REGION_SPECIFIER_VALUE GET_REQUEST_REGION GET_REQUEST_GET GET_ROW GET_COLUMN
    COLUMN_FAMILY COLUMN_QUALIFIER GET_RESPONSE_RESULT RESULT_CELL MUTATE_REQUEST_REGION
    MUTATE_REQUEST_MUTATION MUTATION_PROTO_ROW MUTATION_PROTO_MUTATE_TYPE MUTATION_PROTO_COLUMN_VALUE
    MUTATION_PROTO_DURABILITY
    COLUMN_VALUE_FAMILY COLUMN_VALUE_QUALIFIER_VALUE QUALIFIER_VALUE_QUALIFIER QUALIFIER_VALUE_VALUE
    CELL_QUALIFIER CELL_VALUE""".split()


def test_every_field_constant_is_the_field_number_in_the_proto_files(pb):
    """Every int constant of hbase_messages named MESSAGE_FIELD after a message of the .proto files
    is the number of that field of that message (one that names no field fails); FIELDS are all
    there. The enum values and wire types too."""
    messages = _messages(pb)
    constants = {name: value for name, value in vars(hbase_messages).items()
                 if re.fullmatch(r"[A-Z][A-Z0-9_]*", name) and type(value) is int}
    checked = {}
    for name, value in constants.items():
        prefixes = [p for p in messages if name.startswith(p + "_")]
        if not prefixes:  # (CALL_IDS, PUT, ...: no message's name)
            continue
        prefix = max(prefixes, key=len)  # COLUMN_VALUE_FAMILY is ColumnValue's, not Column's
        [message] = messages[prefix]  # (a name two messages have would be ambiguous)
        fname = name[len(prefix) + 1:].lower()
        assert fname in message.fields_by_name, f"{name}: {message.full_name} has no field {fname!r}"
        checked[name] = (message.full_name, fname)
        number_there = message.fields_by_name[fname].number
        assert value == number_there, f"{name} = {value}, but {message.full_name}.{fname} = {number_there}"
    assert len(FIELDS) == 32 and not set(FIELDS) - set(checked), "not constants of hbase_messages"
    assert checked["COLUMN_VALUE_FAMILY"] == ("hbase.pb.MutationProto.ColumnValue", "family")
    # one RegionSpecifier serves a GetRequest and a MutateRequest
    assert hbase_messages.GET_REQUEST_REGION == hbase_messages.MUTATE_REQUEST_REGION
    # the enum values and wire types
    specifier_type = pb.HBase.RegionSpecifier.RegionSpecifierType
    assert REGION_NAME == specifier_type.Value("REGION_NAME")
    assert PUT == pb.Client.MutationProto.MutationType.Value("PUT")
    assert DURABILITY == dict(pb.Client.MutationProto.Durability.items())
    from google.protobuf.internal import wire_format
    assert (hbase_messages.VARINT, hbase_messages.LEN) == (wire_format.WIRETYPE_VARINT,
                                                            wire_format.WIRETYPE_LENGTH_DELIMITED)


def test_the_encoder_names_its_field_numbers():
    """No field number or key written as a bare number in the HBase client's modules (only
    PREAMBLE's bytes)."""
    source = "".join(Path(m.__file__).read_text() for m in (hbase_messages, hbase_rpc, hbase_native))
    patterns = (r"\b(?:field|number|tag)\(\d", r"\bfid [!=]= \d", r"[!=]= 0x[0-9A-Fa-f]+",
                r'b"\\x[0-9A-Fa-f]{2}[^"]*"')
    bare = [m.group(0) for pattern in patterns for m in re.finditer(pattern, source)]
    assert bare == []


# -- requests --------------------------------------------------------------------------------------------

def ref_varint(pb, n: int) -> bytes:
    """protobuf's varint of n: a MutationProto of its timestamp (field 4, uint64) less the key."""
    return pb.Client.MutationProto(timestamp=n).SerializeToString()[1:]


def specifier(pb, region: bytes):
    return pb.HBase.RegionSpecifier(type=pb.HBase.RegionSpecifier.REGION_NAME, value=region)


def ref_get(pb, region: bytes, row: bytes, family: bytes, qualifiers) -> bytes:
    column = pb.Client.Column(family=family, qualifier=qualifiers or [])
    return pb.Client.GetRequest(region=specifier(pb, region),
                                get=pb.Client.Get(row=row, column=[column])).SerializeToString()


def ref_put(pb, region: bytes, row: bytes, family: bytes, cells, durability: int) -> bytes:
    proto = pb.Client.MutationProto
    value = proto.ColumnValue(family=family, qualifier_value=[
        proto.ColumnValue.QualifierValue(qualifier=q, value=v) for q, v in cells])
    put = proto(row=row, mutate_type=proto.PUT, column_value=[value])
    if durability:  # USE_DEFAULT, the field's default, is left out: as the hand-written encoder does
        put.durability = durability
    return pb.Client.MutateRequest(region=specifier(pb, region), mutation=put).SerializeToString()


SIZES = [0, 1, 127, 128, 16383, 16384]  # where a length's varint grows a byte
small = st.binary(max_size=40)
sized = st.one_of(small, st.sampled_from(SIZES).map(lambda n: b"v" * n))


def test_varints_fields_and_numbers_are_protobufs(pb):
    @EXAMPLES
    @given(st.one_of(st.integers(0, 2**64 - 1),
                     st.sampled_from([0, 127, 128, 16383, 16384, 2**63, 2**64 - 1])))
    def check(n):
        assert varint(n) == ref_varint(pb, n)
        # a varint field below 16 and one above (Scan.mvcc_read_point = 20: a two-byte key)
        assert number(4, n) == pb.Client.MutationProto(timestamp=n).SerializeToString()
        assert number(20, n) == pb.Client.Scan(mvcc_read_point=n).SerializeToString()

    check()

    @EXAMPLES
    @given(sized)
    def check_field(data):
        assert field(3, data) == pb.Client.Scan(start_row=data).SerializeToString()
        # a message field above 16 (Scan.cf_time_range = 19)
        span = pb.HBase.TimeRange(**{"from": 1})
        inner = pb.HBase.ColumnFamilyTimeRange(column_family=data, time_range=span)
        assert (field(19, inner.SerializeToString())
                == pb.Client.Scan(cf_time_range=[inner]).SerializeToString())

    check_field()


def test_a_region_specifier_is_protobufs(pb):
    for region in (b"", b"t,,1.abc.", b"t,user5,1700000000000.0123456789abcdef0123456789abcdef." * 3):
        for request in (pb.Client.GetRequest, pb.Client.MutateRequest):
            alone = request(region=specifier(pb, region))  # (partial: the rest is required)
            assert region_specifier(region) == alone.SerializePartialToString()


def test_get_requests_are_protobufs_bytes(pb):
    """A Get of every field (no qualifiers, or an empty list) and of some."""
    @EXAMPLES
    @given(small, sized, small, st.one_of(st.none(), st.lists(sized, max_size=5)))
    @example(b"t,,1.x.", b"user1", b"family", None)
    @example(b"r" * 200, b"k" * 16384, b"f" * 128, [b"", b"q" * 127, b"q" * 128])
    def check(region, row, family, qualifiers):
        made = get_request(region, row, family, qualifiers)
        assert made == ref_get(pb, region, row, family, qualifiers)
        parsed = pb.Client.GetRequest.FromString(made)
        assert parsed.get.row == row and list(parsed.get.column[0].qualifier) == list(qualifiers or [])

    check()


def test_put_requests_are_protobufs_bytes_for_every_durability(pb):
    """A Put of one cell and of several, with each durability; USE_DEFAULT is left out, as the
    field's default (protobuf writes it only when it is set: then `30 00` would follow)."""
    @EXAMPLES
    @given(small, sized, small, st.lists(st.tuples(small, sized), min_size=1, max_size=5),
           st.sampled_from(sorted(DURABILITY.values())))
    @example(b"r", b"user1", b"family", [(b"field0", b"x" * 100)], 0)
    @example(b"r", b"u" * 200, b"family", [(b"field0", b"x" * 16384), (b"field1", b"")], 4)
    def check(region, row, family, cells, durability):
        made = put_request(region, row, family, cells, durability)
        assert made == ref_put(pb, region, row, family, cells, durability)
        assert made == region_specifier(region) + mutation(row, family, cells, durability)
        parsed = pb.Client.MutateRequest.FromString(made).mutation
        assert parsed.durability == durability and parsed.HasField("durability") == bool(durability)
        assert parsed.mutate_type == pb.Client.MutationProto.PUT
        assert [(c.qualifier, c.value) for c in parsed.column_value[0].qualifier_value] == cells

    check()


def _binding():
    from workbench.config.spec import spec_from_args
    from workbench.databases.hbase.native import NativeBinding

    spec, _ = spec_from_args([], ["hbase.client=native", "hbase.port=9"], "run")
    return NativeBinding(spec, dict(spec.binding_properties), {"phase": "run", "workers": 1})


@pytest.fixture(params=["C", "Python"])
def path(request, monkeypatch):
    """hbase_native with the compiled request and receive paths (csrc/hbase.c), or without."""
    if request.param == "C" and COMPILED is None:
        pytest.skip("workbench._speedups is not built here")
    for module in (hbase_rpc, hbase_native):
        monkeypatch.setattr(module, "_fast", COMPILED if request.param == "C" else None)
    return request.param


@pytest.mark.parametrize("regions", [1, 3])
def test_the_hot_paths_requests_are_protobufs_bytes(pb, path, regions):
    """NativeBinding's make (in C for a table of one region, where built): reads of every field
    and of some, updates of one field and of several, each durability."""
    db = _binding()
    family = db._family_name
    starts = [b"", b"user3", b"user5"][:regions]
    table = Regions([{"start_key": s, "name": b"t,%s,1.%d." % (s, i), "server_name": b"h", "port": 1}
                     for i, s in enumerate(starts)])
    makers = {}
    for durability in sorted(DURABILITY.values()):
        db._durability = durability
        makers[durability] = db._maker(table)
    if path == "C" and regions == 1:
        assert all(getattr(m, "func", None) is COMPILED.hbase_make for m in makers.values())
    text = st.one_of(st.text(max_size=20),
                     st.sampled_from([0, 113, 114, 115, 127, 128, 300]).map(lambda n: "é" * n))
    keys = st.one_of(st.text(max_size=30).map(lambda s: "user" + s),  # and about the one-byte Get's limit
                     st.sampled_from([110, 115, 116, 117, 126, 127, 200]).map(lambda n: "u" * n))

    @EXAMPLES
    @given(keys, st.dictionaries(text, text, min_size=1, max_size=4),
           st.sampled_from(sorted(DURABILITY.values())))
    def check(key, values, durability):
        make, row = makers[durability], key.encode()
        region = table.locate(row)[0]
        method, request, decode = make(("READ", key, None))
        assert (method, decode) == (b"Get", found_cells) and request == ref_get(pb, region, row, family, None)
        fields = list(values)
        _, request, _ = make(("READ", key, fields))
        assert request == ref_get(pb, region, row, family, [f.encode() for f in fields])
        cells = [(q.encode(), v.encode()) for q, v in values.items()]
        for one in (cells[:1], cells):
            method, request, decode = make(("UPDATE", key, {q.decode(): v.decode() for q, v in one}))
            assert (method, decode) == (b"Mutate", decode_mutate)
            assert request == ref_put(pb, region, row, family, one, durability)

    check()


# -- the connection: headers out, answers in ------------------------------------------------------------

def delimited(pb, message) -> bytes:
    """A message as HBase's writeDelimitedTo writes it: its length, a varint, then it."""
    data = message.SerializeToString()
    return ref_varint(pb, len(data)) + data


def answer_frame(pb, header, body=None) -> bytes:
    msg = delimited(pb, header) + (b"" if body is None else delimited(pb, body))
    return struct.pack(">I", len(msg)) + msg


def frames(pb, written: bytes):
    """(RequestHeader, param bytes) of every request in what a connection wrote after its
    preamble and ConnectionHeader, read with protobuf's own parser."""
    from google.protobuf.internal.decoder import _DecodeVarint

    at, out = 0, []
    while at < len(written):
        (total,) = struct.unpack_from(">I", written, at)
        end = at + 4 + total
        hlen, i = _DecodeVarint(written, at + 4)
        header = written[i:i + hlen]
        plen, i = _DecodeVarint(written, i + hlen)
        assert i + plen == end
        out.append((header, written[i:end]))
        at = end
    return out


def feed(conn, data: bytes) -> None:
    buf = conn.get_buffer(len(data))
    buf[:len(data)] = data
    conn.buffer_updated(len(data))


def test_the_connection_and_request_headers_are_protobufs_bytes(pb, path):
    """The preamble and ConnectionHeader, then each call's RequestHeader (call ids of one byte
    and two, round past CALL_IDS; methods of the hot path and another) and its param."""
    async def main():
        conn = RpcConnection("someone", 30, "test:16020")
        conn.connection_made(Transport())
        preamble_and_header = conn.transport.written
        conn.transport.written = b""
        conn._call_id = 126
        params = [get_request(b"r", b"row%d" % i, b"family", None) for i in range(4)]
        steps = [(b"Get", params[0]), (b"Mutate", params[1]), (b"Multi" * 30, params[2]), (b"Get", params[3])]
        chains = [conn.run(steps, lambda step: (step[0], step[1], decode_get))]
        ids = []
        while not chains[0].done():
            data = b""
            for cid in sorted(conn._inflight):
                ids.append(cid)
                data += answer_frame(pb, pb.RPC.ResponseHeader(call_id=cid), pb.Client.GetResponse())
            feed(conn, data)
            await asyncio.sleep(0)
            if conn._call_id == 128:  # then the ids go round: the last, then one byte again
                conn._call_id = CALL_IDS - 1
        return preamble_and_header, conn.transport.written, steps, ids, chains[0].result()

    start, written, steps, ids, answers = asyncio.run(main())
    header = pb.RPC.ConnectionHeader(user_info=pb.RPC.UserInformation(effective_user="someone"),
                                     service_name="ClientService").SerializeToString()
    assert start == b"HBas\x00\x50" + struct.pack(">I", len(header)) + header
    assert ids == [127, 128, CALL_IDS, 1] and [ok for ok, *_ in answers] == [True] * 4
    sent = frames(pb, written)
    assert len(sent) == 4
    for (method, param), cid, (header, sent_param) in zip(steps, ids, sent, strict=True):
        expected = pb.RPC.RequestHeader(call_id=cid, method_name=method.decode(), request_param=True)
        assert header == expected.SerializeToString() and sent_param == param


@pytest.mark.parametrize("call_id", [1, 127, 128, 300, CALL_IDS])
def test_answers_made_by_protobuf_are_read_right(pb, path, call_id):
    """ResponseHeaders of one call id (short and long) with a GetResponse or MutateResponse, and
    with an ExceptionResponse."""
    cell = pb.Cell.Cell
    result = pb.Client.Result(cell=[
        cell(row=b"user1", family=b"family", qualifier=b"field0", timestamp=1700000000000,
             cell_type=pb.Cell.PUT, value="välue".encode() * 40),
        cell(row=b"user1", family=b"family", qualifier=b"field1", timestamp=1, cell_type=pb.Cell.PUT,
             value=b""),
    ], associated_cell_count=0, stale=False)
    bodies = {
        b"row": (pb.Client.GetResponse(result=result), {"field0": "välue" * 40, "field1": ""}),
        b"none": (pb.Client.GetResponse(result=pb.Client.Result()), None),
        b"empty": (pb.Client.GetResponse(), None),
        b"exists": (pb.Client.GetResponse(result=pb.Client.Result(exists=False, stale=True)), None),
        b"put": (pb.Client.MutateResponse(processed=True), None),
        b"put-result": (pb.Client.MutateResponse(result=pb.Client.Result(), processed=True), None),
    }
    first_line = "org.apache.hadoop.hbase.NotServingRegionException: t,,1.abc. is not online on h"
    error = pb.RPC.ExceptionResponse(
        exception_class_name="org.apache.hadoop.hbase.NotServingRegionException",
        stack_trace=first_line + "\n\tat org.apache.hadoop.hbase.regionserver.HRegionServer.getRegion",
        hostname="h", port=16020, do_not_retry=False, server_overloaded=False)

    async def main():
        conn = RpcConnection("me", 30, "test:16020")
        conn.connection_made(Transport())
        got = []
        for tag in [*bodies, b"error"]:
            conn._call_id = call_id - 1
            decode = decode_mutate if tag.startswith(b"put") else found_cells
            chain = conn.run([tag], lambda t, decode=decode: (b"Get", b"", decode))
            assert list(conn._inflight) == [call_id]
            if tag == b"error":
                feed(conn, answer_frame(pb, pb.RPC.ResponseHeader(call_id=call_id, exception=error)))
            else:
                feed(conn, answer_frame(pb, pb.RPC.ResponseHeader(call_id=call_id), bodies[tag][0]))
            await asyncio.sleep(0)
            [(ok, value, _, _)] = chain.result()
            got.append((tag, ok, value))
        assert conn.broken is None
        return got

    for tag, ok, value in asyncio.run(main()):
        if tag == b"error":
            assert not ok and isinstance(value, RemoteError)
            assert type(value).__name__ == "NotServingRegionException"
            assert str(value) == first_line
            continue
        expected = bodies[tag][1]
        assert ok, (tag, value)
        if expected is None:
            assert value is None, tag
        else:
            assert isinstance(value, LazyCells) and dict(value) == expected


def test_decoders_read_protobufs_get_and_mutate_responses(pb):
    """decode_get and found_cells on GetResponses of any cells protobuf writes (every Cell field
    set), decode_mutate on MutateResponses."""
    cell = pb.Cell.Cell

    @EXAMPLES
    @given(st.dictionaries(sized, sized, max_size=5), st.booleans(), st.integers(0, 2**63 - 1))
    @example({b"field0": b"x" * 16384, b"": b""}, True, 2**63 - 1)
    def check(cells, extras, timestamp):
        result = pb.Client.Result(cell=[
            cell(row=b"row", family=b"family", qualifier=q, value=v, timestamp=timestamp,
                 cell_type=pb.Cell.PUT, tags=b"t" if extras else None) for q, v in cells.items()])
        if extras:
            result.associated_cell_count, result.exists, result.stale, result.partial = 0, True, False, False
        body = pb.Client.GetResponse(result=result).SerializeToString()
        assert decode_get(body) == (cells or None)
        assert (found_cells(body) is None) == (not cells)

    check()
    assert decode_get(pb.Client.GetResponse().SerializeToString()) is None
    text = {f"field{i}": f"välue{i}" * i for i in range(10)}
    body = pb.Client.GetResponse(result=pb.Client.Result(cell=[
        cell(qualifier=q.encode(), value=v.encode()) for q, v in text.items()])).SerializeToString()
    row = found_cells(body)
    assert isinstance(row, LazyCells) and row._row is None and dict(row) == text
    for response in (pb.Client.MutateResponse(), pb.Client.MutateResponse(processed=True),
                     pb.Client.MutateResponse(result=pb.Client.Result(cell=[cell(value=b"v")]))):
        assert decode_mutate(response.SerializeToString()) is None
