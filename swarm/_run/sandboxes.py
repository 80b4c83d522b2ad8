"""Each member's own sandbox environment, and what the runtime saw its tools read.

With ``sandboxes.per_member`` the sample's default environment is a staging area no member sees.
When a member starts (a spawned child too, once it joined), ``enter`` gives it its environment:
its ``share`` group's, or a fresh one of the staging area's provider (``sample_init`` of the
same class), with the sample files ``sandboxes.files`` names for it copied from the staging area.
Inside the member's task, ``inspect_ai.util.sandbox()`` then returns that environment and no
other.  Each environment is added to the sample's own environments as ``swarm:<name>``, so it
lives until the sample's scoring is done (a scorer reads the lead's files there:
``swarm.member_sandbox``) and Inspect cleans it up with the sample.

Every command or file call a member's tools make in its environment is bracketed: when it ends,
the runtime collects the host kernel's file events (``inotify``) on every member environment's
directory and records them as that member's (an event in another member's directory goes to
that directory's member while one of its commands runs, else to the member whose call just
ended: only a non-isolating provider such as ``local`` lets one member reach another's files,
or the staging area, whose events are recorded with the sandbox ``""``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar, Token
from pathlib import Path
from typing import Any

import anyio
from inspect_ai.util import SandboxEnvironment, registry_info, store

from swarm._inspect.private import (
    sample_sandboxes,
    sandbox_proxy,
    sandbox_unproxied,
    use_sandbox,
)
from swarm._report.reads import ReadEntry, ReadsTaken
from swarm._run.bridging import check_sandbox_bridges
from swarm._run.docker_members import ContainerWatch, DockerMembers
from swarm._run.inotify import Inotify, inotify_available
from swarm._run.members import RunMember
from swarm._run.turns import RUNTIME, turns_for
from swarm._run.watched_sandbox import WatchedSandbox
from swarm._spec.roster import MEMBER_FIELD, MemberSpec
from swarm._spec.sandboxes import Sandboxes, base_name
from swarm.errors import ConfigError
from swarm.records import READS_KEY

__all__ = ["ENV_PREFIX", "MemberSandboxes", "member_sandbox", "sandboxes_context"]

logger = logging.getLogger("swarm")

ENV_PREFIX = "swarm:"
"""A member environment's name among the sample's environments: ``swarm:<group>``."""
STAGING = ""
"""The ``sandbox`` of a file event in the staging area (the sample's own environment)."""


def member_sandbox(member: str) -> SandboxEnvironment:
    """The sandbox environment member ``member`` worked in, while the sample runs (a scorer's
    way to the lead's files): its own with ``sandboxes.per_member``, the sample's environment
    it named (``member(sandbox=...)``), else the sample's default.

    Raises:
        ProcessLookupError: the sample has no sandbox.
    """
    found = sample_sandboxes()
    if found is None:
        raise ProcessLookupError("the sample has no sandbox environment")
    environments, default = found
    env = environments.get(f"{ENV_PREFIX}{member}")
    if env is None:  # a member of a share group: its group's environment, as the run recorded
        reads = store().get(READS_KEY)
        info = reads.get("members", {}).get(member) if isinstance(reads, dict) else None
        group = info.get("sandbox") if isinstance(info, dict) else None
        env = environments.get(f"{ENV_PREFIX}{group}", environments.get(str(group)))
    found_env: SandboxEnvironment = env if env is not None else environments[default]
    return found_env


def host_directory(environment: Any) -> Path | None:
    """The host directory an environment's working directory is, when it has one (``bwrap``:
    ``host_directory``; Inspect's ``local``: its temporary directory)."""
    inner = sandbox_unproxied(environment)
    found = getattr(inner, "host_directory", None)
    if found is None:
        directory = getattr(inner, "directory", None)
        found = getattr(directory, "name", None)
    return None if found is None else Path(found)


class MemberSandboxes:
    """The run's member environments and the file events of their tools."""

    def __init__(
        self,
        config: Sandboxes,
        clock: Callable[[], float],
        calls_of: Callable[[str], int] = lambda member: 0,
    ) -> None:
        self.config = config
        self._clock = clock
        self._calls_of = calls_of  # a member's model calls sent so far (``Bus.calls_sent``)
        self._staging: dict[str, Any] | None = None
        self._default: Any = None
        self._provider: Any = None
        self._envs: dict[str, Any] = {}
        self._roots: dict[str, str] = {}  # host directory -> group
        self._locks: dict[str, anyio.Lock] = {}
        self._members: dict[str, dict[str, Any]] = {}
        self._busy: dict[str, int] = {}
        self._entries: list[ReadEntry] = []
        self._watch: Inotify | None = None
        self._docker: DockerMembers | None = None
        self._watchers: dict[str, ContainerWatch] = {}  # group -> its container's watcher
        self._unwatched: set[str] = set()  # environments whose file events nobody sees
        self._named = False
        self._roster: frozenset[str] = frozenset()
        self._token: Token[MemberSandboxes | None] | None = None

    def begin(self, members: Iterable[RunMember], templates: Mapping[str, MemberSpec]) -> None:
        """The run begins: find the sample's environments (with ``per_member``, the staging
        area), and check that every environment a member or template names is one of them."""
        listed = list(members)
        self._roster = frozenset(m.name for m in listed)
        check_sandbox_bridges(listed, templates)
        specs = [*(m.entry.spec for m in listed), *templates.values()]
        self._named = any(spec.sandbox is not None for spec in specs)
        if not self.config.per_member and not self._named:
            return
        self._token = sandboxes_context.set(self)  # a subagent's tool reaches it (enter_subagent)
        found = sample_sandboxes()
        if found is not None:
            self._staging, default = found
        for m in listed:
            self._check(m.entry.spec.sandbox_for(m.name), f"member {m.name!r}")
        for name, template in templates.items():
            if template.sandbox is not None and MEMBER_FIELD not in template.sandbox:
                self._check(template.sandbox, f"template {name!r}")
        if self._staging is None:
            raise ConfigError(
                "sandboxes.per_member: the sample has no sandbox to give members theirs from; "
                "give the task a sandbox (sandbox='bwrap', 'local' or 'docker')"
            )
        self._default = self._staging[default]
        self._provider = type(sandbox_unproxied(self._default))
        self._watch = Inotify() if inotify_available() else None
        if self.config.per_member and self.provider == "docker":
            self._docker = DockerMembers(self._provider, self._default)
        staging = host_directory(self._default)
        if self.config.per_member and staging is not None and self._watch is not None:
            self._roots[str(staging)] = STAGING  # reachable under local only
            self._watch.watch(staging)

    def _check(self, environment: str | None, who: str) -> None:
        problem = None if environment is None else self.problem(environment, who)
        if problem is not None:
            raise ConfigError(f"sandbox: {problem}")

    def problem(self, environment: str, who: str) -> str | None:
        """Why the run cannot give ``who`` the sample's ``environment`` it names, or ``None``
        (the sample's environments as the run began: a member's task sees only its own)."""
        if self._staging is None:
            return (
                f"{who} names the sandbox environment {environment!r}, and the sample has no "
                "sandbox; give the task one with an environment of that name"
            )
        if environment in self._staging:
            return None
        known = ", ".join(n for n in self._staging if not n.startswith(ENV_PREFIX))
        return (
            f"{who} names the sandbox environment {environment!r}, which this sample does not "
            f"have (its environments: {known})"
        )

    @property
    def provider(self) -> str | None:
        """The member environments' provider (its registered name), or ``None``."""
        if self._provider is None:
            return None
        try:
            return str(registry_info(self._provider).name).rpartition("/")[2]
        except Exception:
            return str(self._provider.__name__)

    async def enter(self, member: str, environment: str | None) -> None:
        """Give ``member`` its environment inside its own task, and make it the task's only
        sandbox: the sample's ``environment`` that it names, or with ``per_member`` its own
        (created, with the member's sample files)."""
        if self._staging is None:
            return
        if environment is not None:
            env = self._staging.get(environment)
            if env is None:  # a roster member's was checked when the run began, a child's
                raise ConfigError(f"sandbox: {self.problem(environment, repr(member))}")
            root = host_directory(env)
            if root is None or self._watch is None:
                self._unwatched.add(environment)  # e.g. a compose file's service
            elif str(root) not in self._roots:
                self._roots[str(root)] = environment
                self._watch.watch(root)
            self._use(member, environment, env, ())
            return
        if not self.config.per_member:
            return
        group, files = self._placement(member)
        env = await self._stocked(group, files, into_existing=True)  # a share group's too
        self._use(member, group, env, files)

    def _placement(self, member: str) -> tuple[str, tuple[str, ...]]:
        """The environment ``member`` works in and the sample files it receives.  A child
        renamed because a roster member holds the name it asked for (``b~2`` for ``b``) gets
        neither ``b``'s files nor its share group: a name is not a way into another member's
        files.  A retry of a spawned name (``w-a~2``) is placed as that name."""
        base = base_name(member)
        if base != member and base in self._roster:
            return member, ()
        return self.config.group(member), self.config.files_for(member)

    async def _stocked(self, group: str, files: Sequence[str], *, into_existing: bool) -> Any:
        """The run's own environment ``group`` (created on first use), holding the sample
        ``files``: copied when it is created, and ``into_existing`` when it was already."""
        lock = self._locks.setdefault(group, anyio.Lock())
        async with lock:
            env = self._envs.get(group)
            fresh = env is None
            if env is None:
                env = await self._create(group)
            if fresh or into_existing:
                # in the runtime's own turn: no member of a share group runs a call while the
                # copy's events are discarded, so none of theirs is discarded with them
                async with turns_for(env).turn(RUNTIME):
                    self.collect(None)
                    staging = sandbox_unproxied(self._default)
                    for path in files:
                        data = await staging.read_file(path, text=False)
                        self._drop_own_read(path)  # no await since the read: events queued
                        await env.write_file(path, data)
                    self._discard(group)
                    await self._settle_group(group, None, keep=False)  # no one's read
        return env

    def _use(self, member: str, name: str, env: Any, files: Sequence[str]) -> None:
        """Make ``env`` (called ``name`` in the reads record) the calling task's only sandbox,
        its calls watched.  Inspect's event-recording wrapper goes outside the watching one, as
        around a sample's own environment: ``exec_remote()`` (the sandbox agent bridge's) turns
        that wrapper's events off while it polls."""
        self._members[member] = {"sandbox": name, "files": list(files)}
        watched = WatchedSandbox(sandbox_unproxied(env), self, member, turns_for(env))
        use_sandbox(sandbox_proxy(watched))

    async def enter_subagent(self, name: str, files_of: str) -> bool:
        """Give the subagent run ``name`` (``<member>/AGENT-N``) its own environment inside the
        calling task, with the sample files ``sandboxes.files`` names for ``files_of`` (its
        subagent type), created at its first tool call; ``False`` without member sandboxes."""
        if not self.config.per_member or self._staging is None:
            return False
        files = self.config.files_for(files_of)
        env = await self._stocked(name, files, into_existing=False)  # each tool call enters
        self._use(name, name, env, files)
        return True

    async def _create(self, group: str) -> Any:
        assert self._staging is not None
        if self._docker is not None:  # its own container, and the watcher beside it
            inner, watch = await self._docker.create()
            if watch is None:
                self._unwatched.add(group)
            else:
                self._watchers[group] = watch
                self._roots[_container_root(group)] = group
        else:
            made = await self._provider.sample_init("swarm", None, {})
            inner = made.get("default", next(iter(made.values())))
        env = sandbox_proxy(inner)
        self._staging[f"{ENV_PREFIX}{group}"] = env  # cleaned up with the sample's own
        self._envs[group] = env
        root = host_directory(inner)
        if root is not None and self._watch is not None:
            self._roots[str(root)] = group
            self._watch.watch(root)
        elif self._docker is None:
            self._unwatched.add(group)  # no directory of the host to watch
        return env

    async def settle(self, member: str) -> None:
        """A call of ``member``'s tools ended: record the file events queued now (its
        container's watcher's first, when it has one)."""
        group = self._members.get(member, {}).get("sandbox")
        if group is not None:
            await self._settle_group(str(group), member, keep=True)
        self.collect(member)

    async def _settle_group(self, group: str, member: str | None, *, keep: bool) -> None:
        """Ask ``group``'s container watcher for the events queued until now; record them as
        ``member``'s (``keep``) or drop them (the runtime's own copy).  A watcher that does
        not answer leaves the environment unwatched."""
        watch = self._watchers.get(group)
        if watch is None:
            return
        with anyio.CancelScope(shield=True):  # also when the call was cancelled
            try:
                events = await watch.sync(_container_root(group))
            except OSError as ex:
                logger.warning("swarm: sandbox %r is no longer watched: %s", group, ex)
                self._unwatched.add(group)
                del self._watchers[group]
                return
        if keep:
            for event in events:
                self._record(event.root, event.path, event.op, member)

    def _drop_own_read(self, path: str) -> None:
        """Drop the events of the runtime's own read of ``path`` in the staging area (and
        record the others queued with them), before any other task can collect them."""
        if self._watch is not None:
            for event in self._watch.drain():
                own = self._roots.get(event.root) == STAGING and event.path == path
                if not own:
                    self._record(event.root, event.path, event.op, None)

    def _discard(self, group: str) -> None:
        """Drop the events of the runtime's own copy from the staging area into ``group``'s
        directory."""
        if self._watch is not None:
            for event in self._watch.drain():
                if self._roots.get(event.root) not in (group, STAGING):
                    self._record(event.root, event.path, event.op, None)

    def busy(self, member: str, delta: int) -> None:
        """A call of ``member``'s tools began (+1) or ended (-1)."""
        self._busy[member] = self._busy.get(member, 0) + delta

    def collect(self, member: str | None) -> None:
        """Record the file events queued now (``member``: whose call just ended)."""
        if self._watch is None:
            return
        for event in self._watch.drain():
            self._record(event.root, event.path, event.op, member)

    def _record(self, root: str, path: str, op: str, ended: str | None) -> None:
        group = self._roots.get(root, "")
        owners = [m for m, info in self._members.items() if info["sandbox"] == group]
        if ended is not None and ended in owners:
            who = ended
        else:
            running = [m for m in owners if self._busy.get(m, 0) > 0]
            fallback = ended if ended is not None else owners[0] if owners else ""
            who = running[0] if running else fallback
        seq = len(self._entries)
        call = self._calls_of(who) if who else None  # the call whose tools made the event
        entry = ReadEntry(
            seq=seq, time=self._clock(), member=who, sandbox=group, path=path, op=op, call=call
        )
        last = self._entries[-1] if self._entries else None
        key = (entry.member, entry.sandbox, entry.path, entry.op, entry.call)
        if last is not None and (last.member, last.sandbox, last.path, last.op, last.call) == key:
            return  # one entry for a run of the same event in one call (a read in many chunks)
        self._entries.append(entry)

    def finish(self) -> ReadsTaken | None:
        """The run ends: the last events, and what every member environment saw."""
        if not self.config.per_member and not self._named:
            return None
        self.collect(None)
        if self._watch is not None:
            self._watch.close()
        for watch in self._watchers.values():
            watch.stop()  # sync here; the process ends with its stream
        if self._token is not None:
            try:
                sandboxes_context.reset(self._token)
            except ValueError:  # finished in another context (a cancelled run's cleanup)
                pass
        return ReadsTaken(
            provider=self.provider,
            watched=(self._watch is not None or self._docker is not None) and not self._unwatched,
            members=dict(self._members),
            entries=tuple(self._entries),
        )


def _container_root(group: str) -> str:
    """The root of ``group``'s container watcher's events (no host path is one)."""
    return f"docker:{group}"


sandboxes_context: ContextVar[MemberSandboxes | None] = ContextVar("swarm_sandboxes", default=None)
