"""Key names and field values as YCSB's Java client builds them (config/keys.py, core/values.py).

Golden values were computed with YCSB's Utils.fnvhash64 and CoreWorkload.buildDeterministicValue
in Java 17.
"""

from __future__ import annotations

import random

import pytest

from workbench.config.keys import build_key_name, fnvhash64, key_builder
from workbench.config.properties import merge
from workbench.config.spec import build_spec
from workbench.core.generators.lengths import field_length_generator
from workbench.core.values import ValueMaker, deterministic_value, random_value, verify_row

JAVA_FNVHASH64 = {
    0: 6284781860667377211,
    1: 8517097267634966620,
    2: 1820151046732198393,
    255: 8064062821143829734,
    256: 2056600594528442646,
    999: 2071219101098386137,
    1000: 5952875239596136740,
    65535: 8476454546330126581,
    2**31 - 1: 627943977067101855,
    2**31: 5860980763039959109,
    2**40: 6908947124047430886,
    123456789012345: 8250324937088274510,
    10_000_000_000: 1201321332300452516,
    2**63 - 1: 8289549613075766851,
}


def fnvhash64_loop(value: int) -> int:
    """FNV-1a 64 written the plain way, one byte per iteration, as in YCSB's Utils."""
    h = 0xCBF29CE484222325
    for _ in range(8):
        octet = value & 0xFF
        value >>= 8
        h ^= octet
        h = (h * 1099511628211) % 2**64
    signed = h - 2**64 if h >= 2**63 else h
    return abs(signed)


@pytest.mark.parametrize(("keynum", "expected"), sorted(JAVA_FNVHASH64.items()))
def test_fnvhash64_matches_java(keynum: int, expected: int) -> None:
    assert fnvhash64(keynum) == expected


def test_fnvhash64_matches_a_straightforward_loop_on_many_random_inputs() -> None:
    rng = random.Random(20240601)
    inputs = [rng.getrandbits(bits) for bits in (8, 16, 31, 32, 40, 63) for _ in range(500)]
    inputs += list(range(2000)) + [2**40 - 1, 2**40, 2**40 + 1]  # both sides of the short path
    for value in inputs:
        assert fnvhash64(value) == fnvhash64_loop(value), value


def test_golden_key_names() -> None:
    assert build_key_name(0) == "user6284781860667377211"
    assert build_key_name(1) == "user8517097267634966620"
    assert build_key_name(2) == "user1820151046732198393"


def test_hashed_keys_are_not_nearly_sorted_like_go_ycsbs() -> None:
    names = [build_key_name(n) for n in range(100)]
    assert names != sorted(names)
    assert len(set(names)) == 100


def test_ordered_inserts_use_the_number_itself() -> None:
    assert build_key_name(0, ordered=True) == "user0"
    assert build_key_name(42, ordered=True) == "user42"


def test_zeropadding_pads_the_number_to_that_many_digits() -> None:
    assert build_key_name(42, zeropadding=5, ordered=True) == "user00042"
    assert build_key_name(123456, zeropadding=5, ordered=True) == "user123456"
    assert build_key_name(0, zeropadding=25) == "user" + "000000" + "6284781860667377211"
    assert build_key_name(0, zeropadding=19) == "user6284781860667377211"
    # Padding makes ordered key names sort like their numbers.
    padded = [build_key_name(n, zeropadding=4, ordered=True) for n in (9, 10, 100, 999)]
    assert padded == sorted(padded)


@pytest.mark.parametrize("zeropadding", [0, 1, 3, 20, 25])
@pytest.mark.parametrize("ordered", [False, True])
def test_the_fast_key_builder_agrees_with_build_key_name(zeropadding: int, ordered: bool) -> None:
    build = key_builder(zeropadding, ordered)
    for keynum in [0, 1, 7, 999, 10**6, 2**31 - 1, 10**12]:
        assert build(keynum) == build_key_name(keynum, zeropadding, ordered)


# ---- values ------------------------------------------------------------------------------------

GOLDEN_VALUE = (
    "user6284781860667377211:field0:-56807877:2032869390:-165488160:1762371712:-169193395:-1039977118:-10"
)


def test_deterministic_value_matches_java() -> None:
    value = deterministic_value("user6284781860667377211", "field0", 100)
    assert value == GOLDEN_VALUE
    assert len(value) == 100


def test_deterministic_value_more_java_goldens() -> None:
    assert deterministic_value("user1", "field9", 37) == "user1:field9:-1268390937:701431326:16"
    long_value = deterministic_value("user8517097267634966620", "field3", 250)
    assert long_value.startswith("user8517097267634966620:field3:-557952730:1605728524:-1940464278:")
    assert long_value.endswith(":279039056:954578523:670750109:662917760:-918044010:-2021326")
    assert len(long_value) == 250


def test_deterministic_value_shorter_than_key_and_field_is_truncated() -> None:
    assert deterministic_value("user8517097267634966620", "field3", 10) == "user851709"


def test_deterministic_values_depend_on_key_and_field() -> None:
    a = deterministic_value("user1", "field0", 100)
    assert a == deterministic_value("user1", "field0", 100)
    assert a != deterministic_value("user2", "field0", 100)
    assert a != deterministic_value("user1", "field1", 100)


def test_verify_row() -> None:
    key = "user6284781860667377211"
    row = {f: deterministic_value(key, f, 100) for f in ("field0", "field1", "field2")}
    assert verify_row(key, row, 100) is True
    corrupted = dict(row, field1=row["field1"][:-1] + "X")
    assert verify_row(key, corrupted, 100) is False
    assert verify_row("user1", row, 100) is False  # another key's values
    assert verify_row(key, row, 99) is False  # other length
    assert verify_row(key, {}, 100) is False
    assert verify_row(key, None, 100) is False


@pytest.mark.parametrize("length", [0, 1, 100, 10_000])
def test_random_values_are_printable_ascii_of_the_right_length(length: int) -> None:
    value = random_value(random.Random(length), length)
    assert len(value) == length
    assert all(32 <= ord(ch) <= 127 for ch in value)


def test_random_values_use_many_characters_and_depend_on_the_seed() -> None:
    value = random_value(random.Random(1), 10_000)
    assert len(set(value)) > 80
    assert value == random_value(random.Random(1), 10_000)
    assert value != random_value(random.Random(2), 10_000)


def spec_of(*overrides: str):
    return build_spec(merge([], list(overrides)), "run")


def maker(*overrides: str, seed: int = 5) -> ValueMaker:
    spec = spec_of(*overrides)
    rng = random.Random(seed)
    return ValueMaker(rng, spec, field_length_generator(rng, spec))


def test_all_fields_has_every_field_at_the_constant_length() -> None:
    row = maker().all_fields("user1")
    assert list(row) == [f"field{i}" for i in range(10)]
    assert all(len(v) == 100 for v in row.values())
    assert all(32 <= ord(ch) <= 127 for v in row.values() for ch in v)
    assert len(set(row.values())) == 10  # not one value repeated


def test_all_fields_with_other_count_prefix_and_length() -> None:
    row = maker("fieldcount=3", "fieldlength=7", "fieldnameprefix=col").all_fields("k")
    assert {name: len(v) for name, v in row.items()} == {"col0": 7, "col1": 7, "col2": 7}


def test_uniform_field_lengths_stay_within_min_and_max() -> None:
    values = maker("fieldlengthdistribution=uniform", "minfieldlength=5", "fieldlength=20")
    lengths = {len(v) for _ in range(200) for v in values.all_fields("k").values()}
    assert min(lengths) == 5 and max(lengths) == 20
    assert len(lengths) == 16


def test_dataintegrity_values_verify() -> None:
    values = maker("dataintegrity=true")
    key = build_key_name(7)
    row = values.all_fields(key)
    assert row["field0"] == deterministic_value(key, "field0", 100)
    assert verify_row(key, row, 100)
    one = values.one_field(key, "field4")
    assert one == {"field4": deterministic_value(key, "field4", 100)}


def test_one_field_writes_just_that_field() -> None:
    one = maker().one_field("user1", "field3")
    assert list(one) == ["field3"] and len(one["field3"]) == 100
