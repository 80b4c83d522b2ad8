"""Values of the fan-out rubric's verdict and scorer: the verdict's value, metadata and
explanation (five failures per rule, singular and plural, the records skipped), plugins'
rules (sorted by name, broken ones, reserved names), the scorer's arguments, its unscorable
and verdict scores, re-scoring (in process, with ``inspect_ai.score``: unchanged records,
another fixture on purpose or not, changed records), and in a running sample (the default
spawn budget, an artifact never written, no sandbox, the lead's own sandbox).  Model-free but
for a few real Inspect evals of synthetic records (``fanout_records``) and one swarm of one
member on the scripted model.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fanout_records import LEAD, Run, honest, replay_records, scored, scores
from inspect_ai import Task, score
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.event import ScoreEvent
from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalSample, EvalSpec
from inspect_ai.model import get_model
from inspect_ai.scorer import Score

from swarm import (
    ConfigError,
    PluginCatalog,
    PluginError,
    RubricRule,
    RuleFailure,
    RuleResult,
    controller,
    hookimpl,
    member,
    plugin_catalog,
    swarm,
)
from swarm.plugins.scorers.fanout import (
    RescoreRefused,
    Verdict,
    fanout_rubric,
    judge_store,
    load_fixture,
    manifest_digest,
    plugin_rules,
    read_evidence,
    records_digests,
    unscorable_score,
    verdict_score,
)
from swarm.plugins.scorers.fanout._proof import isolation

FIXTURE = load_fixture("json-events")
SHARDS = FIXTURE.shards
W = [s.worker for s in SHARDS]
F = [s.file for s in SHARDS]
E = [s.expected for s in SHARDS]
OWN_RULES = ["coverage", "delegation", "dedup", "receipts", "provenance", "proof_of_work"]
DIGEST = manifest_digest(FIXTURE)


def catalog() -> PluginCatalog:
    return PluginCatalog.load(load_entrypoints=False)


def judged(run: Run | dict[str, Any], **options: Any) -> Verdict:
    store = run.store() if isinstance(run, Run) else run
    options.setdefault("catalog", catalog())
    return judge_store(FIXTURE, store, **options)


def outcome(verdict: Verdict, rule: str) -> tuple[bool, list[RuleFailure | str], dict[str, Any]]:
    """A rule's verdict, failures and details."""
    result = verdict.rule(rule).result
    return result.passed, list(result.failures), dict(result.details)


def spawning(total: int) -> Run:
    """An honest run (8 children, one per shard) with helpers spawned after the children ended,
    ``total`` depth-1 spawns in all; plus a refused request and a depth-2 spawn, neither of
    which is a spawn that counts."""
    run = honest(FIXTURE, finish=False)
    for index in range(total - len(SHARDS)):
        run.spawn(f"helper-{index + 1}")
    run.refused("helper-x", reason="max_children")
    run.spawn("deep", parent=W[0], depth=2)
    run.finish()
    return run


def over_budget(total: int, factor: int) -> RuleFailure:
    return RuleFailure(
        reason=f"{total} depth-1 spawns, more than the budget of {factor * 8} ({factor} x 8 shards)"
    )


# -- the verdict: value, metadata, explanation -------------------------------------------------


class Rules:
    """A plugin adding ``rules`` to the fan-out rubric."""

    def __init__(self, *rules: RubricRule) -> None:
        self.rules = list(rules)

    @hookimpl
    def swarm_rubric_rules(self, rubric: str) -> list[RubricRule] | None:
        return self.rules if rubric == "fanout" else None


def result(passed: bool, *failures: RuleFailure | str, **details: Any) -> Any:
    return lambda fixture, evidence: RuleResult(passed=passed, failures=failures, details=details)


def sees(fixture: Any, evidence: Any) -> RuleResult:
    """Passes when it is given the fixture and the evidence; its details are not JSON."""
    seen = (fixture.name, evidence.lead)
    return RuleResult(
        passed=seen == ("json-events", LEAD), details={"set": {3}, "tuple": (1, 2), "seen": seen}
    )


def plugged() -> PluginCatalog:
    """Four rules from two plugins, whose names sort the other way round from their rules'."""
    found = catalog()
    five = result(
        False,
        RuleFailure(reason="r1", shard="s", member="m"),
        RuleFailure(reason="r2", shard="s"),
        RuleFailure(reason="r3", member="m"),
        "r4",
        RuleFailure(reason="r5"),
    )
    six = result(False, *(f"f{i}" for i in range(1, 7)), why="six of them")
    found.pm.register(
        Rules(
            RubricRule(name="zeta", check=sees, required=True),
            RubricRule(name="five", check=five),
        ),
        name="a-plugin",
    )
    found.pm.register(
        Rules(
            RubricRule(name="six", check=six, required=True),
            RubricRule(name="alpha", check=result(True)),
        ),
        name="z-plugin",
    )
    return found


def skipping_store() -> dict[str, Any]:
    """An honest run's store with entries every rule ignores: unknown spawn ops, malformed and
    unknown messages, a malformed ledger member, and an unusable metrics record."""
    store = honest(FIXTURE).store()
    spawns = store["inspect_swarm:spawns"]["entries"]
    spawns += [{"seq": 90 + i, "time": 1.0, "op": "rename"} for i in range(2)]
    store["inspect_swarm:messages"]["messages"] += [
        {"seq": 90, "time": 1.0, "kind": "message"},
        {"seq": 91, "time": 1.0, "kind": "message", "sender": 3},
        {"seq": 92, "time": 1.0, "kind": "shout"},
    ]
    store["inspect_swarm:ledger"]["members"].append({"name": 3})
    store["inspect_swarm:metrics"] = {"version": 2}
    return store


def test_the_explanation_lists_each_rule_five_failures_each_and_the_records_skipped() -> None:
    verdict = judge_store(FIXTURE, skipping_store(), catalog=plugged())
    assert verdict.explanation().splitlines() == [
        "resolved: no (failed: six)",
        "coverage: pass",
        "delegation: pass",
        "dedup: pass",
        "receipts: pass",
        "provenance: pass",
        "proof_of_work: pass",
        "alpha (not required): pass",
        "five (not required): FAIL",
        "  - s m: r1",
        "  - s: r2",
        "  - m: r3",
        "  - r4",
        "  - r5",
        "six: FAIL",
        "  - f1",
        "  - f2",
        "  - f3",
        "  - f4",
        "  - f5",
        "  - ... and 1 more (see the metadata)",
        "zeta: pass",
        "efficiency: lead 1000 tokens in 3 turns; 8 children 3200 tokens in 16 turns; total "
        "4200 tokens, $0.042000; wall time 24.50 s",
        "record inspect_swarm:spawns: skipped 0 malformed entries and 2 unknown entries",
        "record inspect_swarm:messages: skipped 2 malformed entries and 1 unknown entry",
        "record inspect_swarm:ledger: skipped 1 malformed entry and 0 unknown entries",
        "record inspect_swarm:metrics: unusable (version: expected 1, got 2)",
    ]


@pytest.mark.parametrize(
    ("resolved", "line"),
    [
        (True, "resolved: yes"),
        (False, "resolved: no (failed: coverage, delegation, proof_of_work)"),
    ],
)
def test_the_explanation_begins_with_the_verdict(resolved: bool, line: str) -> None:
    verdict = judged(honest(FIXTURE) if resolved else {})
    assert verdict.resolved is resolved
    assert verdict.explanation().splitlines()[0] == line


def test_the_value_and_the_failed_rules_in_order() -> None:
    verdict = judge_store(FIXTURE, skipping_store(), catalog=plugged())
    assert list(verdict.value().items()) == [
        *((name, True) for name in OWN_RULES),
        ("alpha", True),
        ("five", False),
        ("six", False),
        ("zeta", True),
        ("resolved", False),
        ("unverified", False),
    ]
    assert verdict.failed == ("five", "six")
    assert [(r.name, r.required, r.plugin) for r in verdict.rules] == [
        *((name, True, None) for name in OWN_RULES),
        ("alpha", False, "z-plugin"),
        ("five", False, "a-plugin"),
        ("six", True, "z-plugin"),
        ("zeta", True, "a-plugin"),
    ]
    assert verdict.fixture == "json-events"
    with pytest.raises(KeyError) as caught:
        verdict.rule("nope")
    assert caught.value.args == (
        "no rule 'nope'; the rules are ['coverage', 'delegation', 'dedup', 'receipts', "
        "'provenance', 'proof_of_work', 'alpha', 'five', 'six', 'zeta']",
    )
    # a rule that is not required never unresolves a run
    only_five = catalog()
    only_five.pm.register(Rules(RubricRule(name="five", check=result(False, "no"))), name="p")
    assert judge_store(FIXTURE, honest(FIXTURE).store(), catalog=only_five).resolved is True


def test_the_metadata_is_plain_json_of_every_rule_the_figures_and_the_records() -> None:
    verdict = judge_store(FIXTURE, skipping_store(), catalog=plugged())
    metadata = verdict.metadata()
    assert list(metadata) == [
        "fixture",
        "lead",
        "resolved",
        "unverified",
        "isolation",
        "rules",
        "efficiency",
        "records",
    ]
    assert (metadata["fixture"], metadata["lead"], metadata["resolved"]) == (
        "json-events",
        LEAD,
        False,
    )
    assert list(metadata["rules"]) == [*OWN_RULES, "alpha", "five", "six", "zeta"]
    assert metadata["rules"]["five"] == {
        "passed": False,
        "required": False,
        "plugin": "a-plugin",
        "failures": [
            {"reason": "r1", "shard": "s", "member": "m"},
            {"reason": "r2", "shard": "s", "member": None},
            {"reason": "r3", "shard": None, "member": "m"},
            {"reason": "r4", "shard": None, "member": None},
            {"reason": "r5", "shard": None, "member": None},
        ],
        "details": {},
    }
    assert metadata["rules"]["six"]["details"] == {"why": "six of them"}
    assert metadata["rules"]["zeta"] == {
        "passed": True,
        "required": True,
        "plugin": "a-plugin",
        "failures": [],
        "details": {"set": "{3}", "tuple": [1, 2], "seen": ["json-events", LEAD]},
    }
    assert metadata["rules"]["dedup"] == {
        "passed": True,
        "required": True,
        "plugin": None,
        "failures": [],
        "details": {
            "duplicate_spawns": [],
            "total_spawns": 8,
            "spawn_budget": 16,
            "max_concurrent_children": 8,
            "refused": {},
        },
    }
    assert metadata["efficiency"] == dict(verdict.efficiency.details)
    assert metadata["efficiency"]["total"]["tokens"] == 4200
    clean = {"present": True, "problem": None, "malformed": 0, "unknown": 0, "problems": []}
    assert metadata["records"] == {
        "inspect_swarm:spawns": {
            **clean,
            "unknown": 2,
            "problems": [
                "entries[16]: skipped: unknown op 'rename'",
                "entries[17]: skipped: unknown op 'rename'",
            ],
        },
        "inspect_swarm:messages": {
            **clean,
            "malformed": 2,
            "unknown": 1,
            "problems": [
                "messages[8]: size: missing",
                "messages[9]: size: missing",
                "messages[10]: skipped: unknown kind 'shout'",
            ],
        },
        "inspect_swarm:result": clean,
        "inspect_swarm:ledger": {
            **clean,
            "malformed": 1,
            "problems": ["members[9]: name: expected a string, got 3"],
        },
        "inspect_swarm:metrics": {**clean, "problem": "version: expected 1, got 2"},
        "swarm_fanout:artifact": clean,
        "inspect_swarm:reads": clean,
    }


@pytest.mark.parametrize(
    ("build", "line"),
    [
        (
            lambda: {},
            "efficiency: lead 0 tokens in 0 turns; 0 children 0 tokens in 0 turns; total 0 "
            "tokens, $0.000000; wall time unknown",
        ),
        (
            lambda: one_turn(1),
            "efficiency: lead 1000 tokens in 1 turn; 1 child 400 tokens in 1 turn; total 1400 "
            "tokens, $0.014000; wall time unknown",
        ),
        (
            lambda: one_turn(2),
            "efficiency: lead 1000 tokens in 1 turn; 2 children 800 tokens in 2 turns; total "
            "1800 tokens, $0.018000; wall time 7.50 s",
        ),
    ],
    ids=["nothing", "one child", "two children"],
)
def test_the_efficiency_line_counts_in_the_singular_and_the_plural(build: Any, line: str) -> None:
    store = build()
    assert judged(store).explanation().splitlines()[-1] == line


def one_turn(children: int) -> dict[str, Any]:
    """A lead of one turn with ``children`` live children of one turn each; with two, the
    metrics record's wall clock is 7.5 s."""
    run = Run()
    run.usage[LEAD]["calls"]["calls"] = 1
    for worker in W[:children]:
        run.spawn(worker, calls=1)
    if children == 2:
        run.wall_clock = 7.5
    return run.store()


# -- plugins' rules ----------------------------------------------------------------------------


def explode(fixture: Any, evidence: Any) -> RuleResult:
    raise RuntimeError("boom")


@pytest.mark.parametrize(
    ("check", "failure", "details"),
    [
        (
            explode,
            "plugin 'p': rule 'x' raised RuntimeError('boom')",
            {"error": "RuntimeError('boom')"},
        ),
        (lambda f, e: True, "plugin 'p': rule 'x' returned bool; expected a RuleResult", {}),
    ],
    ids=["raises", "returns a bool"],
)
def test_a_broken_plugin_rule_fails_naming_the_plugin(
    check: Any, failure: str, details: dict[str, Any]
) -> None:
    found = catalog()
    found.pm.register(Rules(RubricRule(name="x", check=check, required=True)), name="p")
    verdict = judge_store(FIXTURE, honest(FIXTURE).store(), catalog=found)
    assert outcome(verdict, "x") == (False, [failure], details)
    assert verdict.resolved is False


@pytest.mark.parametrize("name", ["dedup", "efficiency", "unverified"])
def test_a_plugin_rule_may_not_take_a_name_of_the_rubrics_own(name: str) -> None:
    found = catalog()
    found.pm.register(Rules(RubricRule(name=name, check=result(True))), name="shadow")
    with pytest.raises(PluginError) as caught:
        plugin_rules(found)
    assert str(caught.value) == (
        f"Plugin 'shadow', hook 'swarm_rubric_rules': rule '{name}' has the name of one of the "
        "fanout rubric's own (coverage, dedup, delegation, efficiency, proof_of_work, "
        "provenance, receipts, resolved, unverified)"
    )


def test_plugin_rules_asks_the_given_catalog_for_the_fanout_rubric_by_default() -> None:
    found = catalog()
    rule = RubricRule(name="x", check=result(True))
    found.pm.register(Rules(rule), name="p")
    assert plugin_rules(found) == [("p", rule)]
    assert plugin_rules(found, rubric="other") == []
    assert plugin_rules() == []  # the process-wide catalog: no plugin adds a rule


# -- the scorer's arguments --------------------------------------------------------------------


@pytest.mark.parametrize("factor", [0, -1, True, "2", 2.0, None])
def test_the_scorer_refuses_a_spawn_factor_below_one_or_not_a_whole_number(factor: Any) -> None:
    with pytest.raises(ConfigError) as caught:
        fanout_rubric(fixture="json-events", spawn_factor=factor)
    assert str(caught.value) == (
        f"fanout_rubric.spawn_factor: expected a whole number >= 1, got {factor!r}"
    )


@pytest.mark.parametrize("flag", ["yes", 1, None, ""])
def test_the_scorer_refuses_a_rescore_fixture_that_is_not_true_or_false(flag: Any) -> None:
    with pytest.raises(ConfigError) as caught:
        fanout_rubric(fixture="json-events", rescore_fixture=flag)
    assert str(caught.value) == (
        f"fanout_rubric.rescore_fixture: expected true or false, got {flag!r}"
    )


# -- unscorable and verdict scores -------------------------------------------------------------


def test_an_unscorable_score_is_false_for_every_rule_and_says_why() -> None:
    found = unscorable_score(FIXTURE, ["coverage", "x"], "no seal", {"fixture": "abc"})
    assert (found.value, found.answer, found.explanation, found.reason, found.metadata) == (
        {"coverage": False, "x": False, "resolved": False, "unverified": False},
        "",
        "unscorable: no seal",
        "scoring_failed",
        {
            "fixture": "json-events",
            "resolved": False,
            "unverified": False,
            "unscorable": "no seal",
            "digests": {"fixture": "abc"},
        },
    )


@pytest.mark.parametrize(
    ("artifact", "answer"),
    [(None, ""), ({"path": "combined-index.md", "text": None}, ""), ("written", "written")],
    ids=["none stored", "not written", "written"],
)
def test_a_verdict_score_answers_the_artifact_text(artifact: Any, answer: str) -> None:
    run = honest(FIXTURE)
    run.artifact = (
        {"path": "combined-index.md", "text": answer} if artifact == "written" else artifact
    )
    verdict = judged(run)
    found = verdict_score(verdict)
    assert (found.value, found.answer, found.explanation) == (
        verdict.value(),
        answer,
        verdict.explanation(),
    )
    assert found.metadata == verdict.metadata()
    assert "digests" not in (found.metadata or {})
    with_digests = verdict_score(verdict, {"fixture": "abc"})
    assert with_digests.metadata == {**verdict.metadata(), "digests": {"fixture": "abc"}}


# -- re-scoring, in process --------------------------------------------------------------------


def rescored(store: dict[str, Any], earlier: dict[str, Any] | None, **arguments: Any) -> Score:
    """The score ``inspect_ai.score`` gives a logged sample of ``store`` whose last fan-out
    score recorded the digests ``earlier`` (none when ``None``)."""
    events = (
        []
        if earlier is None
        else [ScoreEvent(score=Score(value={}, metadata={"digests": earlier}))]
    )
    sample = EvalSample(id="s-1", epoch=1, input="fan out", target="", store=store, events=events)
    spec = EvalSpec(
        created=datetime.now(UTC).isoformat(),
        task="fanout",
        dataset=EvalDataset(name="fanout", samples=1, sample_ids=["s-1"]),
        model="none/none",
        config=EvalConfig(),
    )
    log = EvalLog(status="success", eval=spec, samples=[sample])
    scorer = fanout_rubric(fixture="json-events", **arguments)
    [done] = score(log, scorer, display="none").samples or []
    return done.scores["fanout_rubric"]  # type: ignore[index]


@pytest.fixture
def two_rules() -> Iterator[None]:
    """Two rules, ``zz`` and ``aa``, added by a plugin on the process-wide catalog (the one the
    Inspect scorer asks)."""
    pm = plugin_catalog().pm
    rules = [RubricRule(name=name, check=result(True)) for name in ("zz", "aa")]
    pm.register(Rules(*rules), name="two-rules")
    yield
    pm.unregister(name="two-rules")


@pytest.mark.usefixtures("two_rules")
def test_a_rescore_of_unchanged_records_judges_them_again() -> None:
    store = honest(FIXTURE).store()
    now = records_digests(store)
    found = rescored(store, {"fixture": DIGEST, **now, "judged": "sealed by the kernel"})
    assert found.value == {
        **dict.fromkeys([*OWN_RULES, "aa", "zz"], True),
        "resolved": True,
        "unverified": False,
    }
    assert (found.metadata or {})["digests"] == {
        "fixture": DIGEST,
        **now,
        "judged": "the last score's records",
    }
    assert (found.metadata or {})["isolation"] == isolation(FIXTURE, read_evidence(store))


@pytest.mark.parametrize("flag", [True, "TRUE", "true"])
def test_a_rescore_against_another_fixture_on_purpose_says_which_it_was(flag: Any) -> None:
    store = honest(FIXTURE).store()
    now = records_digests(store)
    found = rescored(store, {"fixture": "0ld", **now}, rescore_fixture=flag)
    assert (found.metadata or {})["digests"] == {
        "fixture": DIGEST,
        **now,
        "judged": "the last score's records, against a new fixture (was 0ld)",
    }


@pytest.mark.parametrize("flag", [None, False, "False", "false"])
def test_a_rescore_against_another_fixture_is_refused_unless_on_purpose(flag: Any) -> None:
    store = honest(FIXTURE).store()
    arguments = {} if flag is None else {"rescore_fixture": flag}
    with pytest.raises(RescoreRefused) as caught:
        rescored(store, {"fixture": "0ld", **records_digests(store)}, **arguments)
    assert str(caught.value) == (
        "fanout_rubric: refusing to re-score sample 's-1': the fixture's manifest "
        f"{FIXTURE.directory / 'fixture.json'} is not the one it was scored with (sha256 "
        f"{DIGEST} now, 0ld when scored); to judge it against this fixture on purpose, pass "
        "-S rescore_fixture=true"
    )


def test_a_rescore_of_changed_records_names_them() -> None:
    store = honest(FIXTURE).store()
    earlier = {"fixture": DIGEST, **records_digests(store)}
    store["inspect_swarm:messages"]["messages"].pop()
    store["swarm_fanout:artifact"]["text"] += "\n"
    now = records_digests(store)
    refusal = (
        "fanout_rubric: refusing to re-score sample 's-1': its records are not the ones it was "
        "scored with (changed since: {}; sha256 " + f"{now['records']} now, "
        f"{earlier['records']} when scored)"
    )
    with pytest.raises(RescoreRefused) as caught:
        rescored(store, earlier)
    assert str(caught.value) == refusal.format("inspect_swarm:messages, swarm_fanout:artifact")
    # an earlier score without digests by key: every record is named
    with pytest.raises(RescoreRefused) as caught:
        rescored(store, {**earlier, "by_key": "?"})
    assert str(caught.value) == refusal.format(", ".join(now["by_key"]))
    # by key the same, the records not: it cannot say which changed
    with pytest.raises(RescoreRefused) as caught:
        rescored(store, {**earlier, "by_key": now["by_key"]})
    assert str(caught.value) == refusal.format("unknown")


@pytest.mark.usefixtures("two_rules")
def test_a_rescore_no_earlier_score_vouches_for_is_unscorable_with_every_rule() -> None:
    found = rescored(honest(FIXTURE).store(), None)
    why = "no earlier fan-out score of this sample recorded the digests of its records"
    assert list((found.value or {}).items()) == [  # type: ignore[union-attr]
        *((name, False) for name in [*OWN_RULES, "aa", "zz", "resolved", "unverified"])
    ]
    assert (found.reason, found.explanation, found.metadata) == (
        "scoring_failed",
        f"unscorable: {why}",
        {
            "fixture": "json-events",
            "resolved": False,
            "unverified": False,
            "unscorable": why,
            "digests": {"fixture": DIGEST},
        },
    )


# -- in a running sample -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def in_eval(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Score]:
    """One eval (the scorer with its default arguments) of the spawn budget at 16 and 17, and
    of an honest run whose artifact was never written."""
    unwritten = honest(FIXTURE)
    unwritten.write(None)
    log = scored(
        tmp_path_factory.mktemp("logs"),
        {
            "16 spawns": {"records": spawning(16).store()},
            "17 spawns": {"records": spawning(17).store()},
            "unwritten": {"records": unwritten.store()},
            "own solver": {"records": honest(FIXTURE).store(), "seal": False},
        },
    )
    return scores(log)


def test_in_a_sample_the_scorer_judges_the_records_the_kernel_sealed(
    in_eval: dict[str, Score],
) -> None:
    judged_store = spawning(16).store()
    assert (in_eval["16 spawns"].metadata or {})["digests"] == {
        "fixture": DIGEST,
        **records_digests(judged_store),
        "judged": "sealed by the kernel",
    }
    unsealed = in_eval["own solver"]
    why = (
        "no swarm wrote this sample's records in this eval (the kernel sealed none): a solver "
        "that is not a swarm, or records written by something else"
    )
    assert (unsealed.value, unsealed.reason, unsealed.explanation, unsealed.metadata) == (
        {**dict.fromkeys(OWN_RULES, False), "resolved": False, "unverified": False},
        "scoring_failed",
        f"unscorable: {why}",
        {
            "fixture": "json-events",
            "resolved": False,
            "unverified": False,
            "unscorable": why,
            "digests": {"fixture": DIGEST},
        },
    )


def test_the_scorers_default_spawn_budget_is_twice_the_shards(in_eval: dict[str, Score]) -> None:
    at, over = in_eval["16 spawns"], in_eval["17 spawns"]
    assert (at.value["dedup"], over.value["dedup"]) == (True, False)  # type: ignore[index]
    assert (over.metadata or {})["rules"]["dedup"]["failures"] == [
        {"reason": over_budget(17, 2).reason, "shard": None, "member": None}
    ]


def test_an_artifact_the_lead_never_wrote_is_read_as_not_written(
    in_eval: dict[str, Score],
) -> None:
    found = in_eval["unwritten"]
    assert found.answer == ""
    assert (found.metadata or {})["rules"]["coverage"]["failures"] == [
        {"reason": "the artifact combined-index.md was not written", "shard": None, "member": None}
    ]


def test_without_a_sandbox_the_artifact_is_stored_as_not_written(tmp_path: Path) -> None:
    """A sample with no sandbox has no lead's file to read: the scorer stores the artifact as
    not written (it never keeps one a solver put in the store)."""
    run = honest(FIXTURE)
    run.write(None)
    task = Task(
        dataset=[Sample(id="no-sandbox", input="fan out", metadata={"records": run.store()})],
        solver=replay_records(),
        scorer=fanout_rubric(fixture="json-events"),
    )
    [log] = inspect_eval(task, model="mockllm/model", log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    [sample] = log.samples or []
    assert sample.store["swarm_fanout:artifact"] == {"path": "combined-index.md", "text": None}
    found = sample.scores["fanout_rubric"]  # type: ignore[index]
    assert (found.metadata or {})["rules"]["coverage"]["failures"] == [
        {"reason": "the artifact combined-index.md was not written", "shard": None, "member": None}
    ]


def test_a_rescore_judges_with_the_scorers_spawn_factor() -> None:
    store = spawning(9).store()
    earlier = {"fixture": DIGEST, **records_digests(store)}
    at_one = rescored(store, earlier, spawn_factor=1)
    assert (at_one.metadata or {})["rules"]["dedup"]["failures"] == [
        {"reason": over_budget(9, 1).reason, "shard": None, "member": None}
    ]
    by_default = rescored(store, earlier)
    assert (by_default.metadata or {})["rules"]["dedup"]["failures"] == []


def boss_alone(tmp_path: Path, command: str, answer: str) -> EvalSample:
    """A swarm of one member, ``boss``, in a local sandbox of its own: one bash call, then its
    submission, scored by the fan-out rubric."""
    solver = swarm(
        members=member("swarm/worker", name="boss", args={"tools": ["bash"]}),
        controller=controller("leaderless", stop_on_submission=True),
        sandboxes={"per_member": True},
    )
    scripts = {"boss": [{"tool": "bash", "args": {"command": command}}, {"submit": answer}]}
    task = Task(
        dataset=[Sample(id="boss", input="write the index")],
        solver=solver,
        scorer=fanout_rubric(fixture="json-events"),
        sandbox="local",
    )
    model = get_model("swarm/scripted", scripts=scripts, memoize=False)
    [log] = inspect_eval(task, model=model, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    [sample] = log.samples or []
    return sample


def test_the_artifact_is_read_from_the_sandbox_of_the_lead_the_records_name(
    tmp_path: Path,
) -> None:
    """A swarm of one member, ``boss``, in a sandbox of its own: the scorer reads the artifact
    from boss's sandbox (not from one of a member called ``lead``, nor the sample's)."""
    write = f"printf -- '- {F[0]}: {E[0]}\\n' > combined-index.md"
    sample = boss_alone(tmp_path, write, "done")
    text = f"- {F[0]}: {E[0]}\n"
    assert sample.store["swarm_fanout:artifact"] == {"path": "combined-index.md", "text": text}
    found = sample.scores["fanout_rubric"]  # type: ignore[index]
    assert (found.answer, (found.metadata or {})["lead"]) == (text, "boss")


def test_an_artifact_the_lead_never_wrote_is_stored_as_not_written(tmp_path: Path) -> None:
    """The lead has a sandbox but never writes the artifact: reading it fails, and the scorer
    stores it as not written (``text`` null, not empty text, which would read as an artifact
    with no bullets)."""
    sample = boss_alone(tmp_path, "touch other.md", "x")
    assert sample.store["swarm_fanout:artifact"] == {"path": "combined-index.md", "text": None}
    found = sample.scores["fanout_rubric"]  # type: ignore[index]
    assert (found.metadata or {})["rules"]["coverage"]["failures"] == [
        {"reason": "the artifact combined-index.md was not written", "shard": None, "member": None}
    ]
