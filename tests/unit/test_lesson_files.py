"""Lesson files: the validator names every mistake with its line; checks are safe expressions
over the student's figures; the shipped lessons' checks pass and fail on figures as they should."""

from __future__ import annotations

import pytest

from workbench.config import catalog
from workbench.lessons import checks
from workbench.lessons.model import LessonError, load
from workbench.lessons.runner import judge

GOOD = '''title = "T"
goal = "G"
minutes = 3
[properties]
recordcount = 100

[[steps]]
id = "first"
action = "run"
workload = "workloadc"

[[steps.checks]]
expect = "first.throughput > 0"
pass = "yes"
fail = "no"
'''
TEXT = "# T\\n\\nIntro.\\n\\n## The first run {#first}\\n\\nRead this.\\n"


def write(tmp_path, toml: str, md: str | None = TEXT):
    path = tmp_path / "mine.toml"
    path.write_text(toml)
    if md is not None:
        (tmp_path / "mine.md").write_text(md.replace("\\n", "\n"))
    return path


def problems(tmp_path, toml: str, md: str | None = TEXT) -> list[str]:
    with pytest.raises(LessonError) as caught:
        load(write(tmp_path, toml, md))
    return caught.value.lines()


def test_a_good_lesson_reads_with_its_text(tmp_path):
    lesson = load(write(tmp_path, GOOD))
    assert lesson.title == "T" and lesson.intro == "Intro." and lesson.minutes == 3
    step = lesson.steps[0]
    assert (step.id, step.title, step.text, step.action) == ("first", "The first run", "Read this.", "run")
    assert lesson.properties == {"recordcount": "100"}


@pytest.mark.parametrize("change, line, says", [
    (('action = "run"', 'action = "fly"'), 9, "unknown action 'fly'"),
    (('workload = "workloadc"', 'workload = "nope"'), 10, "workload 'nope' not found"),
    (('expect = "first.throughput > 0"', 'expect = "first.speed > 0"'), 13, "unknown figure 'speed'"),
    (('expect = "first.throughput > 0"', 'expect = "later.throughput > 0"'), 13, "reads 'later', no step"),
    (('expect = "first.throughput > 0"', 'expect = "__import__(1) > 0"'), 13, "the functions are"),
    (('expect = "first.throughput > 0"', 'expect = "first.throughput"'), 13, "a check must compare"),
    (('minutes = 3', 'minutes = 40'), 3, "1 to 15 minutes"),
    (('fail = "no"', ''), 12, "needs both pass and fail"),
    (('id = "first"', 'id = "first"\ncolour = "red"'), 9, "unknown key 'colour'"),
    (('[properties]', 'x = [\n[properties]'), 5, "not valid TOML"),
])
def test_each_mistake_is_one_line_with_its_place_and_fix(tmp_path, change, line, says):
    found = problems(tmp_path, GOOD.replace(*change))
    assert len(found) == 1, found
    where, _, rest = found[0].partition(": ")
    assert where == f"{tmp_path / 'mine.toml'}:{line}", found
    assert says in rest and rest.endswith(")"), found  # the fix, in parentheses


def test_every_mistake_is_listed_not_only_the_first(tmp_path):
    broken = GOOD.replace('goal = "G"\n', "").replace('workload = "workloadc"', 'workload = "nope"')
    found = problems(tmp_path, broken, TEXT.replace("{#first}", "{#other}"))
    assert len(found) == 4, found
    assert any("no goal" in p for p in found) and any("'nope' not found" in p for p in found)
    assert any("has no text" in p for p in found) and any("{#other} has no step" in p for p in found)


def test_node_actions_need_a_started_cluster_and_a_declared_preset(tmp_path):
    toml = GOOD + '''
[[steps]]
id = "freeze"
action = "pause"
node = "node1"
'''
    found = problems(tmp_path, toml, TEXT + "## Freeze {#freeze}\\n")
    assert any(":19: step 'freeze': pause before any cluster was started" in p for p in found), found
    toml = GOOD + '''
[[steps]]
id = "up"
action = "start"
cluster = "cassandra-3"
'''
    found = problems(tmp_path, toml, TEXT + "## Up {#up}\\n")
    assert any("starts 'cassandra-3', which the lesson does not declare" in p for p in found), found


def test_checks_evaluate_over_figures_and_say_what_was_not_measured():
    expr = checks.parse("a.read.p99 >= 10 * a.read.service.p99 and not a.errors > 0")
    figures = {"a": {"read.p99": 50.0, "read.service.p99": 2.0, "errors": 0.0}}
    assert expr.evaluate(figures) is True
    figures["a"]["read.p99"] = 5.0
    assert expr.evaluate(figures) is False
    assert expr.values(figures) == {"a.read.p99": 5.0, "a.read.service.p99": 2.0, "a.errors": 0.0}
    with pytest.raises(checks.Unmeasured, match="a.update.p99 was not measured"):
        checks.parse("a.update.p99 < 1").evaluate(figures)
    assert checks.parse("min(a.throughput, 3) <= abs(-3)").evaluate({"a": {"throughput": 2.0}})
    for bad in ("a.throughput > 'x'", "a.throughput ** 2 > 1", "(lambda: 1)() > 0", "a[0] > 1",
                "a.throughput.real > 1", "a > 1"):
        with pytest.raises(checks.CheckSyntaxError):
            checks.parse(bad)


def shipped(name: str):
    return load(catalog.available("lessons")[name])


def verdicts(name: str, figures: dict) -> dict[str, bool | None]:
    lesson = shipped(name)
    return {c.expect.text: judge(c, figures).passed for s in lesson.steps for c in s.checks}


# Figures as a run of the lesson measured them (the engine's key counts, measurement.keys=true;
# 5-second runs of `workbench lesson run key-distributions`, 2026-11-27).
KEY_DISTRIBUTIONS = {
    "uniform": {"keys.hottest_0_1pct": 0.0022, "keys.hottest_1pct": 0.0160, "keys.hottest_10pct": 0.1400,
                "keys.chance_0_1pct": 0.0022, "keys.chance_1pct": 0.0161, "keys.chance_10pct": 0.1401,
                "keys.newest_1pct": 0.010, "keys.new": 0.0, "read.p99": 0.055},
    "zipfian": {"keys.hottest_0_1pct": 0.1216, "keys.hottest_1pct": 0.228, "keys.hottest_10pct": 0.378,
                "keys.chance_0_1pct": 0.0021, "keys.chance_1pct": 0.0157, "keys.chance_10pct": 0.138,
                "keys.newest_1pct": 0.009, "keys.new": 0.0, "read.p99": 0.051},
    "latest": {"keys.hottest_0_1pct": 0.0019, "keys.hottest_1pct": 0.016, "keys.hottest_10pct": 0.12,
               "keys.chance_0_1pct": 0.0022, "keys.chance_1pct": 0.0161, "keys.chance_10pct": 0.14,
               "keys.newest_1pct": 0.486, "keys.new": 0.861},
    "hotspot": {"keys.hottest_0_1pct": 0.0051, "keys.hottest_1pct": 0.047, "keys.hottest_10pct": 0.426,
                "keys.chance_0_1pct": 0.0017, "keys.chance_1pct": 0.0149, "keys.chance_10pct": 0.131,
                "keys.newest_1pct": 0.0025, "keys.new": 0.0},
}


def test_key_distributions_checks_pass_on_what_a_run_measures():
    assert set(verdicts("key-distributions", KEY_DISTRIBUTIONS).values()) == {True}


def test_key_distributions_checks_fail_when_the_distributions_do_not_differ():
    flat = {step: dict(KEY_DISTRIBUTIONS["uniform"]) for step in KEY_DISTRIBUTIONS}
    result = verdicts("key-distributions", flat)
    assert list(result.values()).count(True) == 1 and False in result.values()  # only uniform's holds


def test_key_distributions_no_longer_judges_latency_at_the_histograms_floor():
    """Its old last step compared 0.001 ms with 0.001 ms and could not fail (issue 44, defect 5)."""
    lesson = shipped("key-distributions")
    assert not any(".read." in ref or ref.endswith(".p99") for s in lesson.steps for c in s.checks
                   for ref in c.expect.values({}))


def test_every_shipped_lesson_reads_without_a_mistake():
    names = catalog.available("lessons")
    assert "key-distributions" in names
    for name in names:
        lesson = shipped(name)
        assert lesson.minutes <= 15 and lesson.steps, name
        assert all(step.text for step in lesson.steps), name


# As measured on one Cassandra node by `workbench lesson run coordinated-omission` (2026-11-25).
COORDINATED_OMISSION = {
    "steady": {"read.response.p99": 4.86, "read.service.p99": 3.73},
    "frozen": {"read.response.p99": 3844.0, "read.service.p99": 2.73, "faults": 2.0},
    "closed": {"read.p99": 1.91},
}


def test_coordinated_omission_checks_pass_on_what_a_run_measures():
    assert set(verdicts("coordinated-omission", COORDINATED_OMISSION).values()) == {True}


def test_coordinated_omission_checks_fail_when_the_freeze_did_not_happen():
    calm = {"steady": COORDINATED_OMISSION["steady"],
            "frozen": {"read.response.p99": 5.1, "read.service.p99": 3.9, "faults": 0.0},
            "closed": {"read.p99": 2.0}}
    result = verdicts("coordinated-omission", calm)
    assert list(result.values()) == [True, False, False, False, False]


# As measured on three Cassandra nodes by `workbench lesson run consistency-and-failure` (2026-11-25).
CONSISTENCY = {
    "load": {"errors": 0.0}, "healthy": {"errors": 0.0},
    "one": {"errors": 0.0, "operations": 3974.0}, "quorum": {"errors": 2741.0, "operations": 3943.0},
    "all": {"errors": 2747.0, "operations": 3989.0}, "recovered": {"errors": 0.0, "operations": 2232.0},
}


def test_consistency_and_failure_checks_pass_on_what_a_run_measures():
    assert set(verdicts("consistency-and-failure", CONSISTENCY).values()) == {True}


def test_consistency_and_failure_checks_fail_when_the_node_never_died():
    alive = {**CONSISTENCY, "quorum": {"errors": 0.0, "operations": 3943.0},
             "all": {"errors": 0.0, "operations": 3989.0}, "one": {"errors": 900.0, "operations": 3974.0}}
    result = verdicts("consistency-and-failure", alive)
    assert [text.split(".")[0] for text, ok in result.items() if not ok] == ["one", "quorum", "all"]


# As measured by `workbench lesson run write-path` (2026-11-25).
WRITE_PATH = {
    "periodic": {"update.p50": 1.6, "throughput": 7814.0},
    "batch": {"update.p50": 3.62, "throughput": 3447.0},
    "wal": {"update.p50": 1.27}, "skipwal": {"update.p50": 0.533},
}


def test_write_path_checks_pass_on_what_a_run_measures():
    assert set(verdicts("write-path", WRITE_PATH).values()) == {True}


def test_write_path_checks_fail_when_durability_costs_nothing():
    free = {"periodic": WRITE_PATH["periodic"], "batch": WRITE_PATH["periodic"],
            "wal": {"update.p50": 0.5}, "skipwal": {"update.p50": 0.6}}
    assert set(verdicts("write-path", free).values()) == {False}


# As measured on one Cassandra node by `workbench lesson run saturation` (2026-11-25).
SATURATION = {
    "max": {"errors": 0.0, "throughput": 12316.0},
    "r25": {"read.p99": 13.2},
    "r50": {"in_flight": 11.0, "throughput": 6140.0, "response_mean": 2.08, "read.p99": 53.6},
    "r75": {"throughput": 9192.0, "target": 9237.0, "read.p99": 70.5},
    "r300": {"throughput": 17121.0, "target": 36949.0, "read.p99": 4256.0},
}


def test_saturation_checks_pass_on_what_a_run_measures():
    assert set(verdicts("saturation", SATURATION).values()) == {True}


def test_saturation_checks_fail_when_the_node_never_saturates_and_littles_law_is_off():
    never = {**SATURATION, "r300": {"throughput": 36000.0, "target": 36949.0, "read.p99": 60.0},
             "r50": {**SATURATION["r50"], "in_flight": 40.0}}
    result = verdicts("saturation", never)
    failed = [text.split(".")[0].split("(")[-1] for text, ok in result.items() if not ok]
    assert failed == ["r50", "r300", "r300"]


def test_a_rate_is_a_share_of_an_earlier_run_and_is_checked(tmp_path):
    lesson = shipped("saturation")
    assert (lesson.step("r150").rate, lesson.step("r150").rate_of) == (1.5, "max")
    toml = GOOD + '''
[[steps]]
id = "half"
action = "run"
workload = "workloadc"
rate = 0.5
rate_of = "later"
'''
    found = problems(tmp_path, toml, TEXT + "## Half {#half}\\n")
    assert any("rate_of = 'later' is not an earlier load or run" in p for p in found), found


# As measured by `workbench lesson run cassandra-vs-hbase` (2026-11-25): ops/s of each run.
C_B, H_B = [7293.0, 7685.0, 11305.0], [11835.0, 12786.0, 14164.0]
C_A, H_A = [9763.0, 17805.0, 18128.0], [14888.0, 12835.0, 12365.0]


def repeated(values: list[float], **more: float) -> dict:
    return {"throughput": sum(values) / len(values), "reps.throughput": values, **more}


def test_welch_p_compares_the_runs_of_repeated_steps_and_says_when_it_cannot():
    figures = {"a": repeated([100.0, 101.0, 99.0]), "b": repeated([200.0, 202.0, 198.0]),
               "c": {"throughput": 150.0}}
    assert checks.parse("welch_p(a.throughput, b.throughput) < 0.001").evaluate(figures)
    assert not checks.parse("welch_p(a.throughput, a.throughput) < 0.05").evaluate(figures)
    with pytest.raises(checks.Unmeasured, match="c.throughput has no repetitions"):
        checks.parse("welch_p(a.throughput, c.throughput) < 0.05").evaluate(figures)
    with pytest.raises(checks.CheckSyntaxError, match="compares two figures"):
        checks.parse("welch_p(a.throughput, 3) < 0.05")


def test_cassandra_vs_hbase_checks_read_the_welch_test_both_ways():
    figures = {"c_b": repeated(C_B, **{"update.p50": 2.12}), "h_b": repeated(H_B, **{"update.p50": 1.46}),
               "c_a": repeated(C_A, **{"update.p50": 0.86}), "h_a": repeated(H_A, **{"update.p50": 1.24})}
    result = verdicts("cassandra-vs-hbase", figures)
    assert list(result.values()) == [False, False, True]  # runs that varied too much to tell (p 0.06, 0.57)
    steady = {**figures, "c_b": repeated([8000.0, 8100.0, 7950.0], **{"update.p50": 2.0}),
              "c_a": repeated([18000.0, 18100.0, 17900.0], **{"update.p50": 0.9})}
    assert list(verdicts("cassandra-vs-hbase", steady).values()) == [True, True, True]


def test_welch_p_on_a_step_that_runs_once_is_refused_in_the_file(tmp_path):
    toml = GOOD + '''
[[steps]]
id = "second"
action = "run"
workload = "workloadc"
repeat = 3

[[steps.checks]]
expect = "welch_p(first.throughput, second.throughput) < 0.05"
pass = "yes"
fail = "no"
'''
    found = problems(tmp_path, toml, TEXT + "## Second {#second}\\n")
    assert any("step 'first' runs once (add repeat = 3 to step 'first')" in p for p in found), found


def test_a_teachers_p_shortens_the_runs_not_what_a_step_sets_itself():
    from workbench.drive.session import Session
    from workbench.lessons.runner import LessonRunner

    lesson = shipped("consistency-and-failure")
    runner = LessonRunner(lesson, Session(store=False), student="t", overrides={"maxexecutiontime": "3"})
    load_props = runner.overrides(lesson.step("load"))
    run_props = runner.overrides(lesson.step("healthy"))
    assert "maxexecutiontime=0" in load_props and "maxexecutiontime=3" not in load_props
    assert "maxexecutiontime=3" in run_props and "cassandra.readconsistencylevel=QUORUM" in run_props


def test_a_teachers_step_p_wins_over_that_steps_own_settings_only():
    from workbench.drive.session import Session
    from workbench.errors import WorkbenchError
    from workbench.lessons.runner import LessonRunner

    lesson = shipped("cassandra-vs-hbase")
    runner = LessonRunner(lesson, Session(store=False), student="t",
                          overrides={"maxexecutiontime": "3", "c_warm:maxexecutiontime": "5"})
    assert "maxexecutiontime=5" in runner.overrides(lesson.step("c_warm"))
    assert "maxexecutiontime=30" in runner.overrides(lesson.step("h_warm"))  # its own, as shipped
    assert "maxexecutiontime=3" in runner.overrides(lesson.step("c_b"))
    assert "maxexecutiontime=0" in runner.overrides(lesson.step("c_load"))
    with pytest.raises(WorkbenchError, match="no step 'warm'"):
        LessonRunner(lesson, Session(store=False), student="t", overrides={"warm:maxexecutiontime": "5"})


# Figures a correct run of `workbench lesson run hot-partitions` gives (nodes.*: requests per node,
# the expected shares with the preset's tokens and 10,000 records; regions.*: the loads at 1,000
# inserts a second over 4 regions), and what a wrong engine or client would give instead.
HOT = {
    "load": {"errors": 0.0, "nodes.count": 3.0, "nodes.max_share": 0.337},
    "uniform": {"nodes.count": 3.0, "nodes.max_share": 0.339},
    "zipfian": {"keys.hottest_1pct": 0.229, "nodes.max_share": 0.353},
    "celebrity": {"nodes.max_share": 0.448},
    "latest": {"keys.newest_1pct": 0.49, "nodes.max_share": 0.346, "nodes.interval_max_share": 0.37},
    "ordered": {"regions.count": 4.0, "regions.spread": 1.0, "regions.interval_max_share": 0.88},
    "hashed": {"regions.count": 4.0, "regions.spread": 1.01, "regions.interval_max_share": 0.27},
}


def hot_verdicts(**changed: dict) -> dict[str, list[bool | None]]:
    figures = {step: {**values, **changed.get(step, {})} for step, values in HOT.items()}
    lesson = shipped("hot-partitions")
    return {s.id: [judge(c, figures).passed for c in s.checks] for s in lesson.steps if s.checks}


def test_hot_partitions_checks_pass_on_what_a_correct_run_gives():
    assert hot_verdicts() == {"load": [True], "uniform": [True], "zipfian": [True], "celebrity": [True],
                              "latest": [True, True], "ordered": [True, True], "hashed": [True]}


def test_hot_partitions_checks_fail_for_what_they_are_about_and_only_that():
    # every key equally likely in every run: zipfian's, the celebrity's and latest's checks fail
    flat = {step: {"keys.hottest_1pct": 0.016, "keys.newest_1pct": 0.01, "nodes.max_share": 0.339}
            for step in ("zipfian", "celebrity", "latest")}
    found = hot_verdicts(**flat)
    assert (found["zipfian"], found["celebrity"], found["latest"]) == ([False], [False], [False, True])
    assert found["uniform"] == [True] and found["ordered"] == [True, True]
    # a client that sends requests round robin, not to the key's owner: only the celebrity shows it
    found = hot_verdicts(celebrity={"nodes.max_share": 0.334})
    assert [s for s, v in found.items() if v != [True] * len(v)] == ["celebrity"]
    # zipfian keys that made a hot node, or a hot set that stuck to one node in each second
    assert hot_verdicts(zipfian={"nodes.max_share": 0.45})["zipfian"] == [False]
    assert hot_verdicts(latest={"nodes.interval_max_share": 0.7})["latest"] == [True, False]
    # everything sent to one node: the load's and uniform's checks fail
    one = {"nodes.count": 1.0, "nodes.max_share": 1.0}
    found = hot_verdicts(load=one, uniform=one)
    assert (found["load"], found["uniform"]) == ([False], [False])
    # the two HBase loads alike (insertorder ignored, or the table not pre-split)
    found = hot_verdicts(ordered=HOT["hashed"])
    assert (found["ordered"], found["hashed"]) == ([True, False], [False])
    found = hot_verdicts(hashed=HOT["ordered"])
    assert (found["ordered"], found["hashed"]) == ([True, True], [False])
    unsplit = {"regions.count": 1.0, "regions.spread": 1.0, "regions.interval_max_share": 1.0}
    assert hot_verdicts(ordered=unsplit, hashed=unsplit)["ordered"] == [False, True]


def test_hot_partitions_without_per_region_counts_is_not_judged():
    lesson = shipped("hot-partitions")
    figures = {step: {k: v for k, v in values.items() if not k.startswith("regions.")}
               for step, values in HOT.items()}
    verdict = judge(lesson.step("ordered").checks[0], figures)
    assert verdict.passed is None and "hbase.client=native" in verdict.sentence


def test_node_and_region_figures_are_shares_of_the_requests_each_interval_counted():
    from workbench.lessons.figures import place_figures, run_figures
    from workbench.results.model import Interval, RunResult

    intervals = [Interval(1.0, 1.0, 100, 100, nodes={"a:1": [60, 0], "b:1": [40, 2]},
                          regions={"t,,1.x.": [100, 0]}),
                 Interval(2.0, 1.0, 100, 200, nodes={"a:1": [10, 0], "b:1": [90, 0], "c:1": [0, 1]},
                          regions={"t,,1.x.": [5, 0], "t,user5,1.y.": [95, 0]})]
    result = RunResult("run", "cassandra", 2000, 200, 100.0, intervals=intervals)
    nodes = place_figures(result, "nodes")
    # c served nothing: not a node that got requests; b's 130 of 200, a's 70
    assert nodes == pytest.approx({"nodes.count": 2, "nodes.max_share": 0.65, "nodes.min_share": 0.35,
                                   "nodes.spread": 130 / 70, "nodes.interval_max_share": (60 + 90) / 200})
    regions = place_figures(result, "regions")
    assert regions["regions.count"] == 2 and regions["regions.interval_max_share"] == (100 + 95) / 200
    assert regions["regions.max_share"] == 0.525 and result.region_totals()["t,user5,1.y."] == (95, 0)
    figures = run_figures(result)
    assert {k: figures[k] for k in nodes} == nodes and set(regions) < set(figures)
    assert set(nodes) | set(regions) <= set(checks.figure_paths())
    assert place_figures(RunResult("run", "memory", 1000, 10, 10.0, intervals=[Interval(1.0, 1.0, 10, 10)]),
                         "nodes") == {}


def test_a_runs_line_names_what_failed_as_the_client_named_it():
    from workbench.lessons.runner import run_line

    figures = {"throughput": 494.4, "operations": 44538, "errors": 3, "read.p99": 3865.0}
    line = run_line(figures, {"WriteTimeout": 2, "ReadTimeout": 1}, 4)
    assert line == ("494 ops/s, 44,538 operations, 3 errors (WriteTimeout 2, ReadTimeout 1), "
                    "read p99 3,865 ms (run 4)")
    # no error: no kinds (a binding may count kinds of what it retried and then served)
    assert run_line({**figures, "errors": 0}, {"WriteTimeout": 2}, None) == \
        "494 ops/s, 44,538 operations, 0 errors, read p99 3,865 ms"


def test_the_elasticity_lessons_join_is_judged_apart_from_its_errors():
    """A join that ended, with one server timeout in 44,538 operations on a loaded machine, passes
    both (CI, 2026-11-27); a join that did not end fails the first alone, many errors the second."""
    lesson = shipped("elasticity")
    grow = next(s for s in lesson.steps if s.id == "grow")
    figures = {"join.seconds": 61.2, "errors": 1, "operations": 44538,
               "join.during.p99": 0.46, "join.before.p99": 0.215}
    assert [judge(c, {"grow": figures}).passed for c in grow.checks] == [True, True, True]
    assert [judge(c, {"grow": {**figures, "join.seconds": None, "errors": 500}}).passed
            for c in grow.checks][:2] == [None, False]
