"""Rules a plugin adds to the fan-out rubric through ``swarm_rubric_rules``: reported in the
verdict and the score, counted in ``resolved`` when required, and every way a plugin can get it
wrong named in a ``PluginError`` or a failed rule.  Model-free."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fanout_records import Run, honest, scored, scores

from swarm import (
    PluginCatalog,
    PluginError,
    RubricRule,
    RuleFailure,
    RuleResult,
    hookimpl,
    plugin_catalog,
)
from swarm.plugins.scorers.fanout import (
    Evidence,
    Fixture,
    judge_store,
    load_fixture,
    plugin_rules,
)

FIXTURE = load_fixture("json-events")
SHARD = FIXTURE.shards[1]


def answer_not_in_task(fixture: Fixture, evidence: Evidence) -> RuleResult:
    """No child of the lead was handed its shard's answer in its task."""
    failures = []
    for shard in fixture.shards:
        for child in evidence.children:
            if shard.worker in child.requested and re.search(
                rf"\b{shard.expected}\b", child.task or ""
            ):
                failures.append(
                    RuleFailure(
                        reason="its task holds the answer", shard=shard.file, member=child.member
                    )
                )
    return RuleResult(
        passed=not failures, failures=failures, details={"checked": len(evidence.children)}
    )


class Rules:
    """A plugin giving ``rules`` to the ``fanout`` rubric only."""

    def __init__(self, *rules: RubricRule) -> None:
        self.rules = list(rules)

    @hookimpl
    def swarm_rubric_rules(self, rubric: str) -> list[RubricRule] | None:
        return self.rules if rubric == "fanout" else None


class Returns:
    """A plugin whose hook returns ``value`` (or raises it)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    @hookimpl
    def swarm_rubric_rules(self, rubric: str) -> Any:
        if isinstance(self.value, BaseException):
            raise self.value
        return self.value


@pytest.fixture
def catalog() -> PluginCatalog:
    return PluginCatalog.load(load_entrypoints=False)


def answer_in_task() -> Run:
    """An honest run, except that one child's task holds its shard's answer."""
    run = honest(FIXTURE)
    spawn = next(e for e in run.spawns if e["member"] == SHARD.worker)
    spawn["task"] = f"Reply {SHARD.expected} to your parent."
    return run


def rule(
    check: Any = answer_not_in_task, name: str = "answer_not_in_task", required: bool = True
) -> RubricRule:
    return RubricRule(name=name, check=check, required=required)


def test_a_required_plugin_rule_is_reported_and_counts_in_resolved(catalog: PluginCatalog) -> None:
    catalog.pm.register(Rules(rule()), name="proof")
    verdict = judge_store(FIXTURE, honest(FIXTURE).store(), catalog=catalog)
    assert verdict.value()["answer_not_in_task"] is True
    assert verdict.resolved
    cheat = judge_store(FIXTURE, answer_in_task().store(), catalog=catalog)
    assert cheat.value() == {
        "coverage": True,
        "delegation": True,
        "dedup": True,
        "receipts": True,
        "provenance": True,
        "proof_of_work": False,
        "answer_not_in_task": False,
        "resolved": False,
        "unverified": False,
    }
    judged = cheat.rule("answer_not_in_task")
    assert (judged.plugin, judged.required) == ("proof", True)
    assert cheat.metadata()["rules"]["answer_not_in_task"] == {
        "passed": False,
        "required": True,
        "plugin": "proof",
        "failures": [
            {"reason": "its task holds the answer", "shard": SHARD.file, "member": SHARD.worker}
        ],
        "details": {"checked": 8},
    }
    assert "answer_not_in_task: FAIL" in cheat.explanation().splitlines()


def test_a_rule_that_is_not_required_is_reported_only(catalog: PluginCatalog) -> None:
    catalog.pm.register(Rules(rule(required=False)), name="proof")
    verdict = judge_store(FIXTURE, answer_in_task().store(), catalog=catalog)
    assert verdict.value()["answer_not_in_task"] is False
    # only the rubric's own proof_of_work (which catches the answer in the task too) counts
    assert [r.name for r in verdict.rules if r.required and not r.passed] == ["proof_of_work"]
    assert "answer_not_in_task (not required): FAIL" in verdict.explanation().splitlines()


def test_plugin_rules_come_sorted_by_name_after_the_rubrics_own(catalog: PluginCatalog) -> None:
    passing = RuleResult(passed=True)
    catalog.pm.register(Rules(rule(lambda f, e: passing, name="zeta")), name="z")
    catalog.pm.register(Rules(rule(lambda f, e: passing, name="alpha")), name="a")
    verdict = judge_store(FIXTURE, honest(FIXTURE).store(), catalog=catalog)
    assert [r.name for r in verdict.rules][6:] == ["alpha", "zeta"]


def explode(fixture: Fixture, evidence: Evidence) -> RuleResult:
    raise RuntimeError("shard files unreadable")


def exits(fixture: Fixture, evidence: Evidence) -> RuleResult:
    raise SystemExit(2)


@pytest.mark.parametrize(
    ("check", "failure"),
    [
        (
            explode,
            "plugin 'proof': rule 'answer_not_in_task' raised RuntimeError('shard files unreadable')",
        ),
        (
            lambda f, e: {"passed": True},
            "plugin 'proof': rule 'answer_not_in_task' returned dict; expected a RuleResult",
        ),
        (  # not an Exception: it ended the scorer's process before
            exits,
            "plugin 'proof': rule 'answer_not_in_task' raised SystemExit(2)",
        ),
    ],
)
def test_a_rule_check_that_raises_or_returns_the_wrong_type_fails_naming_the_plugin(
    catalog: PluginCatalog, check: Any, failure: str
) -> None:
    catalog.pm.register(Rules(rule(check)), name="proof")
    verdict = judge_store(FIXTURE, honest(FIXTURE).store(), catalog=catalog)
    assert verdict.rule("answer_not_in_task").result.failures == (failure,)
    assert not verdict.resolved
    # every other rule is still judged
    assert verdict.value()["coverage"] is True


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"rules": []}, "returned dict {'rules': []}; expected a list of RubricRule or None"),
        (["coverage"], "returned str 'coverage' at [0]; expected a RubricRule"),
        (ValueError("no config"), "raised ValueError('no config')"),
        (SystemExit("bye"), "raised SystemExit('bye')"),
        ([rule(name="two words")], "returned a rule with a bad name 'two words'"),
    ],
)
def test_a_bad_hook_result_is_a_plugin_error_naming_it(
    catalog: PluginCatalog, value: Any, message: str
) -> None:
    catalog.pm.register(Returns(value), name="faulty")
    with pytest.raises(PluginError) as caught:
        catalog.rubric_rules("fanout")
    assert (caught.value.plugin, caught.value.hook) == ("faulty", "swarm_rubric_rules")
    assert caught.value.detail == message


def test_a_rule_name_given_twice_names_both_plugins(catalog: PluginCatalog) -> None:
    catalog.pm.register(Rules(rule()), name="first")
    catalog.pm.register(Rules(rule()), name="second")
    with pytest.raises(
        PluginError, match="given twice: by plugin '(first|second)' and by plugin '(first|second)'"
    ):
        catalog.rubric_rules("fanout")


@pytest.mark.parametrize("name", ["coverage", "provenance", "efficiency", "resolved"])
def test_a_rule_may_not_take_a_name_of_the_rubrics_own(catalog: PluginCatalog, name: str) -> None:
    catalog.pm.register(Rules(rule(name=name)), name="shadow")
    with pytest.raises(
        PluginError, match=f"rule '{name}' has the name of one of the fanout rubric's own"
    ):
        plugin_rules(catalog)


def test_rules_for_another_rubric_are_not_given(catalog: PluginCatalog) -> None:
    catalog.pm.register(Rules(rule()), name="proof")
    assert catalog.rubric_rules("other") == []
    assert [(p, r.name) for p, r in catalog.rubric_rules("fanout")] == [
        ("proof", "answer_not_in_task")
    ]


def test_a_rules_plugin_is_not_a_run_time_plugin(catalog: PluginCatalog) -> None:
    catalog.pm.register(Rules(rule()), name="proof")
    assert "proof" not in {name for name, _ in catalog.runtime_plugins()}


def test_rule_records_check_their_fields() -> None:
    with pytest.raises(TypeError, match="RuleResult.passed: expected True or False, got 1"):
        RuleResult(passed=1)  # type: ignore[arg-type]
    with pytest.raises(
        TypeError, match=r"RuleResult.failures\[1\]: expected a RuleFailure or a string, got 3"
    ):
        RuleResult(passed=False, failures=["x", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="RubricRule.check: expected a callable, got 'no'"):
        RubricRule(name="x", check="no")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="RubricRule.required: expected True or False, got 'yes'"):
        RubricRule(name="x", check=answer_not_in_task, required="yes")  # type: ignore[arg-type]


@pytest.fixture
def installed_rule() -> Iterator[None]:
    """The rule's plugin on the process-wide catalog (what the Inspect scorer uses)."""
    pm = plugin_catalog().pm
    pm.register(Rules(rule()), name="proof-installed")
    yield
    pm.unregister(name="proof-installed")


@pytest.mark.usefixtures("installed_rule")
def test_the_inspect_scorer_reports_plugin_rules(log_dir: Path) -> None:
    log = scored(log_dir, {"in-task": {"records": answer_in_task().store()}})
    score = scores(log)["in-task"]
    assert isinstance(score.value, dict)
    assert (score.value["answer_not_in_task"], score.value["resolved"]) == (False, False)
    assert (score.metadata or {})["rules"]["answer_not_in_task"]["plugin"] == "proof-installed"
