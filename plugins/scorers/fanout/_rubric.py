"""The fan-out rubric: its rules applied to one sample's evidence, and the verdict.

``judge(fixture, evidence)`` runs the six required rules (coverage, delegation, dedup,
receipts, provenance, proof_of_work), the informational efficiency report, and any rules plugins
add through ``swarm_rubric_rules``, and says whether the run was isolated (``_proof.isolation``:
its actual sandboxes).  ``resolved`` is every required rule passed in an isolated run;
``unverified`` is every required rule passed in a run that was not isolated (under ``local``, or
with a shared sandbox): nothing kept a member from the answers, so it is never resolved.  A
plugin rule whose ``check`` raises or returns the wrong type is reported as failed, naming the
plugin.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from swarm import PluginCatalog, PluginError, RubricRule, RuleFailure, RuleResult, plugin_catalog

from ._answers import coverage, provenance
from ._efficiency import efficiency
from ._evidence import Evidence, read_evidence
from ._fixture import Fixture
from ._orchestration import dedup, delegation, receipts
from ._proof import isolation, proof_of_work
from ._subagents import child_aliases

__all__ = [
    "REQUIRED_RULES",
    "RUBRIC",
    "JudgedRule",
    "Verdict",
    "judge",
    "judge_store",
    "plugin_rules",
]

RUBRIC = "fanout"
"""The rubric's registered name, passed to ``swarm_rubric_rules``."""
REQUIRED_RULES = ("coverage", "delegation", "dedup", "receipts", "provenance", "proof_of_work")
"""The rubric's own rules, in the order they are reported; all required."""
_RESERVED = frozenset({*REQUIRED_RULES, "efficiency", "resolved", "unverified"})
_LISTED = 5
"""Failures spelled out per rule in the explanation (the metadata has them all)."""

Check = Callable[[Fixture, Evidence], RuleResult]


@attrs.frozen(kw_only=True)
class JudgedRule:
    """One rule's result in a verdict; ``plugin`` names the plugin that added it (``None`` for
    the rubric's own rules)."""

    name: str
    required: bool
    result: RuleResult
    plugin: str | None = None

    @property
    def passed(self) -> bool:
        """Whether the rule passed."""
        return self.result.passed


def _failure(failure: RuleFailure | str) -> dict[str, Any]:
    if isinstance(failure, str):
        return {"reason": failure, "shard": None, "member": None}
    return {"reason": failure.reason, "shard": failure.shard, "member": failure.member}


def _json_ready(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` as plain JSON (anything JSON cannot hold becomes its ``repr``)."""
    ready: dict[str, Any] = json.loads(json.dumps(value, default=repr))
    return ready


def _counted(number: int, one: str, many: str) -> str:
    return f"{number} {one if number == 1 else many}"


@attrs.frozen(kw_only=True)
class Verdict:
    """What the rubric found in one sample.

    Attributes:
        fixture: the fixture's name.
        rules: every judged rule, the rubric's own first, then plugins' (sorted by name).
        efficiency: the efficiency figures (informational).
        resolved: every required rule passed, and the run was isolated.
        evidence: what was judged.
        isolation: whether the run was isolated (``_proof.isolation``: ``provider``,
            ``isolated``, ``note``, ``problems``).
        unverified: every required rule passed, but the run was not isolated.
    """

    fixture: str
    rules: tuple[JudgedRule, ...]
    efficiency: RuleResult
    resolved: bool
    evidence: Evidence
    isolation: Mapping[str, Any] = attrs.field(factory=dict)
    unverified: bool = False

    def rule(self, name: str) -> JudgedRule:
        """The judged rule called ``name``; ``KeyError`` listing the rules when there is none."""
        for rule in self.rules:
            if rule.name == name:
                return rule
        raise KeyError(f"no rule {name!r}; the rules are {[r.name for r in self.rules]}")

    @property
    def failed(self) -> tuple[str, ...]:
        """The names of the rules that failed, required or not."""
        return tuple(r.name for r in self.rules if not r.passed)

    def value(self) -> dict[str, bool]:
        """Every rule's verdict, then ``resolved`` and ``unverified``: the value of the Inspect
        ``Score``."""
        rules = {r.name: r.passed for r in self.rules}
        return {**rules, "resolved": self.resolved, "unverified": self.unverified}

    def metadata(self) -> dict[str, Any]:
        """Plain JSON: each rule's failures and details, the efficiency figures, and how each
        store record read."""
        return _json_ready(
            {
                "fixture": self.fixture,
                "lead": self.evidence.lead,
                "resolved": self.resolved,
                "unverified": self.unverified,
                "isolation": dict(self.isolation),
                "rules": {
                    r.name: {
                        "passed": r.passed,
                        "required": r.required,
                        "plugin": r.plugin,
                        "failures": [_failure(f) for f in r.result.failures],
                        "details": dict(r.result.details),
                    }
                    for r in self.rules
                },
                "efficiency": dict(self.efficiency.details),
                "records": {
                    report.key: {
                        "present": report.present,
                        "problem": report.problem,
                        "malformed": report.malformed,
                        "unknown": report.unknown,
                        "problems": list(report.problems),
                    }
                    for report in self.evidence.reports
                },
            }
        )

    def explanation(self) -> str:
        """A summary for a person: the verdict, each rule and why it failed, the figures."""
        failed_required = [r.name for r in self.rules if r.required and not r.passed]
        if self.resolved:
            lines = ["resolved: yes"]
        elif self.unverified:
            lines = ["unverified: every required rule passed, but the run was not isolated"]
        else:
            lines = [f"resolved: no (failed: {', '.join(failed_required)})"]
        problems = self.isolation.get("problems") or ()
        if not self.isolation.get("isolated", False):
            lines.append(f"not isolated: {'; '.join(problems) or 'unknown'}")
        for rule in self.rules:
            tag = "" if rule.required else " (not required)"
            lines.append(f"{rule.name}{tag}: {'pass' if rule.passed else 'FAIL'}")
            failures = [_failure(f) for f in rule.result.failures]
            for failure in failures[:_LISTED]:
                about = " ".join(x for x in (failure["shard"], failure["member"]) if x)
                lines.append(f"  - {about + ': ' if about else ''}{failure['reason']}")
            if len(failures) > _LISTED:
                lines.append(f"  - ... and {len(failures) - _LISTED} more (see the metadata)")
        lines.append(_efficiency_line(self.efficiency.details))
        for report in self.evidence.reports:
            if report.problem:
                lines.append(f"record {report.key}: unusable ({report.problem})")
            elif report.malformed or report.unknown:
                lines.append(
                    f"record {report.key}: skipped "
                    f"{_counted(report.malformed, 'malformed entry', 'malformed entries')} and "
                    f"{_counted(report.unknown, 'unknown entry', 'unknown entries')}"
                )
        return "\n".join(lines)


def _efficiency_line(details: Any) -> str:
    lead, children, total = details["lead"], details["children"], details["total"]
    wall = details["wall_time"]
    return (
        f"efficiency: lead {lead['tokens']} tokens in "
        f"{_counted(lead['turns'], 'turn', 'turns')}; "
        f"{_counted(children['spawned'], 'child', 'children')} {children['tokens']} tokens in "
        f"{_counted(children['turns'], 'turn', 'turns')}; total {total['tokens']} tokens, "
        f"${total['cost']:.6f}; wall time {'unknown' if wall is None else f'{wall:.2f} s'}"
    )


def plugin_rules(
    catalog: PluginCatalog | None = None, rubric: str = RUBRIC
) -> list[tuple[str, RubricRule]]:
    """The rules plugins add to the rubric, with their plugins' names.

    Raises:
        PluginError: a plugin failed ``swarm_rubric_rules``, or named a rule like one of the
            rubric's own (or ``efficiency``, ``resolved``, ``unverified``).
    """
    found = (catalog or plugin_catalog()).rubric_rules(rubric)
    for plugin, rule in found:
        if rule.name in _RESERVED:
            raise PluginError(
                plugin,
                "swarm_rubric_rules",
                f"rule {rule.name!r} has the name of one of the {rubric} rubric's own "
                f"({', '.join(sorted(_RESERVED))})",
            )
    return found


def _check_plugin_rule(
    plugin: str, rule: RubricRule, fixture: Fixture, evidence: Evidence
) -> RuleResult:
    try:
        result = rule.check(fixture, evidence)
    except BaseException as ex:  # SystemExit too: a sync check cannot get the
        # run's cancellation, so whatever it raises is the rule's fault, never the scorer's end
        return RuleResult(
            passed=False,
            failures=(f"plugin {plugin!r}: rule {rule.name!r} raised {ex!r}",),
            details={"error": repr(ex)},
        )
    if not isinstance(result, RuleResult):
        return RuleResult(
            passed=False,
            failures=(
                f"plugin {plugin!r}: rule {rule.name!r} returned {type(result).__name__}; "
                "expected a RuleResult",
            ),
        )
    return result


def judge(
    fixture: Fixture,
    evidence: Evidence,
    *,
    spawn_factor: int = 2,
    extra: Sequence[tuple[str, RubricRule]] = (),
) -> Verdict:
    """Judge one sample's ``evidence`` against ``fixture``.

    Args:
        fixture: the fixture the sample ran.
        evidence: what the sample's records hold (``read_evidence``).
        spawn_factor: depth-1 spawns allowed per shard (dedup's budget).
        extra: rules added by plugins, with their plugins' names (``plugin_rules()``).
    """
    own: list[tuple[str, Check]] = [
        ("coverage", coverage),
        ("delegation", delegation),
        ("dedup", functools.partial(dedup, spawn_factor=spawn_factor)),
        ("receipts", receipts),
        ("provenance", provenance),
        ("proof_of_work", proof_of_work),
    ]
    rules = [JudgedRule(name=n, required=True, result=check(fixture, evidence)) for n, check in own]
    for plugin, rule in sorted(extra, key=lambda pair: pair[1].name):
        result = _check_plugin_rule(plugin, rule, fixture, evidence)
        rules.append(
            JudgedRule(name=rule.name, required=rule.required, result=result, plugin=plugin)
        )
    passed = all(r.passed for r in rules if r.required)
    isolated = isolation(fixture, evidence)
    return Verdict(
        fixture=fixture.name,
        rules=tuple(rules),
        efficiency=efficiency(fixture, evidence),
        resolved=passed and isolated["isolated"] is True,
        evidence=evidence,
        isolation=isolated,
        unverified=passed and isolated["isolated"] is not True,
    )


def judge_store(
    fixture: Fixture,
    store: Mapping[str, Any],
    *,
    spawn_factor: int = 2,
    catalog: PluginCatalog | None = None,
) -> Verdict:
    """Judge a sample's store (a mapping of store keys to values, as in
    ``EvalSample.store``) against ``fixture``, with the rules ``catalog``'s plugins add
    (default: the process-wide catalog's)."""
    evidence = read_evidence(store, aliases=child_aliases(fixture))
    return judge(fixture, evidence, spawn_factor=spawn_factor, extra=plugin_rules(catalog))
