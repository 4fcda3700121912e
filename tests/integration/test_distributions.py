"""The distribution fetcher against Maven Central: corrupt, truncated and partial jars in the
cache are detected and fetched again (resuming partial ones), and a complete cache needs no
network at all."""

from __future__ import annotations

import shutil
import urllib.request

import pytest

from workbench.clusters import distributions
from workbench.errors import ClusterError


def test_locks_pin_every_jar_with_size_and_sha256():
    for name in distributions.VERSIONS:
        arts = distributions.read_lock(name)
        assert len(arts) > 90
        assert all(len(a.sha256) == 64 and a.size > 0 for a in arts)
        assert len({a.filename for a in arts}) == len(arts)  # one flat lib/ directory
        assert all(a.url.startswith("https://repo1.maven.org/maven2/") for a in arts)
    names = {a.artifact for a in distributions.read_lock("hbase")}
    assert "hbase-thrift" in names and "servlet-api" not in names and "reload4j" not in names
    assert "jamm" in {a.artifact for a in distributions.read_lock("cassandra")}


def test_unknown_distribution_is_a_user_error():
    with pytest.raises(ClusterError, match="unknown distribution 'mongodb'"):
        distributions.read_lock("mongodb")


# Both tests below fetch the Cassandra jars from Maven Central (into the shared cache first, if
# they are not there): they belong with the tests that need the servers.
@pytest.fixture(scope="module")
def cassandra_cache(tmp_path_factory):
    """A private copy of the Cassandra jars (fetched into the shared cache first if needed)."""
    shared = distributions.fetch("cassandra", progress=False)
    cache = tmp_path_factory.mktemp("cache")
    shutil.copytree(shared, distributions.dist_dir("cassandra", cache))
    return cache


@pytest.mark.servers
def test_damaged_jars_are_fetched_again_and_partial_ones_resumed(cassandra_cache, monkeypatch):
    target = distributions.dist_dir("cassandra", cassandra_cache)
    small = sorted(distributions.read_lock("cassandra"), key=lambda a: a.size)[5:8]
    truncated, corrupted, partial = (target / a.filename for a in small)
    truncated.write_bytes(truncated.read_bytes()[:100])
    data = bytearray(corrupted.read_bytes())
    data[len(data) // 2] ^= 0xFF  # same size, one flipped byte
    corrupted.write_bytes(bytes(data))
    whole = partial.read_bytes()
    partial.unlink()
    (target / (partial.name + ".part")).write_bytes(whole[: len(whole) // 2])

    assert {a.filename for a in distributions.missing("cassandra", cassandra_cache)} == {
        truncated.name, corrupted.name, partial.name}
    ranges = []
    real_urlopen = urllib.request.urlopen

    def recording_urlopen(request, *args, **kwargs):
        ranges.append((request.full_url.rsplit("/", 1)[1], request.get_header("Range")))
        return real_urlopen(request, *args, **kwargs)

    monkeypatch.setattr(urllib.request, "urlopen", recording_urlopen)
    distributions.fetch("cassandra", cassandra_cache, progress=False)
    assert distributions.missing("cassandra", cassandra_cache) == []
    assert partial.read_bytes() == whole
    assert (partial.name, f"bytes={len(whole) // 2}-") in ranges  # resumed, not restarted
    assert sorted(name for name, _ in ranges) == sorted([truncated.name, corrupted.name,
                                                         partial.name])


@pytest.mark.servers
def test_a_complete_cache_needs_no_network(cassandra_cache, monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("the fetcher went to the network with a complete cache")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    assert distributions.fetch("cassandra", cassandra_cache, progress=False) == (
        distributions.dist_dir("cassandra", cassandra_cache))
