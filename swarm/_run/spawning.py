"""Children spawned at run time: requests decided through a hook, the children joining the
roster, their ends and receipts, teardown, and the spawn ledger.

A member asks (``spawn_child``); the request is refused before any plugin sees it when the swarm
is stopping or the member may not use the template; otherwise it becomes a ``SpawnRequest`` for
``swarm_admit_spawn``, whose kernel default (``SpawnPolicy``, ``trylast``) enforces the
topology's ``spawning`` limits.  An admitted child joins the running swarm and starts at once,
on the task its parent gave.  When a child ends, its parent gets a receipt through the channel
that carries them; when any member ends, its live children are torn down (``delete``, reason
``parent_ended``).  Everything is written down in the spawn ledger by the runtime.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, NoReturn, Protocol

import anyio
import attrs
from inspect_ai.tool import ToolError

from swarm._checks import shortened, shown
from swarm._hooks.calls import RunHooks
from swarm._report.spawns import SpawnEntry, SpawnOp, spawn_figures
from swarm._run.members import RunMember
from swarm._run.ports import SandboxPort
from swarm._spec.roster import MAX_MEMBERS, MemberSpec, check_member_name
from swarm._spec.spawning import Spawning
from swarm.errors import ConfigError
from swarm.hookspecs import hookimpl
from swarm.records import Receipt, SpawnDecision, SpawnRequest, SwarmView

__all__ = ["SpawnHost", "SpawnPolicy", "Spawner", "spawner_context"]


class SpawnHost(Protocol):
    """What spawning needs of the run."""

    stopping: bool

    @property
    def sandboxes(self) -> SandboxPort:
        """Which sandbox environments the run can give its members."""
        ...

    def now(self) -> float:
        """Seconds since the swarm started."""
        ...

    def view(self) -> SwarmView:
        """A frozen snapshot of the run now."""
        ...

    def join(self, spec: MemberSpec, wanted: str, *, parent: str | None) -> RunMember:
        """A member joins the running swarm."""
        ...

    def member(self, name: str) -> RunMember:
        """The member called ``name``."""
        ...

    def start_child(self, member: RunMember) -> None:
        """Start a member that joined."""
        ...

    def tear_down(self, member: RunMember, *, now: bool) -> None:
        """Refuse the member's model calls now and cancel it: ``now``, or after the grace."""
        ...


class SpawnPolicy:
    """The kernel's default decision on spawn requests: the topology's ``spawning`` limits."""

    def __init__(self, limits: Spawning) -> None:
        self.limits = limits
        self.spawner: Spawner | None = None  # set once the run's spawner is built

    @hookimpl(trylast=True)
    def swarm_admit_spawn(self, view: SwarmView, request: SpawnRequest) -> SpawnDecision:
        lim = self.limits
        checks = [
            (
                request.depth > lim.max_depth,
                "max_depth",
                f"a child of yours would be at depth {request.depth}; the deepest allowed is "
                f"{lim.max_depth}",
            ),
            (
                request.children >= lim.max_children,
                "max_children",
                f"you have spawned {request.children} children, the most one member may",
            ),
            (
                request.live_members >= lim.max_live,
                "max_live",
                f"{request.live_members} members are running, the most at once in this swarm",
            ),
            (
                request.spawns >= lim.max_spawns,
                "max_spawns",
                f"this swarm has spawned {request.spawns} children, the most it may",
            ),
            (
                request.live_with_name,
                "live_name",
                f"a child of yours called {request.name!r} is still running; wait for it or "
                "cancel it first",
            ),
            (
                request.respawns > lim.retries,
                "retries",
                f"{request.name!r} was spawned {request.respawns} times already; it may be "
                f"spawned again at most {lim.retries} time(s)",
            ),
        ]
        for refused, reason, message in checks:
            if refused:
                return SpawnDecision.refused(reason, f"spawn refused: {message}.")
        return SpawnDecision.admitted()

    @hookimpl
    def swarm_extra_metrics(self, view: SwarmView) -> dict[str, Any]:
        return {} if self.spawner is None else self.spawner.figures()


class Spawner:
    """One run's spawning: requests, children, ends, receipts, teardown and the ledger."""

    def __init__(
        self, host: SpawnHost, hooks: RunHooks, templates: Mapping[str, MemberSpec]
    ) -> None:
        self._host = host
        self._hooks = hooks
        self._templates = dict(templates)
        self.entries: list[SpawnEntry] = []
        # per child: (parent, requested name, template); per parent: its children in order
        self._child: dict[str, tuple[str, str, str]] = {}
        self._children: dict[str, list[str]] = {}
        # per parent: its running children in order (a dict as an ordered set); per parent and
        # requested name: the children asked for by that name (so that a spawn and an end cost
        # O(1), not O(the parent's children): a lead of n children made that O(n^2))
        self._live: dict[str, dict[str, None]] = {}
        self._named: dict[tuple[str, str], list[str]] = {}
        self._ended: set[str] = set()
        self._all_ended: dict[str, anyio.Event] = {}

    # -- requests ------------------------------------------------------------------------------

    def _is_roster_name(self, name: str) -> bool:
        """Whether a roster member (not a spawned one) is called ``name``."""
        try:
            return self._host.view().member(name).depth == 0
        except KeyError:
            return False

    def spawn(self, parent_name: str, name: str, task: str, template: str) -> str:
        """Decide one spawn request of member ``parent_name``; what the model reads
        (``ToolError`` when refused)."""
        parent = self._host.member(parent_name)
        spec = parent.entry.spec
        template = template or (spec.can_spawn[0] if len(spec.can_spawn) == 1 else "")
        request = self._request(parent, name, task, template)
        if self._host.stopping:
            self._refuse(request, "stopping", "the swarm is stopping; nothing new starts.")
        if template not in spec.can_spawn:
            allowed = ", ".join(spec.can_spawn) or "none"
            self._refuse(
                request,
                "template",
                f"you may not spawn template {shown(template)} (yours: {allowed}).",
            )
        try:
            check_member_name(name, "name")
        except ConfigError as ex:
            self._refuse(request, "name", str(ex))
        environment = self._templates[template].sandbox_for(name)
        if environment is not None and environment != self._templates[template].sandbox:
            if self._is_roster_name(name):  # {member} would be that member's environment
                self._refuse(
                    request,
                    "sandbox",
                    f"spawn refused: {shown(name)} is a roster member's name, and template "
                    f"{template!r} would run the child in that member's environment "
                    f"{environment!r}; give the child a name of its own.",
                )
        who = f"template {template!r} (for {name!r})"
        problem = None if environment is None else self._host.sandboxes.problem(environment, who)
        if problem is not None:  # a {member} name: the child's only environment is not there
            self._refuse(request, "sandbox", f"spawn refused: {problem}.")
        members = len(self._host.view().members)
        if members >= MAX_MEMBERS:  # no plugin admits past what a swarm may hold
            self._refuse(
                request, "members", f"the swarm has {members:,} members, the most a swarm may."
            )
        decided = self._hooks.admit_spawn(self._host.view(), request)
        if decided is not None and not decided[1].admit:
            decision = decided[1]
            reason = decision.reason or "refused"
            self._refuse(request, reason, decision.message or f"spawn refused: {reason}.")
        child = self._host.join(self._templates[template], name, parent=parent.name)
        child.task = task
        self._child[child.name] = (parent.name, name, template)
        self._children.setdefault(parent.name, []).append(child.name)
        self._live.setdefault(parent.name, {})[child.name] = None
        self._named.setdefault((parent.name, name), []).append(child.name)
        self._all_ended.pop(parent.name, None)
        self._write("spawn", child.name, request, task=task)
        self._host.start_child(child)
        renamed = "" if child.name == name else f" (as {child.name}: {self._taken(name)})"
        return (
            f"Spawned {name}{renamed} from template {template}. It works on your task now and "
            "reports back to you; wait_for_children() waits for all of your children."
        )

    def _taken(self, name: str) -> str:
        """Why a child asked for as ``name`` got another name: a member has it."""
        if self._host.member(name).state == "ended":
            return f"{name} ran before"
        return f"a running member is called {name}"

    def _request(self, parent: RunMember, name: str, task: str, template: str) -> SpawnRequest:
        mine = self._children.get(parent.name, [])
        same = self._named.get((parent.name, name), [])
        view = self._host.view()
        return SpawnRequest(
            parent=parent.name,
            name=name,
            template=template,
            task=task,
            depth=parent.info.depth + 1,
            time=self._host.now(),
            children=len(mine),
            live_children=len(self._live.get(parent.name, ())),
            live_members=view.count("running"),
            spawns=len(self._child),
            live_with_name=any(c not in self._ended for c in same),
            respawns=len(same),
        )

    def _refuse(self, request: SpawnRequest, reason: str, message: str) -> NoReturn:
        # the ledger keeps what a refusal repeats of the model's name and template, no more
        kept = attrs.evolve(
            request, name=shortened(request.name), template=shortened(request.template)
        )
        self._write("refused", None, kept, task=request.task, reason=reason)
        raise ToolError(message)

    def _write(
        self,
        op: SpawnOp,
        member: str | None,
        request: SpawnRequest | None = None,
        *,
        task: str | None = None,
        status: str | None = None,
        reason: str | None = None,
    ) -> None:
        if request is not None:
            parent, requested, template, depth = (
                request.parent,
                request.name,
                request.template,
                request.depth,
            )
        else:
            assert member is not None
            parent, requested, template = self._child[member]
            depth = self._host.view().member(member).depth
        self.entries.append(
            SpawnEntry(
                seq=len(self.entries) + 1,
                time=self._host.now(),
                op=op,
                member=member,
                requested=requested,
                parent=parent,
                depth=depth,
                template=template,
                task=task,
                status=status,
                reason=reason,
            )
        )

    # -- ends ----------------------------------------------------------------------------------

    def member_ended(self, member: RunMember, status: str) -> None:
        """A member ended: a spawned one is written down and its parent gets a receipt; any
        member's live children are torn down."""
        name = member.name
        if name in self._child:
            self._ended.add(name)
            self._write("end", name, status=status)
            parent = self._child[name][0]
            live = self._live[parent]
            live.pop(name, None)
            self._receipt(member, parent, status)
            if not live:
                self._all_ended.setdefault(parent, anyio.Event()).set()
        for child in self.live_children(name):
            self.delete(child, "parent_ended")

    def _receipt(self, member: RunMember, parent: str, status: str) -> None:
        error = type(member.exception).__name__ if member.exception is not None else None
        how = {
            "submitted": "finished without replying to you",
            "errored": f"errored ({error})" if error else "errored",
            "cancelled": "was cancelled",
            "stopped": "was stopped",
        }.get(status, f"ended: {status}")
        receipt = Receipt(
            child=member.name,
            parent=parent,
            status=status,
            error_type=error,
            text=f"[Receipt] Your child {member.name} {how}.",
            time=self._host.now(),
        )
        self._hooks.deliver_receipt(self._host.view(), receipt)

    def delete(self, child: str, reason: str) -> None:
        """Begin tearing a live child down, written down now: cancelled at once when its parent
        cancels it, else (its parent ended) stopped and cancelled after the grace."""
        self._write("delete", child, reason=reason)
        self._host.tear_down(self._host.member(child), now=reason == "cancelled")

    def stopping(self) -> None:
        """The swarm began its stop: release every wait for children."""
        for event in self._all_ended.values():
            event.set()

    # -- what a parent sees --------------------------------------------------------------------

    def live_children(self, parent: str) -> list[str]:
        """``parent``'s children still running."""
        return list(self._live.get(parent, ()))

    def cancel(self, parent: str, name: str) -> str:
        """Cancel ``parent``'s running child called ``name`` (its requested or member name)."""
        live = self.live_children(parent)
        found = [c for c in live if c == name or self._child[c][1] == name]
        if not found:
            raise ToolError(f"you have no running child called {shown(name)}.")
        self.delete(found[0], "cancelled")
        return f"Cancelling {found[0]}; you get a receipt when it has ended."

    def describe(self, parent: str) -> str:
        """``list_children``: each child, its state and status, and whether it replied."""
        mine = self._children.get(parent, [])
        if not mine:
            return "You have no children."
        view = self._host.view()
        lines = []
        for child in mine:
            m = view.member(child)
            replied = self._hooks.replied(view, child, parent)
            said = "replied" if replied else "has not replied" if replied is False else ""
            state = m.state if m.status is None else f"{m.state} ({m.status})"
            lines.append(f"- {child} [{self._child[child][2]}]: {state}; {said}".rstrip("; "))
        return "\n".join(lines)

    async def wait(self, parent: str, timeout: float) -> str:
        """``wait_for_children``: until every child of ``parent`` has ended (its receipt then
        delivered), the swarm stops, or ``timeout`` seconds pass."""
        if not self._children.get(parent):
            return "You have no children."
        event = self._all_ended.setdefault(parent, anyio.Event())
        if self.live_children(parent):
            with anyio.move_on_after(timeout):
                await event.wait()
        live = self.live_children(parent)
        if live and self._host.stopping:
            return f"The swarm is stopping; {len(live)} still running: {', '.join(live)}."
        if live:
            return f"{len(live)} still running after {timeout:g} s: {', '.join(live)}."
        done = len(self._children[parent])
        return (
            f"All {done} of your children have ended; their replies and receipts are in "
            "read_messages()."
        )

    def figures(self) -> dict[str, Any]:
        """The spawning figures of the metrics."""
        return spawn_figures(self.entries)


spawner_context: ContextVar[Spawner | None] = ContextVar("swarm_spawner", default=None)
