"""Members: ``member()`` records and their expansion into a named roster."""

from __future__ import annotations

import inspect
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, cast

import attrs
from inspect_ai.agent import Agent, is_agent
from inspect_ai.util import registry_create, registry_info

from swarm._checks import did_you_mean, number_problem, shown
from swarm._inspect.private import registry_lookup, registry_names
from swarm.errors import ConfigError
from swarm.records import Delivery, MemberInfo, MemberLimits

__all__ = [
    "BRIDGES",
    "MAX_MEMBERS",
    "Bridge",
    "MemberSpec",
    "RosterEntry",
    "build_agent",
    "check_member_name",
    "checked_member",
    "expand_roster",
    "member",
]

MAX_MEMBERS = 10_000
"""The most members a swarm may have (every member is a task of the sample)."""

RESERVED_NAMES = frozenset({"init", "solvers", "scorers"})
"""Span names Inspect reads as sample phases; a member called so would break its timeline."""

RELATIONS = frozenset({"parent", "children"})
"""What ``send_message(to=...)`` reads as relations: a member called so could never be messaged
by name, and its messages would read as from its recipient's parent."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

Bridge = Literal["in_process", "sandbox"]
"""How a bridged member's agent reaches its model: Inspect's ``agent_bridge()`` in the member's
own process (``"in_process"``), or ``sandbox_agent_bridge()`` from inside its sandbox."""

BRIDGES: tuple[Bridge, ...] = ("in_process", "sandbox")

MEMBER_FIELD = "{member}"
"""The placeholder in a member's ``sandbox`` that each copy's (or child's) name replaces."""


@attrs.frozen(kw_only=True)
class MemberSpec:
    """One ``member()`` record: an agent (or how to build one) and how many copies to run.

    ``agent`` is a built agent, a registered ``@agent`` factory, or the registry name of one.
    A factory is called with ``args`` once per member per sample.
    """

    agent: Any
    args: Mapping[str, Any] = attrs.field(factory=dict)
    name: str | None = None
    role: str | None = None
    count: int = 1
    limits: MemberLimits = attrs.field(factory=MemberLimits)
    delivery: Delivery | None = None
    model: str | None = None
    can_spawn: tuple[str, ...] = ()
    sandbox: str | None = None
    bridged: Bridge | None = None

    def sandbox_for(self, name: str) -> str | None:
        """The sample sandbox environment member ``name`` runs in: ``sandbox`` with
        ``{member}`` replaced by the name (a renamed spawn ``name~2``: the name it was spawned
        as), or ``None`` (no named environment)."""
        if self.sandbox is None:
            return None
        return self.sandbox.replace(MEMBER_FIELD, name.split("~", 1)[0])

    @property
    def factory_args(self) -> dict[str, Any]:
        """What the factory is called with: ``args``, and ``model`` when one is given."""
        args = dict(self.args)
        if self.model is not None:
            args["model"] = self.model
        return args

    @property
    def is_factory(self) -> bool:
        """Whether ``agent`` is built per member (a factory or a registry name)."""
        return isinstance(self.agent, str) or _is_factory(self.agent)

    @property
    def default_name(self) -> str:
        """The name used when none is given: the agent's unqualified registry name."""
        if isinstance(self.agent, str):
            return self.agent.rsplit("/", 1)[-1]
        try:
            return registry_info(self.agent).name.rsplit("/", 1)[-1]
        except Exception:
            return getattr(self.agent, "__name__", "member")


def _is_factory(obj: object) -> bool:
    try:
        info = registry_info(obj)
    except Exception:
        return False
    # Inspect tags a *built* agent with the parameters it was built from; the factory has none.
    return info.type == "agent" and not hasattr(obj, "__registry_params__")


def member(
    agent: Agent | Callable[..., Agent] | str,
    args: Mapping[str, Any] | None = None,
    *,
    name: str | None = None,
    role: str | None = None,
    count: int = 1,
    limits: MemberLimits | Mapping[str, Any] | None = None,
    delivery: Delivery | None = None,
    model: str | None = None,
    can_spawn: Sequence[str] = (),
    sandbox: str | None = None,
    bridged: bool | Bridge = False,
) -> MemberSpec:
    """A roster entry: ``count`` members running ``agent``.

    Args:
        agent: a built agent (``react(...)``), a registered ``@agent`` factory (``react``), or
            the registry name of one (``"react"``, ``"mypkg/worker"``).  A factory is called
            with ``args`` for every member of every sample, so copies share nothing.
        args: keyword arguments for the factory, checked against its signature now.
        name: the member's name; defaults to the agent's name.  With ``count > 1`` the members
            are ``name-1`` ... ``name-k``.
        role: free text shown to the member in its preamble and to controllers (a string).
        count: how many copies, 1 to 10,000 (needs a factory when more than one).
        limits: the member's own limits (token, cost, turn, message, time): ``MemberLimits``
            or a mapping of its fields.
        delivery: ``"notify"`` or ``"poll"`` (``None``: the run decides, by default notify).
        model: the model the member's factory is given as its ``model`` argument (a model
            name such as ``"openai/gpt-4o-mini"``); ``None``: the factory's own default.
        can_spawn: the templates (the topology's ``templates``) this member may spawn children
            from; with any, the member gets the spawning tools (``spawn_child``...).
        sandbox: the sample's sandbox environment the member works in (``"agent-2"``, a
            Docker compose service's name): its default and only ``sandbox()``.  ``{member}``
            is replaced by each member's name (``count=2``: ``agent-1``, ``agent-2``).
            ``None``: the sample's environments, as for any Inspect solver.
        bridged: the agent talks to its model through Inspect's agent bridge: ``True`` (or
            ``"in_process"``) for a Python agent written against a provider's SDK inside
            ``agent_bridge()``, ``"sandbox"`` for an agent in the member's sandbox reached
            with ``sandbox_agent_bridge()``.  A bridged member polls (it cannot be in notify
            mode) and reaches the channels through ``bridge_tools()``.  A member whose calls
            come through a bridge is marked bridged when they do, declared or not.

    Raises:
        ConfigError: for a bad value, naming the field.
    """
    return checked_member(
        agent,
        args,
        name=name,
        role=role,
        count=count,
        limits=limits,
        delivery=delivery,
        model=model,
        can_spawn=can_spawn,
        sandbox=sandbox,
        bridged=bridged,
    )


def checked_member(
    agent: object,
    args: object = None,
    *,
    name: object = None,
    role: object = None,
    count: object = 1,
    limits: object = None,
    delivery: object = None,
    model: object = None,
    can_spawn: object = (),
    sandbox: object = None,
    bridged: object = None,
    where: str = "member",
) -> MemberSpec:
    """``member()`` for values of any type (from a file or ``-S``), refusing bad ones with
    messages whose field paths start at ``where`` (``members[2]``)."""
    factory: Callable[..., Any] | None
    if isinstance(agent, str):
        factory = _lookup_factory(agent, f"{where}.agent")
    elif not callable(agent):
        raise ConfigError(f"{where}.agent: expected an agent or @agent factory, got {agent!r}")
    else:
        factory = agent if _is_factory(agent) else None
    if args is None:
        args = {}
    if not isinstance(args, Mapping) or not all(isinstance(k, str) for k in args):
        raise ConfigError(
            f"{where}.args: expected a mapping of factory argument names to values, got {args!r}"
        )
    problem = number_problem(count, whole=True, low=1, high=MAX_MEMBERS)
    if problem is not None:
        raise ConfigError(f"{where}.count: {problem}")
    copies = int(cast(float, count))  # a whole number in range, checked above
    if factory is None and (args or copies > 1):
        field, what = ("args", "args are for") if args else ("count", "several copies need")
        raise ConfigError(
            f"{where}.{field}: {what} an @agent factory (pass `react`, not `react()`), so "
            "that every copy gets its own agent; this agent is already built"
        )
    if name is not None:
        name = check_member_name(name, f"{where}.name")
    if role is not None and not isinstance(role, str):
        raise ConfigError(f"{where}.role: expected text (a string) or null, got {role!r}")
    if delivery not in (None, "notify", "poll"):
        raise ConfigError(f"{where}.delivery: expected 'notify' or 'poll', got {delivery!r}")
    if limits is None:
        limits = MemberLimits()
    elif not isinstance(limits, MemberLimits):
        from swarm.serialization import structure

        limits = structure(limits, MemberLimits, what=f"{where}.limits")
    if model is not None and (not isinstance(model, str) or not model):
        raise ConfigError(
            f"{where}.model: expected a model name such as 'openai/gpt-4o', got {model!r}"
        )
    if model is not None and factory is None:
        raise ConfigError(
            f"{where}.model: a model is given to an @agent factory's 'model' argument; this "
            "agent is already built"
        )
    if can_spawn is None:
        can_spawn = ()
    if isinstance(can_spawn, str) or not isinstance(can_spawn, Sequence):
        raise ConfigError(
            f"{where}.can_spawn: expected a list of template names, got {can_spawn!r}"
        )
    for i, template in enumerate(can_spawn):
        if not isinstance(template, str) or not template:
            raise ConfigError(f"{where}.can_spawn[{i}]: expected a template name, got {template!r}")
    named = None if sandbox is None else _check_sandbox(sandbox, f"{where}.sandbox")
    bridge = _check_bridged(bridged, delivery, limits, where)
    spec = MemberSpec(
        agent=agent,
        args=dict(args),
        name=name,
        role=role,
        count=copies,
        limits=limits,
        delivery=delivery,  # narrowed by the check above
        model=model,
        can_spawn=tuple(can_spawn),
        sandbox=named,
        bridged=bridge,
    )
    if factory is not None:
        _check_args(factory, spec, where)
    return spec


def _check_bridged(
    bridged: object, delivery: object, limits: MemberLimits, where: str
) -> Bridge | None:
    """How a member is bridged (``None``: it is not), refusing what a bridged member cannot
    have in Inspect 0.3.285, naming the field."""
    if bridged is None or bridged is False:
        return None
    bridge: Bridge
    if bridged is True or bridged == "in_process":
        bridge = "in_process"
    elif bridged == "sandbox":
        bridge = "sandbox"
    else:
        raise ConfigError(
            f"{where}.bridged: expected true (or 'in_process': agent_bridge() in this process), "
            f"'sandbox' (sandbox_agent_bridge() in the member's sandbox) or false, got "
            f"{shown(bridged)}"
        )
    if delivery == "notify":
        raise ConfigError(
            f"{where}.delivery: a bridged member cannot be in notify mode: its agent runs its own "
            "conversation loop through Inspect's agent bridge, so the swarm has no turn boundary "
            "at which to add a notice (swarm_on_continue() is react's); give delivery 'poll' or "
            "leave it out (a bridged member polls: it learns of changes from the channel tools' "
            "results and swarm_wait)"
        )
    if bridge == "sandbox":
        for kind in ("turn", "message"):
            if getattr(limits, kind) is not None:
                raise ConfigError(
                    f"{where}.limits.{kind}: a member bridged from its sandbox cannot have a "
                    f"{kind} limit: its model calls run in Inspect's sandbox service, where "
                    f"Inspect 0.3.285 ends the whole sample (not the member) when a {kind} limit "
                    "is reached; give it token, cost or time limits, which the swarm enforces "
                    "by ending the member"
                )
    return bridge


def _check_sandbox(sandbox: object, field: str) -> str:
    """``sandbox`` if it can name an environment, else ``ConfigError`` for ``field``."""
    if not isinstance(sandbox, str) or not sandbox:
        raise ConfigError(
            f"{field}: expected the name of one of the sample's sandbox environments (such as "
            f"'agent-1' or '{MEMBER_FIELD}'), got {shown(sandbox)}"
        )
    rest = sandbox.replace(MEMBER_FIELD, "")
    if "{" in rest or "}" in rest:
        raise ConfigError(
            f"{field}: {shown(sandbox)}: the only field a sandbox name may hold is {MEMBER_FIELD}"
        )
    if ":" in sandbox:
        raise ConfigError(
            f"{field}: {shown(sandbox)}: a sandbox environment's name has no ':' (Inspect reads "
            "'name:path' in a sample's files as a file in environment 'name')"
        )
    return sandbox


def _check_args(factory: Callable[..., Any], spec: MemberSpec, where: str) -> None:
    """Refuse ``args`` the factory's signature cannot take, before any sample runs."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return  # no signature to check (a builtin or C callable): the call will tell
    try:
        signature.bind(**spec.factory_args)
    except TypeError as ex:
        who = spec.name or spec.default_name
        raise ConfigError(
            f"{where}.args: member {who!r}: the @agent factory {spec.default_name!r} cannot "
            f"be called with these arguments: {ex}"
        ) from None


def _lookup_factory(name: str, field: str) -> Callable[..., Agent]:
    # Inspect's public API can only build from a name (registry_create); checking that a name
    # exists without building uses the lookup `inspect eval --solver` itself relies on.
    found = registry_lookup("agent", name)
    if found is None:
        close = did_you_mean(name, registry_names("agent"))
        raise ConfigError(
            f"{field}: no @agent called {shown(name)} is registered with Inspect{close}; give "
            "a package-qualified name such as 'mypkg/worker', or import the module defining it"
        )
    return cast(Callable[..., Agent], found)


def check_member_name(name: object, field: str) -> str:
    """``name`` if it is a valid member name, else ``ConfigError`` for ``field``."""
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{field}: a member name must be a non-empty string, got {shown(name)}")
    if not _NAME.fullmatch(name):
        raise ConfigError(
            f"{field}: {shown(name)} must start with a letter or digit and use only letters, "
            "digits, '.', '_' and '-' (at most 64 characters)"
        )
    if name in RESERVED_NAMES:
        raise ConfigError(
            f"{field}: {name!r} is reserved by Inspect (init, solvers and scorers name sample "
            "phases)"
        )
    if name in RELATIONS:
        raise ConfigError(
            f"{field}: {name!r} is reserved by swarm-eval (send_message reads 'parent' and "
            "'children' as relations, not member names)"
        )
    return name


@attrs.frozen(kw_only=True)
class RosterEntry:
    """A named member and the record it came from."""

    spec: MemberSpec
    info: MemberInfo


def expand_roster(specs: Sequence[MemberSpec]) -> list[RosterEntry]:
    """Name every member of ``specs``.

    A counted record gives ``name-1`` ... ``name-k``; a default name used by several members
    across the roster is numbered across records (6 + 1 ``react`` give ``react-1`` ...
    ``react-7``); explicit names are never renumbered.  Duplicate names are an error.
    """
    if not specs:
        raise ConfigError("members: a swarm needs at least one member")
    total = sum(s.count for s in specs)
    if total > MAX_MEMBERS:
        raise ConfigError(f"members: {total:,} members in all; a swarm has at most {MAX_MEMBERS:,}")
    default_uses = Counter(s.default_name for s in specs if s.name is None for _ in range(s.count))
    numbered: Counter[str] = Counter()
    entries: list[RosterEntry] = []
    seen: dict[str, int] = {}
    for spec_index, spec in enumerate(specs):
        for copy in range(1, spec.count + 1):
            if spec.name is not None:
                name = spec.name if spec.count == 1 else f"{spec.name}-{copy}"
            else:
                base = spec.default_name
                if default_uses[base] > 1:
                    numbered[base] += 1
                    name = f"{base}-{numbered[base]}"
                else:
                    name = base
            check_member_name(name, f"members[{spec_index}].name")
            if name in seen:
                raise ConfigError(
                    f"members[{spec_index}].name: member name {name!r} is used twice (also by "
                    f"members[{seen[name]}]); names must be unique"
                )
            seen[name] = spec_index
            entries.append(
                RosterEntry(
                    spec=spec,
                    info=MemberInfo(
                        name=name, role=spec.role, index=len(entries), delivery=spec.delivery
                    ),
                )
            )
    return entries


def build_agent(spec: MemberSpec) -> Agent:
    """The agent a member runs: the built one, or a new one from the factory."""
    if isinstance(spec.agent, str):
        built = registry_create("agent", spec.agent, **spec.factory_args)
    elif spec.is_factory:
        built = spec.agent(**spec.factory_args)
    else:
        built = spec.agent
    if not is_agent(built) and not callable(built):
        raise ConfigError(f"member agent {spec.default_name!r} did not build an agent: {built!r}")
    return built
