"""Bridged members at run time: marked when their calls come through Inspect's agent bridge, and
halted rather than raised into when a call comes from the sandbox service.

A member declared ``bridged`` is marked from the start.  Any other member is marked at its first
call that Inspect's bridge makes (``current_agent_bridge_context()`` is set): it is bridged in
the ledger, polls from then on (its agent runs its own loop, so no notice can reach it), and
the transcript says so in one info event.

Inspect's sandbox service (``sandbox_agent_bridge()``) ends the whole sample when a limit error
is raised in it, so the swarm never raises one there: a call it would refuse gets an error the
agent reads as its provider's (``BridgedCallRefused``), and a call that reaches a cap, a share
or a member limit completes, metered; either way the member is then cancelled, and it ends with
the status the limit or the stop gives it.

When the run begins, a member or template bridged from its sandbox is refused where the bridge
cannot run: with no sample sandbox, or in a provider ``NO_SANDBOX_BRIDGE`` names (``bwrap``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from inspect_ai.log import transcript
from inspect_ai.util import registry_info

from swarm._inspect.private import sample_sandboxes, sandbox_unproxied
from swarm._run.members import RunMember
from swarm._spec.roster import MEMBER_FIELD, Bridge, MemberSpec
from swarm.errors import ConfigError
from swarm.records import INFO_SOURCE

__all__ = [
    "NO_SANDBOX_BRIDGE",
    "BridgedCallRefused",
    "check_sandbox_bridges",
    "halt",
    "note_bridged",
]

logger = logging.getLogger("swarm")


class BridgedCallRefused(RuntimeError):
    """A sandbox-bridged member's model call the swarm refused (its share is used up, the swarm
    is stopping, or the member is torn down): the agent in the sandbox gets it as an error
    response, whose text is the limit error's message (``Stopped by the swarm: <reason>``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


def note_bridged(member: RunMember, bridge: Bridge) -> None:
    """``member`` made a call through Inspect's ``bridge``: mark it (once per kind)."""
    if member.bridged == bridge:
        return
    declared = member.entry.spec.bridged
    member.bridged = bridge
    polled = member.delivery == "notify"
    if polled:
        member.delivery = "poll"
    limits = member.entry.spec.limits
    if bridge == "sandbox" and (limits.turn is not None or limits.message is not None):
        logger.warning(
            "swarm: member %r's calls come through the sandbox agent bridge but it was not "
            "declared bridged='sandbox': its turn or message limit, if reached, ends the "
            "whole sample (Inspect's sandbox service does so for any limit)",
            member.name,
        )
    transcript().info(
        {
            "version": 1,
            "type": "bridged",
            "member": member.name,
            "bridge": bridge,
            "declared": declared,
            "delivery": member.delivery,
            "notify_refused": polled,
        },
        source=INFO_SOURCE,
    )


def halt(member: RunMember, status: str) -> None:
    """End a sandbox-bridged member with ``status`` by cancelling it (the first status wins)."""
    if member.halted is None:
        member.halted = status
    if member.scope is not None:
        member.scope.cancel()


NO_SANDBOX_BRIDGE = {
    # the ``bwrap`` provider (swarm._faces.bwrap), named here: the runtime sits below the faces
    "bwrap": "every command in a bwrap sandbox runs in pid and network namespaces of its own "
    "and its processes die with it, and nothing outside /workspace and /tmp is writable, so "
    "Inspect's sandbox tools (installed under /var/tmp, their server left running) and the "
    "bridge's proxy cannot run there, nor could the agent's command reach the proxy",
}
"""Sandbox providers where ``sandbox_agent_bridge()`` cannot work, and why."""


def _provider_name(environment: Any) -> str:
    kind = type(sandbox_unproxied(environment))
    try:
        return str(registry_info(kind).name).rpartition("/")[2]
    except Exception:
        return kind.__name__


def check_sandbox_bridges(
    members: Iterable[RunMember], templates: Mapping[str, MemberSpec]
) -> None:
    """Refuse, when the run begins, a member or template bridged from its sandbox
    (``bridged="sandbox"``) whose sample has no sandbox, or whose environment's provider cannot
    run Inspect's sandbox agent bridge (``NO_SANDBOX_BRIDGE``)."""
    owners = [
        (f"member {m.name!r}", m.entry.spec.sandbox_for(m.name))
        for m in members
        if m.entry.spec.bridged == "sandbox"
    ]
    owners += [
        (
            f"template {name!r}",
            None if t.sandbox is None or MEMBER_FIELD in t.sandbox else t.sandbox,
        )
        for name, t in templates.items()
        if t.bridged == "sandbox"
    ]
    if not owners:
        return
    found = sample_sandboxes()
    for who, named in owners:
        if found is None:
            raise ConfigError(
                f"bridged: {who} is bridged from its sandbox (bridged='sandbox') and the sample "
                "has no sandbox; give the task one (sandbox='docker', or 'local' on a machine "
                "you trust)"
            )
        environments, default = found
        env = environments.get(named or default, environments[default])
        provider = _provider_name(env)
        why = NO_SANDBOX_BRIDGE.get(provider)
        if why is not None:
            raise ConfigError(
                f"bridged: {who} is bridged from its sandbox (bridged='sandbox'), which Inspect "
                f"0.3.285's sandbox_agent_bridge() cannot do in a {provider!r} sandbox: {why}; "
                "use sandbox='docker' (or 'local' on a machine you trust)"
            )
