"""clusters/java_tools.py: a tool shipped as a Java source is compiled once into the cache, run
from its classes with C1 only, and handed back to source mode where it cannot be compiled."""

from __future__ import annotations

import subprocess

import pytest

from workbench.clusters import java, java_tools
from workbench.errors import ClusterError

HELLO = 'public class Hello { public static void main(String[] a) { System.out.println("hello " + a[0]); } }'


@pytest.fixture
def jdk():
    try:
        found = java.choose()
    except ClusterError as exc:  # no supported JDK here: nothing to compile with
        pytest.skip(f"no JDK: {exc}")
    if not found.java.with_name("javac").is_file():
        pytest.skip("a JRE without javac")
    return found


def test_compiled_once_then_run_from_its_classes_with_c1_only(jdk, tmp_path, monkeypatch):
    source = tmp_path / "Hello.java"
    source.write_text(HELLO)
    calls: list[list[str]] = []
    real = subprocess.run

    def counting(argv, *args, **kwargs):
        calls.append(list(argv))
        return real(argv, *args, **kwargs)

    monkeypatch.setattr(java_tools.subprocess, "run", counting)
    first = java_tools.compiled(jdk.java, source, "", cache=tmp_path / "cache")
    assert first is not None and (first / "Hello.class").is_file()
    assert len(calls) == 1 and calls[0][0].endswith("javac") and "-J-XX:TieredStopAtLevel=1" in calls[0]
    again = java_tools.compiled(jdk.java, source, "", cache=tmp_path / "cache")
    assert again == first and len(calls) == 1  # the cache answered: no second compile
    ran = real([str(jdk.java), *java_tools.FLAGS, "-cp", str(first), "Hello", "there"],
               capture_output=True, text=True, timeout=120)
    assert ran.stdout == "hello there\n", ran.stderr
    # another source (or other jars) is another entry, never the old classes
    source.write_text(HELLO.replace("hello ", "hi "))
    other = java_tools.compiled(jdk.java, source, "", cache=tmp_path / "cache")
    assert other is not None and other != first and len(calls) == 2
    cache = tmp_path / "cache"
    assert java_tools.compiled(jdk.java, source, "/elsewhere/*", cache=cache) not in (first, other)
    # nothing half-built is left beside the entries
    assert sorted(p.name.split("-")[0] for p in (cache / "java-tools").iterdir()) == ["Hello"] * 3


def test_a_jre_or_a_source_that_does_not_compile_is_left_to_source_mode(jdk, tmp_path):
    source = tmp_path / "Broken.java"
    source.write_text("public class Broken { not java }")
    assert java_tools.compiled(jdk.java, source, "", cache=tmp_path / "cache") is None
    assert list((tmp_path / "cache" / "java-tools").iterdir()) == []  # no partial classes kept
    jre = tmp_path / "jre" / "bin" / "java"  # a java with no javac beside it
    jre.parent.mkdir(parents=True)
    jre.symlink_to(jdk.java)
    (tmp_path / "Hello.java").write_text(HELLO)
    assert java_tools.compiled(jre, tmp_path / "Hello.java", "", cache=tmp_path / "cache") is None


def test_a_cache_it_may_not_write_is_left_to_source_mode(jdk, tmp_path):
    (tmp_path / "Hello.java").write_text(HELLO)
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the cache's folder would be")
    assert java_tools.compiled(jdk.java, tmp_path / "Hello.java", "", cache=blocked) is None
