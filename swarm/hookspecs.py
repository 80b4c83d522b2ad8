"""The hook contract of swarm-eval: every hook a plugin can implement.

A plugin is a module or an object with functions named like these hooks, marked with
``@swarm.hookimpl``.  Four kinds:

- **Registration** hooks run once per process, when the plugin catalog is built.  They receive a
  ``register`` callback and return nothing.  Names from a third-party distribution are
  registered as ``<distribution>/<name>``; a name registered twice is an error naming both.
- **Decision** hooks are synchronous, ``firstresult`` and pure over a frozen ``SwarmView``: the
  first implementation that returns something other than ``None`` decides.  Built-in defaults
  are ``trylast`` so every plugin can override them; the selected controller is an ordinary
  implementation; a plugin installed in the environment is called before it (mark it
  ``trylast`` to defer to the controller, ``tryfirst`` to come before everything).
  An implementation that raises, or returns the wrong type, fails the run with a
  ``PluginError`` naming the plugin and the hook: the swarm stops, running members are cancelled
  (never recorded as errored: the fault is the plugin's), all three records are written, and
  then the sample fails with the error.
- **Collector** hooks call every implementation and gather what is not ``None``; the order of
  results is unspecified unless a hook says otherwise.  A failing implementation fails the run
  like a decision hook's (its part of the metrics, for ``swarm_extra_metrics``, holds the
  error instead).
- **Observer** hooks call every implementation for its side effects.  One that raises is logged
  with its plugin's name and the run goes on.

"Raises" means any exception, ``SystemExit``, ``KeyboardInterrupt`` and ``GeneratorExit``
included: none of them leaves the run.  A run-time hook is also bounded by the time the sample
has left before its time or working limit (at least a second, on a POSIX system's main
thread): one that has not returned by then is interrupted, its plugin dropped from the run, and
it counts as raising.  Keep hooks quick and pure; slow work belongs in a tool.

Per-run objects (the controller, the channels, observers) are registered on a small plugin
manager built for that run only, so concurrent samples never see each other's plugins.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

import pluggy

if TYPE_CHECKING:
    import click
    from inspect_ai.tool import Tool


from swarm.records import (
    Answer,
    Decision,
    Delivery,
    MemberEnded,
    MemberSubmitted,
    MemberView,
    NoticeLine,
    Quiescent,
    Receipt,
    Record,
    Rejection,
    RubricRule,
    SpawnDecision,
    SpawnRequest,
    SwarmResult,
    SwarmView,
    WaitNews,
)

__all__ = ["PROJECT", "Register", "hookimpl", "hookspec"]

PROJECT = "swarm"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class Register(Protocol):
    """The callback registration hooks receive: ``register(name, factory)``."""

    def __call__(self, name: str, factory: Callable[..., Any], /) -> None:
        """Register ``factory`` under ``name`` (namespaced by the plugin's distribution)."""


# ---------------------------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------------------------


@hookspec
def swarm_register_controllers(register: Register) -> None:
    """Register controller factories.

    A controller factory takes keyword parameters (those a topology gives under
    ``controller:``) and returns a controller: an object whose ``@hookimpl`` methods implement
    decision hooks (``swarm_start``, ``swarm_on_submission``, ``swarm_on_member_end``,
    ``swarm_on_quiescence``, ``swarm_choose_answer``...).  It is built and registered on each
    run's own plugin manager.  Optional attributes the kernel reads: ``verifier`` (``"task"``,
    a scorer name or a ``Scorer``: every submission is checked and the verdict is in
    ``MemberSubmitted.verified`` and ``MemberView.verified``), ``idle_seconds`` (call
    ``swarm_on_quiescence`` after that long with nothing happening), ``synthesis`` (a
    ``Synthesis``: the model and prompt of the final step an answer of mode ``synthesize``
    runs).

    :param register: call ``register(name, factory)`` once per controller.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def swarm_register_channels(register: Register) -> None:
    """Register channel factories.

    A channel factory takes keyword parameters and returns a channel: an object whose
    ``@hookimpl`` methods implement channel hooks (``swarm_member_instructions``,
    ``swarm_member_tools``, ``swarm_notice_lines``, ``swarm_wait_news``...).  The registered
    name is the channel's name in records.  Optional attributes the kernel reads: ``prefix``
    (record ids ``<prefix>-N``; a channel with one "has records": every member gets a
    ``comm`` entry for it in the metrics, zeros included), ``rate``
    (``(count, seconds)``: the kernel's rate control), ``max_wait`` (seconds: the channel can
    wake members, so ``swarm_wait`` is offered).

    :param register: call ``register(name, factory)`` once per channel.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def swarm_register_rubrics(register: Register) -> None:
    """Register scoring rubric factories (Inspect scorers over a swarm's artifacts).

    :param register: call ``register(name, factory)`` once per rubric.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def swarm_register_normalizers(register: Register) -> None:
    """Register answer normalisers: the names a topology file may give ``normalize:``.

    A normaliser is a function of one ``str`` (a member's answer) returning a ``str`` (the form
    ``vote`` and ``verify_then_vote`` compare; ``""`` is no vote).  Registered here, it is
    named in a topology file or ``-S`` value by its registered name (a third-party one as
    ``<distribution>/<name>``); a file can never name Python by its module path
    (``module:function`` is refused).  It is called on model-written text: keep it a pure
    function of its argument, with no side effects.

    :param register: call ``register(name, function)`` once per normaliser.
    :return: nothing.

    .. versionadded:: 0.3
    """


@hookspec
def swarm_register_commands(cli: click.Group) -> None:
    """Add subcommands to the ``swarm`` command line.

    Called once, when the ``swarm`` command starts.  Add commands to ``cli`` with
    ``@cli.command()``; a name the command line already has is an error naming the plugin.

    :param cli: the ``swarm`` command's click group.
    :return: nothing.

    .. versionadded:: 0.2
    """


# ---------------------------------------------------------------------------------------------
# Decisions: synchronous, firstresult, pure over the snapshot
# ---------------------------------------------------------------------------------------------


@hookspec(firstresult=True)
def swarm_start(view: SwarmView) -> Decision | None:
    """Decide who starts when the swarm begins.

    Stops at first non-None result.  The built-in default (``trylast``) starts every pending
    member.  Returning a ``Decision`` with ``stop`` set ends the swarm before anyone runs.

    :param view: the run before any member started (every member ``pending``).
    :return: a ``Decision``; ``None`` to defer to the next implementation.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def swarm_on_submission(view: SwarmView, event: MemberSubmitted) -> Decision | None:
    """Decide what happens when a member submits (its agent returned an answer).

    Stops at first non-None result.  Called before ``swarm_on_member_end`` for the same member.
    The built-in default does nothing.  ``Decision()`` (empty) vetoes later implementations,
    for example a controller's stop.

    :param view: the run with the member already ``ended`` and ``submitted``; every member's
        view holds the answer it submitted (``MemberView.answer``) and its verdict.
    :param event: who submitted, when, what (``answer``: the text of its final output, cut at
        ``ANSWER_MAX_CHARS``) and the verifier's verdict (``verified``).
    :return: a ``Decision``; ``None`` to defer.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def swarm_on_member_end(view: SwarmView, event: MemberEnded) -> Decision | None:
    """Decide what happens when a member ends, whatever its status.

    Stops at first non-None result.  The built-in default stops with ``all_done`` when no
    member is running (members left pending can only start by a decision).  Not called once
    the swarm is stopping.  A member with background work (Inspect's ``background()``) ends
    when that work has ended too: after its agent returns, the work drains for the budget's
    grace, so this hook (and a submission's) comes then, with the agent's status.

    :param view: the run with the member already ``ended``.
    :param event: who ended, with which status, and when.
    :return: a ``Decision``; ``None`` to defer.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def swarm_on_quiescence(view: SwarmView, event: Quiescent) -> Decision | None:
    """Decide what happens when nothing can change any more.

    Stops at first non-None result.  Called when every running member's own loop is waiting
    in ``swarm_wait`` and none of them has background work running (before the waits are
    released with ``all_waiting``), and, when the
    controller has an ``idle_seconds`` attribute, after that long with no record, model call,
    member start or member end.  The built-in default does nothing.

    :param view: the run now.
    :param event: why the swarm is quiescent, and for how long nothing has happened.
    :return: a ``Decision`` (``Decision(stop="quiescence")`` to stop); ``None`` to defer.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def swarm_choose_answer(view: SwarmView) -> Answer | None:
    """Choose which member's submission is the swarm's answer.

    Stops at first non-None result.  Called once, when the swarm's members have ended (before
    the final step; on an interrupted run, as its records are written); not after every
    change, so that a rule may read every submission without costing the roster's size per
    member end.  The
    built-in default picks the earliest submission (ties by roster order).  A controller's
    explicit ``Decision(answer=...)`` overrides this hook.  The view holds every member's
    answer, so a rule can choose by content (``swarm.vote``).  An
    ``Answer(member=None, mode="synthesize")`` asks for the final step: when every member has
    ended, one model call reads the answers and writes the answer (metered as the ledger's
    ``final``).

    :param view: the run now.
    :return: an ``Answer`` (``member=None`` for none, with a ``reason``); ``None`` to defer.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def swarm_delivery_mode(view: SwarmView, member: MemberView) -> Delivery | None:
    """Choose how ``member`` learns of channel activity: ``"notify"`` or ``"poll"``.

    Stops at first non-None result.  Called once per member, before it starts.  The built-in
    default returns the member's configured ``delivery``, else ``"poll"`` for a bridged member
    (``member.bridged``) and ``"notify"`` for any other.  A bridged member cannot get notices:
    ``"notify"`` for one is logged, written to the transcript as a ``delivery_refused`` info
    event and replaced by ``"poll"``.

    :param view: the run now.
    :param member: the member about to start.
    :return: ``"notify"`` or ``"poll"``; ``None`` to defer.

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def swarm_admit_record(view: SwarmView, record: Record) -> Rejection | None:
    """Admit or reject a write to a channel before it is applied.

    Stops at first non-None result: the first rejection wins, and every implementation is
    asked until one rejects.  The kernel's rate control (a channel's ``rate``) is one
    implementation; a policy plugin can add its own controls.  A rejection is shown to the
    model as a tool error with ``reason`` and counted per member, channel and ``control``.

    :param view: the run now.
    :param record: the write, stamped by the runtime (sender, loop, size, channel op); its
        ``seq`` is 0 until committed.
    :return: a ``Rejection(control, reason)``; ``None`` to admit (as far as this plugin goes).

    .. versionadded:: 0.1
    """


@hookspec(firstresult=True)
def swarm_admit_spawn(view: SwarmView, request: SpawnRequest) -> SpawnDecision | None:
    """Admit or refuse a member's request to spawn a child.

    Stops at first non-None result.  The kernel's default (``trylast``) enforces the topology's
    ``spawning`` settings: maximum depth, children per parent, live members in the swarm,
    spawns in total, one live child per requested name, and at most ``retries`` respawns of a
    name whose child ended.  A plugin can refuse what the defaults would admit, or admit what
    they would refuse, by returning its own decision.  Requests for a template the member may
    not spawn, and requests once the swarm is stopping, are refused before this hook.  A
    refusal is a tool error the model reads and an entry in the spawn ledger.

    :param view: the run now (the parent is running; its children are members with ``parent``
        set to it).
    :param request: who asked, for which name, template and task, and the counts the limits
        are about.
    :return: ``SpawnDecision.admitted()`` or ``SpawnDecision.refused(reason, message)``;
        ``None`` to defer.

    .. versionadded:: 0.2
    """


@hookspec(firstresult=True)
def swarm_deliver_receipt(view: SwarmView, receipt: Receipt) -> bool | None:
    """Deliver the runtime's receipt for a child that ended.

    Stops at first non-None result.  Called when a spawned member ends.  A channel that can
    carry receipts (one with a true ``receipts`` attribute, such as ``messages``) delivers it to
    the parent, unless the child had replied to its parent and ended ``submitted`` (then no
    receipt is needed), and returns ``True`` either way.  A swarm whose members may spawn has
    such a channel: the kernel adds ``messages`` when the topology names none.

    :param view: the run now, the child already ended.
    :param receipt: the child, its parent, how the child ended, and the sentence for the parent.
    :return: ``True`` once handled; ``None`` when this plugin does not carry receipts.

    .. versionadded:: 0.2
    """


@hookspec(firstresult=True)
def swarm_replied(view: SwarmView, child: str, parent: str) -> bool | None:
    """Whether ``child`` has replied to its ``parent`` (for ``list_children``).

    Stops at first non-None result.  Answered by the channel that carries receipts (the
    ``messages`` channel: a message from the child to the parent).

    :param view: the run now.
    :param child: a spawned member.
    :param parent: the member that spawned it.
    :return: whether it has; ``None`` when this plugin cannot tell.

    .. versionadded:: 0.2
    """


# ---------------------------------------------------------------------------------------------
# Collectors: every implementation, results gathered
# ---------------------------------------------------------------------------------------------


@hookspec
def swarm_member_tools(view: SwarmView, member: MemberView, nested: bool) -> list[Tool] | None:
    """Tools a member's loop gets from ``swarm_tools()``.

    Every implementation is called once per run for each kind of loop (the own loops of
    members that may spawn, every other member's own loop, subagent loops (``nested``)), not
    once per member: the result is shared, so a tool finds out who calls it at call time.
    Results are concatenated in channel order.  A channel whose tools should not reach
    subagents returns ``None`` when ``nested``.

    :param view: the run now.
    :param member: the member whose loop resolves its tools.
    :param nested: whether the loop is a subagent's rather than the member's own.
    :return: a list of Inspect tools; ``None`` for none.

    .. versionadded:: 0.1
    """


@hookspec
def swarm_notice_lines(view: SwarmView, member: MemberView, loop: str) -> NoticeLine | None:
    """A channel's line for a member's next notice (notify mode, own loop, turn boundary).

    Every implementation is called; the lines are joined into one ``[Swarm notice]``, which
    rides at the end of the turn's last tool result (a user message after a turn without one).
    A line should name only counts, swarm ids and roster names, never member-written text, and
    returning it covers what it names (the next notice omits it until it changes again).  Not
    called once the swarm is stopping or the member is torn down (its next model call would be
    refused).  The notice counts, is recorded as evidence and calls each line's ``seen`` with the
    run's time only when the member's model call whose input holds it is sent; mark what a line
    shows as seen there (``NoticeLine.seen``), not here.

    :param view: the run now.
    :param member: the member at a turn boundary of its own loop.
    :param loop: the loop's agent span id.
    :return: a ``NoticeLine``; ``None`` when the channel has nothing new for the member.

    .. versionadded:: 0.1
    """


@hookspec
def swarm_wait_news(
    view: SwarmView, member: MemberView, loop: str, path: str | None
) -> WaitNews | None:
    """What is news to a loop waiting in ``swarm_wait`` on a channel that supports waiting.

    Every implementation is called when a wait starts and whenever a record is committed
    while it waits; any result ends the wait with outcome ``news``.  Must be cheap: compute it
    from what changed for this loop, not by scanning the channel.  Raise ``ToolError`` for a
    ``path`` the channel cannot watch.

    :param view: the run now.
    :param member: the waiting member.
    :param loop: the waiting loop's agent span id.
    :param path: what the wait watches (``None``: everything).
    It may be called several times for the same change (when a record is committed and again
    when the woken wait looks), so it must report news without consuming it: news is spent
    when the loop views what it names.

    :return: ``WaitNews``; ``None`` when nothing watched has changed for this loop.

    .. versionadded:: 0.1
    """


@hookspec
def swarm_records(view: SwarmView) -> dict[str, dict[str, Any]] | None:
    """Records a plugin writes to the sample's store when the swarm ends, by store key.

    Every implementation is called once, when the swarm ends, after the kernel's own records.
    Each record is written to the store under its key and to the transcript as an ``InfoEvent``
    (source ``inspect_swarm``), like the kernel's; a protected key (``is_protected_key``: any
    ``inspect_swarm:`` key, or one of ``RESERVED_KEYS``) or a record that is not plain JSON is
    an error naming the plugin, and nothing is written for it.  The one exception is the
    message log (``inspect_swarm:messages``) of the built-in ``messages`` channel, which the
    kernel takes and writes as its own record.  Plugins use keys of their own.

    :param view: the run at its end.
    :return: a mapping of store key to a JSON-ready record; ``None`` for none.

    .. versionadded:: 0.2
    """


@hookspec
def swarm_member_instructions(view: SwarmView, member: MemberView) -> str | None:
    """Text to add to a member's preamble (how to use a channel, a convention, a rule).

    Every implementation is called; paragraphs from the run's channels come in channel order,
    then any others in unspecified order.

    :param view: the run now.
    :param member: the member about to start.
    :return: one paragraph of text; ``None`` for nothing.

    .. versionadded:: 0.1
    """


@hookspec
def swarm_extra_metrics(view: SwarmView) -> dict[str, Any] | None:
    """Extra figures for the ``inspect_swarm:metrics`` record, under the plugin's own key.

    Every implementation is called once, when the swarm ends.  A run's channel or controller
    is keyed by its registered name (``swarm-fixture-plugin/bulletin``), any other plugin by
    its plugin name; a key that is one of the record's own fields is an error.

    :param view: the run at its end.
    :return: a JSON-ready mapping; ``None`` to add nothing.

    .. versionadded:: 0.1
    """


@hookspec
def swarm_rubric_rules(rubric: str) -> list[RubricRule] | None:
    """Rules a plugin adds to a scoring rubric.

    Every implementation is called once each time the rubric's scorer is built (not per
    sample), with the rubric's registered name; the order of results is unspecified.  The
    rubric checks every sample with each rule's ``check`` as well as its own rules, reports
    every rule in the score, and counts a ``required`` rule in ``resolved``.  A ``check`` that
    raises is reported as a failed rule naming the plugin; it never stops the scoring.  An
    implementation that raises, returns something other than a list of ``RubricRule``, or
    names a rule twice (or like the rubric's own rules) is a ``PluginError`` naming it.

    :param rubric: the rubric being built (``fanout``).
    :return: the rules to add; ``None`` (or ``[]``) for none, e.g. for another rubric.

    .. versionadded:: 0.1
    """


# ---------------------------------------------------------------------------------------------
# Observers: side effects only; a failure is logged, never fatal
# ---------------------------------------------------------------------------------------------


@hookspec
def swarm_run_started(view: SwarmView) -> None:
    """The swarm is about to start its members.

    :param view: the run with every roster member ``pending``.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def swarm_member_started(view: SwarmView, member: MemberView) -> None:
    """A member started running (its agent span is about to open).

    :param view: the run now.
    :param member: the member, ``running``.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def swarm_member_ended(view: SwarmView, event: MemberEnded) -> None:
    """A member ended.  Called after the decision hooks for the same event.

    :param view: the run now.
    :param event: who ended, how, and when.
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def swarm_record_delivered(view: SwarmView, record: Record) -> None:
    """A write was admitted, applied and committed to a channel.

    :param view: the run now.
    :param record: the committed record (``seq`` set).
    :return: nothing.

    .. versionadded:: 0.1
    """


@hookspec
def swarm_run_ended(view: SwarmView, result: SwarmResult) -> None:
    """The swarm ended (normally, on error, or cancelled) and its result record is final.

    Runs inside the sample, so an observer may write to ``store()`` or the transcript, but not
    a protected key (``is_protected_key``): writing, replacing, changing or deleting one is an
    error naming the plugin, and the kernel's record is put back.

    :param view: the run at its end.
    :param result: the ``inspect_swarm:result`` record just written.
    :return: nothing.

    .. versionadded:: 0.1
    """
