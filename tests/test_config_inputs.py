"""Inputs that used to slip through: each is refused when the swarm is built, with a
``ConfigError`` naming the field and saying why, and never reaches a run.

Every test goes through the public API (``swarm``, ``member``, ``Budget``, ``controller``,
``channel``, topology files, Inspect's ``eval`` with the solver named as on the command line).
"""

from __future__ import annotations

import inspect
import json
import math
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from inspect_ai import Task, eval
from inspect_ai.agent import Agent, agent, react
from inspect_ai.dataset import Sample
from inspect_ai.event import InfoEvent
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.solver import SolverSpec

from swarm import (
    Budget,
    ConfigError,
    MemberLimits,
    MemberSpec,
    PluginCatalog,
    Register,
    Spawning,
    channel,
    controller,
    get_plugin_manager,
    hookimpl,
    member,
    swarm,
)
from swarm.testing import call, run_eval, scripted_model, submit

from helpers import shm_worker, tool_results

NAN, INF = math.nan, math.inf


def refused(build: Callable[[], object], field: str, why: str, file: Path | None = None) -> str:
    """Assert ``build()`` raises a ConfigError starting with ``field`` (after the topology
    ``file``'s name, when the value came from one) and saying ``why``."""
    with pytest.raises(ConfigError) as info:
        build()
    message = str(info.value)
    start = f"{field}: " if file is None else f"{file}: {field}: "
    assert message.startswith(start), message
    assert why in message, message
    return message


def topology(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "topology.yaml"
    path.write_text(text)
    return path


# -- NaN, infinity -----------------------------------------------------------------------------


def test_nan_member_time_limit_in_a_topology_file(tmp_path: Path) -> None:
    path = topology(tmp_path, "members:\n  - factory: react\n    limits: {time: .nan}\n")
    refused(
        lambda: swarm(config=path),
        "members[0].limits.time",
        "expected a number of seconds >= 0, got nan: numbers must be finite",
        file=path,
    )


def test_nan_time_limit_from_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "task.py").write_text(
        "from inspect_ai import Task, task\nfrom inspect_ai.dataset import Sample\n\n"
        "@task\ndef t():\n    return Task(dataset=[Sample(input='6*7?', target='42')])\n"
    )
    done = subprocess.run(
        [
            str(Path(sys.executable).parent / "inspect"),
            "eval",
            "task.py",
            "--solver",
            "swarm/swarm",
            "-S",
            "members={factory: react, count: 2, limits: {time: .nan}}",
            "--model",
            "swarm/scripted",
            "--log-dir",
            "logs",
            "--display",
            "none",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    assert "members[0].limits.time: expected a number of seconds >= 0, got nan" in done.stderr
    # refused while building the solver: no sample ran
    for info in list_eval_logs(str(tmp_path / "logs")):
        assert not read_eval_log(info.name).samples


def test_infinite_rate_window_of_shared_memory() -> None:
    refused(
        lambda: swarm(
            members=member(react), channels=[{"name": "shared_memory", "rate": [1, INF]}]
        ),
        "channels[0]",
        "shared_memory.rate: expected [count, seconds] (a whole count >= 1, finite seconds > 0)",
    )


def test_infinite_grace(tmp_path: Path) -> None:
    path = topology(tmp_path, "members: {factory: react}\nbudget: {grace: .inf}\n")
    refused(
        lambda: swarm(config=path), "budget.grace", "got inf: numbers must be finite", file=path
    )
    refused(lambda: Budget(grace=INF), "budget.grace", "numbers must be finite")


@pytest.mark.parametrize("bad", [NAN, INF, -INF])
@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda v: Budget(cost=v), "budget.cost"),
        (lambda v: Budget(tokens=v), "budget.tokens"),
        (lambda v: Budget(time=v), "budget.time"),
        (lambda v: Budget(reserve=v), "budget.reserve"),
        (lambda v: Budget(grace=v), "budget.grace"),
        (lambda v: Budget(split=[1, v]), "budget.split[1]"),
        (lambda v: MemberLimits(token=v), "member.limits.token"),
        (lambda v: MemberLimits(cost=v), "member.limits.cost"),
        (lambda v: MemberLimits(turn=v), "member.limits.turn"),
        (lambda v: MemberLimits(message=v), "member.limits.message"),
        (lambda v: MemberLimits(time=v), "member.limits.time"),
        (lambda v: member(react, limits={"cost": v}), "member.limits.cost"),
        (lambda v: swarm(members={"factory": "react", "limits": {"turn": v}}), "members[0]"),
        (lambda v: swarm(members=member(react), budget={"time": v}), "budget.time"),
        *[
            (
                lambda v, p=param: swarm(  # type: ignore[misc]
                    members=member(react), channels=[channel("shared_memory", **{p: v})]
                ),
                "channels[0]",
            )
            for param in ("max_files", "max_file_bytes", "max_file_lines", "max_board_bytes")
        ],
        (
            lambda v: swarm(members=member(react), channels=[channel("shared_memory", max_wait=v)]),
            "channels[0]",
        ),
        (
            lambda v: swarm(
                members=member(react), channels=[channel("shared_memory", rate=[v, 1])]
            ),
            "channels[0]",
        ),
        (
            lambda v: swarm(
                members=member(react), channels=[channel("shared_memory", rate=(1, v))]
            ),
            "channels[0]",
        ),
        (
            lambda v: swarm(
                members=member(react), controller=controller("quiescence", idle_seconds=v)
            ),
            "controller",
        ),
    ],
)
def test_nan_and_infinity_are_refused_wherever_a_number_is_taken(
    build: Callable[[float], object], field: str, bad: float
) -> None:
    with pytest.raises(ConfigError) as info:
        build(bad)
    message = str(info.value)
    assert message.startswith(field), message
    assert repr(bad) in message  # says what it got


def test_a_channel_handing_the_runtime_an_infinite_rate_is_refused() -> None:
    """A third-party channel's ``rate`` attribute is what the bus's rate control uses."""

    class Leaky:
        rate = (1, INF)

    class Plugin:
        @hookimpl
        def swarm_register_channels(self, register: Register) -> None:
            register("leaky", lambda: Leaky())

    pm, sources = get_plugin_manager(load_entrypoints=False)
    pm.register(Plugin(), name="leaky-plugin")
    refused(
        lambda: swarm(
            members=member(react), channels=["leaky"], plugins=PluginCatalog(pm, sources)
        ),
        "channels[0]",
        "channel 'leaky' has rate (1, inf): expected (count, seconds), a whole count >= 1 and a "
        "finite number of seconds > 0",
    )


def test_split_weights_that_overflow_their_sum() -> None:
    refused(lambda: Budget(split=[1e308, 1e308]), "budget.split", "add up to more than a float")


# -- wrong shapes and types --------------------------------------------------------------------


def test_limits_must_be_a_mapping() -> None:
    refused(
        lambda: swarm(members={"factory": "react", "limits": 5}),
        "members[0].limits",
        "expected a mapping with some of token, cost, turn, message, time, got 5",
    )
    refused(lambda: member(react, limits=5), "member.limits", "expected a mapping")  # type: ignore[arg-type]
    refused(lambda: member(react, limits=[1]), "member.limits", "got [1]")  # type: ignore[arg-type]


def test_a_negative_limit_names_the_field_and_the_reason(tmp_path: Path) -> None:
    path = topology(tmp_path, "members:\n  - factory: react\n    limits: {token: -1}\n")
    message = refused(
        lambda: swarm(config=path),
        "members[0].limits.token",
        "expected a whole number >= 0",
        file=path,
    )
    assert message == f"{path}: members[0].limits.token: expected a whole number >= 0, got -1"


def test_a_member_spec_built_directly_is_checked_too() -> None:
    refused(
        lambda: swarm(members=[member(react), MemberSpec(agent=react, limits=5)]),  # type: ignore[arg-type]
        "members[1].limits",
        "expected a mapping",
    )
    refused(
        lambda: swarm(members=MemberSpec(agent=react, role=["x"])),  # type: ignore[arg-type]
        "members[0].role",
        "expected text",
    )


def test_several_bad_limits_each_name_their_field() -> None:
    with pytest.raises(ConfigError) as info:
        swarm(members=[{"factory": "react"}, {"factory": "react", "limits": {"turns": 2}}])
    assert str(info.value) == (
        "members[1].limits: unknown key(s) 'turns' (did you mean 'turn'?); expected some of "
        "token, cost, turn, message, time"
    )


def test_fractional_counts_of_turns_are_refused_and_whole_floats_are_read_as_ints() -> None:
    refused(
        lambda: swarm(members={"factory": "react", "limits": {"turn": 1.5}}),
        "members[0].limits.turn",
        "expected a whole number >= 0, got 1.5",
    )
    refused(lambda: MemberLimits(message=0.5), "member.limits.message", "got 0.5")
    limits = member(react, limits={"turn": 2.0, "token": 1000.0, "time": 3}).limits
    assert limits == MemberLimits(turn=2, token=1000, time=3.0)
    assert type(limits.turn) is int and type(limits.token) is int and type(limits.time) is float
    assert member(react, count=2.0).count == 2  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: member(react, limits={"turn": True}), "member.limits.turn"),
        (lambda: member(react, limits={"cost": False}), "member.limits.cost"),
        (lambda: MemberLimits(time=True), "member.limits.time"),  # type: ignore[arg-type]
        (lambda: member(react, count=True), "member.count"),
        (lambda: Budget(grace=True), "budget.grace"),  # type: ignore[arg-type]
        (lambda: Budget(reserve=False), "budget.reserve"),  # type: ignore[arg-type]
        (
            lambda: swarm(
                members=member(react), channels=[channel("shared_memory", rate=[1, True])]
            ),
            "channels[0]",
        ),
        (
            lambda: swarm(
                members=member(react), controller=controller("quiescence", idle_seconds=True)
            ),
            "controller",
        ),
    ],
)
def test_booleans_are_not_numbers(build: Callable[[], object], field: str) -> None:
    with pytest.raises(ConfigError) as info:
        build()
    assert str(info.value).startswith(field), info.value


def test_numbers_given_as_strings_are_not_read_as_numbers() -> None:
    # YAML reads 1e5 as a string; cattrs would have turned "5" into 5 and "1.5" into an error
    refused(
        lambda: swarm(members={"factory": "react", "limits": {"token": "1e5"}}),
        "members[0].limits.token",
        "expected a whole number >= 0, got the text '1e5' (YAML reads 1e5 as text",
    )


@pytest.mark.parametrize("role", [5, ["lead"], {"a": 1}, True])
def test_a_role_is_text(role: object) -> None:
    refused(
        lambda: swarm(members={"factory": "react", "role": role}),
        "members[0].role",
        f"expected text (a string) or null, got {role!r}",
    )
    refused(lambda: member(react, role=role), "member.role", "expected text")  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [[], False, 0, "", {}])
def test_only_an_absent_controller_means_the_default(value: object, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        swarm(members=member(react), controller=value)  # type: ignore[arg-type]
    assert str(info.value).startswith("controller"), info.value
    path = topology(tmp_path, f"members: {{factory: react}}\ncontroller: {json.dumps(value)}\n")
    with pytest.raises(ConfigError) as info:
        swarm(config=path)
    assert str(info.value).startswith(f"{path}: controller"), info.value


def test_an_absent_controller_is_leaderless() -> None:
    """leaderless's default stops the swarm at the first submission."""
    log = run_eval(swarm(members=member(react), controller=None), model=scripted_model())
    assert log.samples and log.samples[0].store["inspect_swarm:result"]["stop_reason"] == (
        "submitted"
    )


@pytest.mark.parametrize(
    ("build", "field", "why"),
    [
        (lambda: swarm(members=member(react), channels=False), "channels", "expected a list"),
        (lambda: swarm(members=member(react), channels=[5]), "channels[0]", "got 5"),
        (lambda: swarm(members=member(react), channels=[None]), "channels[0]", "got None"),
        (lambda: swarm(members=member(react), channels=[channel(5)]), "channels[0]", "got 5"),  # type: ignore[arg-type]
        (lambda: swarm(members=member(react), controller=controller(None)), "controller", ""),  # type: ignore[arg-type]
        (
            lambda: swarm(members=member(react), channels=[{"name": "shared_memory", 1: 2}]),
            "channels[0]",
            "parameter names must be strings",
        ),
        (lambda: swarm(members=member(react), budget=[]), "budget", "got []"),
        (lambda: swarm(members=member(react), budget=False), "budget", "got False"),
        (
            lambda: swarm(members=member(react), budget={"x": 1, 5: 2}),
            "budget",
            "unknown key(s) 'x', 5",
        ),
        (lambda: swarm(members=member(react), config=5), "config", "got 5"),  # type: ignore[arg-type]
        (lambda: swarm(members={"factory": "react", "args": 0}), "members[0].args", "got 0"),
        (lambda: swarm(members={"factory": "react", "args": []}), "members[0].args", "got []"),
        (lambda: swarm(members={"factory": "react", "args": False}), "members[0].args", ""),
    ],
)
def test_wrong_types_for_channels_budget_and_the_rest(
    build: Callable[[], object], field: str, why: str
) -> None:
    refused(build, field, why)


# -- factory arguments -------------------------------------------------------------------------


def test_factory_arguments_are_checked_against_its_signature(tmp_path: Path) -> None:
    path = topology(
        tmp_path,
        "members:\n  - factory: react\n  - factory: react\n    name: lead\n    args: {bogus: 1}\n",
    )
    message = refused(lambda: swarm(config=path), "members[1].args", "'bogus'", file=path)
    assert "member 'lead'" in message
    refused(lambda: member(react, {"bogus": 1}), "member.args", "unexpected keyword argument")
    refused(lambda: member("react", {"bogus": 1}), "member.args", "'bogus'")


@agent
def needs_a_topic(topic: str) -> Agent:
    """A factory with a required parameter."""
    return react(description=topic)


@agent
def takes_anything(**kwargs: Any) -> Agent:
    """A factory taking any keyword."""
    return react()


def test_a_missing_required_argument_is_refused_and_kwargs_take_anything() -> None:
    refused(lambda: member(needs_a_topic), "member.args", "missing a required argument: 'topic'")
    assert member(needs_a_topic, {"topic": "maths"}).args == {"topic": "maths"}
    assert member(takes_anything, {"whatever": 1}).args == {"whatever": 1}


def test_split_weights_are_counted_against_the_roster_when_built() -> None:
    refused(
        lambda: swarm(members=member(react, count=2), budget={"tokens": 100, "split": [1, 2, 3]}),
        "budget.split",
        "3 weight(s) for 2 member(s); give one weight per member",
    )


def test_a_member_cost_limit_without_prices_names_the_member_field(log_dir: Path) -> None:
    """Prices are known only when the sample runs (the model is the eval's): the sample fails
    at once, naming the member's limit, and the records are still written."""
    solver = swarm(members=[member(react, name="a"), member(react, name="b", limits={"cost": 1})])
    log = run_eval(solver, log_dir=log_dir)
    assert log.samples and log.samples[0].error is not None
    assert log.samples[0].error.message.startswith(
        "members[1].limits.cost: a member's cost limit needs prices, and model(s) "
        "swarm/scripted have none."
    ), log.samples[0].error.message
    assert {"inspect_swarm:result", "inspect_swarm:ledger", "inspect_swarm:metrics"} <= set(
        log.samples[0].store
    )


def test_a_huge_count_is_refused_before_the_roster_is_made() -> None:
    refused(lambda: member(react, count=10**30), "member.count", "in [1, 10000]")
    refused(
        lambda: swarm(members=[{"factory": "react", "count": 10_000}, "react"]),
        "members",
        "10,001 members in all; a swarm has at most 10,000",
    )


def test_a_verifier_that_names_no_scorer_is_refused_before_the_run() -> None:
    refused(
        lambda: swarm(members=member(react), controller=controller("verified", verifier="nosuch")),
        "controller",
        "no Inspect scorer called 'nosuch'",
    )


def test_the_solver_named_as_on_the_command_line_refuses_bad_values() -> None:
    """``inspect eval --solver swarm/swarm -S ...``: values parsed as YAML, the solver built by
    name; the error is the eval's and no sample runs."""
    args = {
        "members": yaml.safe_load("{factory: react, limits: {turn: 1.5}}"),
        "budget": yaml.safe_load("{grace: 10}"),
    }
    task = Task(dataset=[Sample(input="6 * 7?", target="42")])
    with pytest.raises(ConfigError, match=r"^members\[0\]\.limits\.turn: expected a whole"):
        eval(
            task,
            solver=SolverSpec("swarm/swarm", args, args),
            model=scripted_model(),
            display="none",
        )


# -- a model's swarm_wait timeout --------------------------------------------------------------


def test_a_non_finite_wait_timeout_is_a_tool_error_and_never_recorded(log_dir: Path) -> None:
    model = scripted_model(
        {
            "*": [
                call("swarm_wait", timeout=INF),
                call("swarm_wait", timeout=NAN),
                call("swarm_wait", timeout=-INF),
                submit("42"),
            ]
        }
    )
    log = run_eval(
        swarm(members=member(shm_worker), channels=["shared_memory"]), model=model, log_dir=log_dir
    )
    assert log.status == "success" and log.samples
    sample = log.samples[0]
    errors = [error for _, error in tool_results(sample, "swarm_wait")]
    assert errors == [
        "timeout must be a finite number of seconds, got inf",
        "timeout must be a finite number of seconds, got nan",
        "timeout must be a finite number of seconds, got -inf",
    ]
    ours = [
        e.data for e in sample.events if isinstance(e, InfoEvent) and e.source == "inspect_swarm"
    ]
    assert not [d for d in ours if isinstance(d, dict) and d.get("kind") == "waited"]
    for data in [*ours, *(sample.store[f"inspect_swarm:{k}"] for k in ("result", "ledger"))]:
        json.dumps(data, allow_nan=False)  # valid JSON: no Infinity, no NaN
    metrics = sample.store["inspect_swarm:metrics"]
    assert [m["waits_by_outcome"] for m in metrics["members"]] == [{}]
    assert not re.search(r"\b(Infinity|NaN)\b", json.dumps(metrics, allow_nan=False))


def error_of(build: Callable[[], object]) -> str:
    """The message of the ``ConfigError`` that ``build()`` raises."""
    with pytest.raises(ConfigError) as info:
        build()
    return str(info.value)


# -- issue 21: names send_message reads as relations -------------------------------------------

RELATION = (
    "is reserved by swarm-eval (send_message reads 'parent' and 'children' as relations, not "
    "member names)"
)


@agent
def children() -> Agent:
    """An @agent whose default member name would be ``children``."""
    return react()


def test_parent_and_children_are_not_member_names(tmp_path: Path) -> None:
    # before: accepted; such a member could never be messaged by name (to="parent" means the
    # sender's parent) and its messages read as from="parent"
    assert error_of(lambda: member(react, name="parent")) == (f"member.name: 'parent' {RELATION}")
    assert error_of(lambda: swarm(members={"factory": "react", "name": "children"})) == (
        f"members[0].name: 'children' {RELATION}"
    )
    # a default name is checked when the roster is named, and so is a numbered one's base
    assert error_of(lambda: swarm(members=member(children))) == (
        f"members[0].name: 'children' {RELATION}"
    )
    path = topology(tmp_path, "members: [{factory: react, name: parent}]\n")
    assert error_of(lambda: swarm(config=path)) == (f"{path}: members[0].name: 'parent' {RELATION}")
    # other spellings are names like any other
    assert [m.name for m in (member(react, name="Parent"), member(react, name="parents"))] == [
        "Parent",
        "parents",
    ]


# -- issue 21: spawning limits bounded like count ----------------------------------------------


@pytest.mark.parametrize(
    ("field", "low"),
    [("max_depth", 1), ("max_children", 1), ("max_live", 1), ("max_spawns", 1), ("retries", 0)],
)
def test_every_spawning_limit_is_at_most_the_member_cap(field: str, low: int) -> None:
    # before: max_spawns 1e12 was accepted, and spawning could take a swarm past 10,000 members
    with pytest.raises(ConfigError) as info:
        Spawning(**{field: 1e12})
    assert str(info.value) == (
        f"spawning.{field}: expected a whole number in [{low}, 10000], got 1000000000000"
    )
    with pytest.raises(ConfigError) as info:
        Spawning(**{field: 10_001})
    assert str(info.value) == (
        f"spawning.{field}: expected a whole number in [{low}, 10000], got 10001"
    )
    assert getattr(Spawning(**{field: 10_000.0}), field) == 10_000


def test_max_spawns_and_the_roster_fit_in_a_swarm(tmp_path: Path) -> None:
    # a roster of 9,936 that may spawn 64 children holds 10,000 members at most: it fits; one
    # more roster member, or one more spawn, would not
    lead = member("swarm/worker", name="lead", can_spawn=["w"])
    templates = {"w": member("swarm/worker")}

    def build(others: int, **spawning: int) -> object:
        crowd = member("swarm/worker", name="o", count=others)
        return swarm(members=[lead, crowd], templates=templates, spawning=spawning)

    build(9_935)
    assert error_of(lambda: build(9_936)) == (
        "spawning.max_spawns: 64 spawns and 9,937 roster members make 10,001 members; a swarm "
        "has at most 10,000"
    )
    build(9_935, max_spawns=64, max_live=10_000)
    assert error_of(lambda: build(1, max_spawns=9_999)) == (
        "spawning.max_spawns: 9,999 spawns and 2 roster members make 10,001 members; a swarm "
        "has at most 10,000"
    )
    # a roster that never spawns is not held to its spawning limits' room
    swarm(members=member("swarm/worker", count=10_000), spawning={"max_spawns": 10_000})
    path = topology(
        tmp_path,
        "members: [{factory: swarm/worker, name: lead, can_spawn: [w]}]\n"
        "templates: {w: {factory: swarm/worker}}\nspawning: {max_spawns: 1e12}\n",
    )
    assert error_of(lambda: swarm(config=path)) == (
        f"{path}: spawning.max_spawns: expected a whole number in [1, 10000], got the text "
        "'1e12' (YAML reads 1e12 as text: a number in exponent form needs a dot and a signed "
        "exponent; write 1.0e+12 or 1000000000000)"
    )


# -- issue 21: slips get one line with the valid names and a "did you mean" --------------------

TOPOLOGY_KEYS = (
    "budget, channels, controller, members, on_member_error, sandboxes, spawning, templates"
)
MEMBER_KEYS = (
    "agent, args, bridged, can_spawn, count, delivery, factory, limits, model, name, role, sandbox"
)
NO_AGENT = "give a package-qualified name such as 'mypkg/worker', or import the module defining it"


def test_a_typo_in_a_key_or_a_name_gets_the_closest_valid_one(tmp_path: Path) -> None:
    # before: the valid names, and no suggestion (controler, limit, shared-memory,
    # stop_on_submision, reac, swarm/wroker), and swarm(member=...) was a TypeError
    path = topology(tmp_path, "members: {factory: react}\ncontroler: leaderless\n")
    assert error_of(lambda: swarm(config=path)) == (
        f"{path}: unknown key(s) 'controler' (did you mean 'controller'?); expected some of "
        f"{TOPOLOGY_KEYS}"
    )
    assert error_of(lambda: swarm(config={"members": "react", "controler": "leaderless"})) == (
        f"config: unknown key(s) 'controler' (did you mean 'controller'?); expected some of "
        f"{TOPOLOGY_KEYS}"
    )
    assert error_of(lambda: swarm(members={"factory": "react", "limit": {"turn": 1}})) == (
        f"members[0]: unknown key(s) 'limit' (did you mean 'limits'?); expected some of "
        f"{MEMBER_KEYS}"
    )
    assert error_of(lambda: swarm(members={"factory": "react", "limits": {"turns": 1}})) == (
        "members[0].limits: unknown key(s) 'turns' (did you mean 'turn'?); expected some of "
        "token, cost, turn, message, time"
    )
    builtins = PluginCatalog(*get_plugin_manager(load_entrypoints=False))
    assert error_of(lambda: swarm(members="react", channels="shared-memory", plugins=builtins)) == (
        "channels[0]: unknown channel 'shared-memory' (did you mean 'shared_memory'?); "
        "registered channels: filesystem, messages, shared_memory"
    )
    assert error_of(lambda: swarm(members="react", controller="leaderles", plugins=builtins)) == (
        "controller: unknown controller 'leaderles' (did you mean 'leaderless'?); registered "
        "controllers: leaderless, quiescence, verified"
    )
    assert error_of(lambda: swarm(members="react", controller="boss", plugins=builtins)) == (
        "controller: unknown controller 'boss'; registered controllers: leaderless, quiescence, "
        "verified"
    )
    typo = controller("leaderless", stop_on_submision=False)
    assert error_of(lambda: swarm(members="react", controller=typo)) == (
        "controller: controller 'leaderless': unknown parameter(s) 'stop_on_submision' (did you "
        "mean 'stop_on_submission'?); expected some of final, normalize, stop_on_submission, "
        "synthesize_model, synthesize_prompt, verifier"
    )
    assert error_of(
        lambda: swarm(members="react", channels=[channel("messages", route="all")])
    ) == (
        "channels[0]: channel 'messages': unknown parameter(s) 'route' (did you mean 'routes'?); "
        "expected some of max_bytes, max_wait, rate, routes"
    )
    assert error_of(lambda: swarm(members={"factory": "reac"})) == (
        "members[0].agent: no @agent called 'reac' is registered with Inspect (did you mean "
        f"'react'?); {NO_AGENT}"
    )
    assert error_of(lambda: swarm(members={"factory": "swarm/wroker"})) == (
        "members[0].agent: no @agent called 'swarm/wroker' is registered with Inspect (did you "
        f"mean 'swarm/worker'?); {NO_AGENT}"
    )
    assert error_of(lambda: swarm(members={"factory": "zzqqxx"})) == (
        f"members[0].agent: no @agent called 'zzqqxx' is registered with Inspect; {NO_AGENT}"
    )
    assert error_of(lambda: swarm(members="react", spawning={"max_spawn": 5})) == (
        "spawning: unknown key(s) 'max_spawn' (did you mean 'max_spawns'?); expected some of "
        "max_children, max_depth, max_live, max_spawns, retries"
    )


def test_an_unknown_swarm_parameter_is_a_config_error_naming_the_closest() -> None:
    expected = (
        "swarm: unknown parameter(s) 'member' (did you mean 'members'?); expected some of "
        "budget, channels, config, controller, members, on_member_error, plugins, sandboxes, "
        "spawning, templates"
    )
    assert error_of(lambda: swarm(member=react)) == expected  # type: ignore[call-arg]
    # as `inspect eval --solver swarm/swarm -S member=react` builds it
    task = Task(dataset=[Sample(input="6 * 7?", target="42")])
    spec = SolverSpec("swarm/swarm", {"member": "react"}, {"member": "react"})
    assert error_of(lambda: eval(task, solver=spec, model=scripted_model(), display="none")) == (
        expected
    )
    # the names it lists are swarm()'s own
    from swarm._faces.agent import PARAMETERS

    assert list(PARAMETERS) == sorted(
        n for n, p in inspect.signature(swarm).parameters.items() if p.kind != p.VAR_KEYWORD
    )


def test_a_number_yaml_read_as_text_says_so(tmp_path: Path) -> None:
    # before: "expected a whole number > 0, got '1e5'": YAML 1.1 reads 1e5, and 1.0e5, as text
    yaml_text = (
        "(YAML reads {0} as text: a number in exponent form needs a dot and a signed exponent; "
        "write {1} or {2})"
    )
    path = topology(tmp_path, "members: {factory: react}\nbudget: {tokens: 1e5}\n")
    assert yaml.safe_load(path.read_text())["budget"]["tokens"] == "1e5"
    assert error_of(lambda: swarm(config=path)) == (
        f"{path}: budget.tokens: expected a whole number > 0, got the text '1e5' "
        + yaml_text.format("1e5", "1.0e+5", "100000")
    )
    assert yaml.safe_load("x: 1.0e+5")["x"] == 100000.0  # what it says to write is a number
    path = topology(tmp_path, "members: {factory: react, limits: {time: 1.5e3}}\n")
    assert error_of(lambda: swarm(config=path)) == (
        f"{path}: members[0].limits.time: expected a number of seconds >= 0, got the text "
        "'1.5e3' " + yaml_text.format("1.5e3", "1.5e+3", "1500")
    )
    assert error_of(lambda: swarm(members={"factory": "react", "count": "4"})) == (
        "members[0].count: expected a whole number in [1, 10000], got the text '4' (a number in "
        "quotes is text; write 4)"
    )
    # a plugin's own refusal of such text gets the same note
    path = topology(
        tmp_path, "members: {factory: react}\nchannels: [{name: shared_memory, max_wait: 6e1}]\n"
    )
    assert error_of(lambda: swarm(config=path)) == (
        f"{path}: channels[0]: shared_memory.max_wait: expected a number of seconds, got '6e1'; "
        "that is the text '6e1' " + yaml_text.format("6e1", "6.0e+1", "60")
    )
    rate = channel("messages", rate=["1e3", 60])
    assert error_of(lambda: swarm(members="react", channels=[rate])) == (
        "channels[0]: messages.rate: expected [count, seconds] (a whole count >= 1, finite "
        "seconds > 0) or null, got ['1e3', 60]; that is the text '1e3' "
        + yaml_text.format("1e3", "1.0e+3", "1000")
    )
    # text that is no number is repeated as it is
    assert error_of(lambda: swarm(members={"factory": "react", "count": "many"})) == (
        "members[0].count: expected a whole number in [1, 10000], got 'many'"
    )
