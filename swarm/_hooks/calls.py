"""The typed facade over ``pm.hook``: the only code in swarm-eval that calls plugin hooks.

Implementations are called one at a time (in pluggy's order: ``tryfirst``, then the latest
registered, ``trylast`` last) so that every failure and every bad return value can be pinned
on the plugin that caused it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pluggy

from swarm._hooks.guard import Blocked, Contained, guarded_call
from swarm.errors import PluginError
from swarm.records import (
    INFO_SOURCE,
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

__all__ = ["RunHooks", "call_each", "call_registration_hook", "call_rubric_rules"]

logger = logging.getLogger("swarm")

T = TypeVar("T")


def _impls(pm: pluggy.PluginManager, hook: str) -> list[pluggy.HookImpl]:
    caller: pluggy.HookCaller | None = getattr(pm.hook, hook, None)
    if caller is None:
        return []
    # get_hookimpls() lists implementations in reverse call order; wrappers are not supported
    # on swarm hooks (every hook here is called implementation by implementation).
    return [
        impl for impl in reversed(caller.get_hookimpls()) if not (impl.hookwrapper or impl.wrapper)
    ]


def _call(impl: pluggy.HookImpl, kwargs: dict[str, Any], bound: float | None = None) -> Any:
    """The implementation's result: contained and bounded (``guarded_call``)."""
    return guarded_call(impl.function, tuple(kwargs[name] for name in impl.argnames), bound)


def _fault(ex: Exception) -> str:
    """What a plugin did, for its ``PluginError``: ``raised ValueError('...')``, or how long it
    blocked."""
    return str(ex) if isinstance(ex, Blocked) else f"raised {ex!r}"


def _type_name(expected: type) -> str:
    return expected.__name__


def _short(value: object, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def call_registration_hook(
    pm: pluggy.PluginManager,
    hook: str,
    register_for: Callable[[str], Callable[[str, Callable[..., Any]], None]],
    *,
    first: Callable[[str], bool] = lambda plugin: False,
    failed: Callable[[PluginError], None] | None = None,
) -> None:
    """Call a registration hook plugin by plugin, giving each a ``register`` bound to it.

    Plugins for which ``first(name)`` holds are called before the others (otherwise in
    pluggy's order).  A plugin that raises (or whose ``register`` call is refused) is a
    ``PluginError`` naming it: raised, or handed to ``failed`` and the next plugin is called.
    """
    impls = sorted(_impls(pm, hook), key=lambda impl: not first(impl.plugin_name))
    for impl in impls:
        try:
            try:
                _call(impl, {"register": register_for(impl.plugin_name)})
            except PluginError:
                raise
            except Exception as ex:
                raise PluginError(impl.plugin_name, hook, _fault(ex)) from ex
        except PluginError as error:
            if failed is None:
                raise
            failed(error)


def call_rubric_rules(pm: pluggy.PluginManager, rubric: str) -> list[tuple[str, RubricRule]]:
    """``swarm_rubric_rules``: every plugin's rules for ``rubric``, with the plugin's name.

    An implementation that raises or returns anything but a list of ``RubricRule`` is a
    ``PluginError`` naming it.
    """
    hook = "swarm_rubric_rules"
    found: list[tuple[str, RubricRule]] = []
    for impl in _impls(pm, hook):
        try:
            result = _call(impl, {"rubric": rubric})
        except Exception as ex:
            raise PluginError(impl.plugin_name, hook, _fault(ex)) from ex
        if result is None:
            continue
        if not isinstance(result, list):
            raise PluginError(
                impl.plugin_name,
                hook,
                f"returned {type(result).__name__} {_short(result)}; expected a list of "
                "RubricRule or None",
            )
        for index, rule in enumerate(result):
            if not isinstance(rule, RubricRule):
                raise PluginError(
                    impl.plugin_name,
                    hook,
                    f"returned {type(rule).__name__} {_short(rule)} at [{index}]; expected "
                    "a RubricRule",
                )
            found.append((impl.plugin_name, rule))
    return found


def call_each(
    pm: pluggy.PluginManager,
    hook: str,
    kwargs: dict[str, Any],
    before: Callable[[], T],
    after: Callable[[str, T], None],
    failed: Callable[[PluginError, T], None] | None = None,
) -> None:
    """Call ``hook``'s implementations one at a time with ``kwargs``; ``before()`` is taken
    before each and ``after(plugin, taken)`` checks what it did.  A failure names the plugin:
    it is raised, or handed to ``failed`` with what ``before()`` took, and the next plugin is
    called."""
    for impl in _impls(pm, hook):
        taken = before()
        try:
            try:
                _call(impl, kwargs)
            except PluginError:
                raise
            except Exception as ex:
                raise PluginError(impl.plugin_name, hook, _fault(ex)) from ex
            after(impl.plugin_name, taken)
        except PluginError as error:
            if failed is None:
                raise
            failed(error, taken)


def _log_observer(plugin: str, hook: str, ex: Exception) -> None:
    """Log an observer's failure (the run goes on): its traceback, or how long it blocked."""
    if isinstance(ex, Blocked):
        logger.error(
            "observer plugin %r blocked in hook %r and is dropped from this run (the run goes "
            "on): it %s",
            plugin,
            hook,
            ex,
        )
        return
    original = ex.original if isinstance(ex, Contained) else ex
    logger.error(
        "observer plugin %r failed in hook %r (the run goes on)", plugin, hook, exc_info=original
    )


class RunHooks:
    """One run's hooks, typed.  Built over the run's own plugin manager.

    A decision or collector implementation that raises (any ``BaseException``), blocks past
    ``bound()`` seconds or returns the wrong type is a plugin's fault: it is passed to
    ``on_fault`` (the run ends failed, naming the plugin) and raised as a ``PluginError``.
    Observers' failures are only logged.  A plugin that blocked is not called again in this run.
    """

    def __init__(
        self,
        pm: pluggy.PluginManager,
        on_fault: Callable[[PluginError], None] | None = None,
        bound: Callable[[], float | None] = lambda: None,
    ) -> None:
        self._pm = pm
        self._cache: dict[str, list[pluggy.HookImpl]] = {}
        self._on_fault = on_fault
        self._bound = bound
        self._blocked: set[str] = set()

    def _guarded(self, impl: pluggy.HookImpl, kwargs: dict[str, Any]) -> Any:
        """``impl``'s result, bounded by the time the sample has left; a plugin that blocks is
        dropped from the run (``Blocked`` is raised for the call that blocked)."""
        try:
            return _call(impl, kwargs, self._bound())
        except Blocked:
            self._blocked.add(impl.plugin_name)
            self._cache.clear()
            raise

    def fault(self, error: PluginError) -> PluginError:
        """Report a plugin's fault (to the run) and return it, to be raised."""
        if self._on_fault is not None:
            self._on_fault(error)
        return error

    def impls(self, hook: str) -> list[pluggy.HookImpl]:
        """The implementations of ``hook`` in call order (cached: a run's plugins are fixed)."""
        found = self._cache.get(hook)
        if found is None:
            impls = _impls(self._pm, hook)
            found = self._cache[hook] = [i for i in impls if i.plugin_name not in self._blocked]
        return found

    # -- the three calling conventions ---------------------------------------------------------

    def _results(
        self,
        hook: str,
        expected: type[T],
        kwargs: dict[str, Any],
        passthrough: tuple[type[Exception], ...] = (),
    ) -> Iterator[tuple[str, T]]:
        """Each implementation's non-``None`` result, checked, with its plugin's name.

        Exceptions of the ``passthrough`` types are the hook's contract (a ``ToolError`` for
        the model) and pass unchanged; any other names the plugin in a ``PluginError``.
        """
        return self._results_of(self.impls(hook), hook, expected, kwargs, passthrough)

    def _results_of(
        self,
        impls: list[pluggy.HookImpl],
        hook: str,
        expected: type[T],
        kwargs: dict[str, Any],
        passthrough: tuple[type[Exception], ...] = (),
    ) -> Iterator[tuple[str, T]]:
        for impl in impls:
            try:
                result = self._guarded(impl, kwargs)
            except passthrough:
                raise
            except Exception as ex:
                raise self.fault(PluginError(impl.plugin_name, hook, _fault(ex))) from ex
            if result is None:
                continue
            if not isinstance(result, expected):
                raise self.fault(
                    PluginError(
                        impl.plugin_name,
                        hook,
                        f"returned {type(result).__name__} {_short(result)}; expected "
                        f"{_type_name(expected)} or None",
                    )
                )
            yield impl.plugin_name, result

    def decide(self, hook: str, expected: type[T], **kwargs: Any) -> tuple[str, T] | None:
        """First non-``None`` result of ``hook`` (checked against ``expected``) and its plugin."""
        return next(self._results(hook, expected, kwargs), None)

    def collect(self, hook: str, expected: type[T], **kwargs: Any) -> list[tuple[str, T]]:
        """Every non-``None`` result of ``hook`` with the name of the plugin that gave it."""
        return list(self._results(hook, expected, kwargs))

    def collect_each(
        self, hook: str, expected: type[T], **kwargs: Any
    ) -> list[tuple[str, T | PluginError]]:
        """Like ``collect``, but one implementation's fault does not lose the others' results:
        it stands in the list, in its plugin's place, as the ``PluginError`` (reported to the
        run as well)."""
        found: list[tuple[str, T | PluginError]] = []
        for impl in self.impls(hook):
            try:
                found.extend(self._results_of([impl], hook, expected, kwargs))
            except PluginError as ex:
                found.append((impl.plugin_name, ex))
        return found

    def observe(self, hook: str, **kwargs: Any) -> None:
        """Call every implementation of ``hook``; a failure is logged with the plugin's name."""
        for impl in self.impls(hook):
            try:
                self._guarded(impl, kwargs)
            except Exception as ex:
                _log_observer(impl.plugin_name, hook, ex)

    # -- decisions -----------------------------------------------------------------------------

    def start(self, view: SwarmView) -> tuple[str, Decision] | None:
        """``swarm_start``."""
        return self.decide("swarm_start", Decision, view=view)

    def on_submission(self, view: SwarmView, event: MemberSubmitted) -> tuple[str, Decision] | None:
        """``swarm_on_submission``."""
        return self.decide("swarm_on_submission", Decision, view=view, event=event)

    def on_member_end(self, view: SwarmView, event: MemberEnded) -> tuple[str, Decision] | None:
        """``swarm_on_member_end``."""
        return self.decide("swarm_on_member_end", Decision, view=view, event=event)

    def on_quiescence(self, view: SwarmView, event: Quiescent) -> tuple[str, Decision] | None:
        """``swarm_on_quiescence``."""
        return self.decide("swarm_on_quiescence", Decision, view=view, event=event)

    def choose_answer(self, view: SwarmView) -> tuple[str, Answer] | None:
        """``swarm_choose_answer``."""
        return self.decide("swarm_choose_answer", Answer, view=view)

    def delivery_mode(self, view: SwarmView, member: MemberView) -> Delivery:
        """``swarm_delivery_mode``; the value must be ``notify`` or ``poll``.

        A bridged member polls whatever a plugin chose: ``notify`` for one is logged, written
        to the transcript (an info event of type ``delivery_refused``, one per member it was
        chosen for) and replaced by ``poll``.  With no decision: ``poll`` for a bridged member,
        else ``notify``.
        """
        decided = self.decide("swarm_delivery_mode", str, view=view, member=member)
        if decided is None:
            return "poll" if member.bridged else "notify"
        plugin, mode = decided
        if mode == "notify" and member.bridged:
            from inspect_ai.log import transcript

            logger.warning(
                "swarm: plugin %r chose notify mode for the bridged member %r, which cannot "
                "get notices (its agent runs its own loop through Inspect's agent bridge); it "
                "polls",
                plugin,
                member.name,
            )
            transcript().info(
                {
                    "version": 1,
                    "type": "delivery_refused",
                    "member": member.name,
                    "plugin": plugin,
                    "chosen": "notify",
                    "delivery": "poll",
                },
                source=INFO_SOURCE,
            )
            return "poll"
        if mode == "notify":
            return "notify"
        if mode == "poll":
            return "poll"
        raise self.fault(
            PluginError(
                plugin, "swarm_delivery_mode", f"returned {mode!r}; expected 'notify' or 'poll'"
            )
        )

    def admit_record(self, view: SwarmView, record: Record) -> Rejection | None:
        """``swarm_admit_record``: the first rejection, if any."""
        decided = self.decide("swarm_admit_record", Rejection, view=view, record=record)
        return None if decided is None else decided[1]

    def admit_spawn(
        self, view: SwarmView, request: SpawnRequest
    ) -> tuple[str, SpawnDecision] | None:
        """``swarm_admit_spawn``: the deciding plugin and its decision."""
        return self.decide("swarm_admit_spawn", SpawnDecision, view=view, request=request)

    def deliver_receipt(self, view: SwarmView, receipt: Receipt) -> str | None:
        """``swarm_deliver_receipt``: the plugin that delivered it, or ``None``."""
        decided = self.decide("swarm_deliver_receipt", bool, view=view, receipt=receipt)
        return None if decided is None or decided[1] is not True else decided[0]

    def replied(self, view: SwarmView, child: str, parent: str) -> bool | None:
        """``swarm_replied``: whether the child replied to its parent (``None``: unknown)."""
        decided = self.decide("swarm_replied", bool, view=view, child=child, parent=parent)
        return None if decided is None else decided[1]

    # -- collectors ----------------------------------------------------------------------------

    def member_tools(
        self, view: SwarmView, member: MemberView, nested: bool
    ) -> list[tuple[str, Any]]:
        """``swarm_member_tools``: (plugin name, list of tools) pairs."""
        from inspect_ai.tool import ToolDef

        hook = "swarm_member_tools"
        found = self.collect(hook, list, view=view, member=member, nested=nested)
        for plugin, tools in found:
            for index, tool in enumerate(tools):
                try:
                    ToolDef(tool)  # what the wiring makes of each: a tool Inspect can offer
                except Exception:
                    raise self.fault(
                        PluginError(
                            plugin,
                            hook,
                            f"returned a list holding {type(tool).__name__} {_short(tool)} at "
                            f"[{index}]; expected Inspect tools (made with @tool)",
                        )
                    ) from None
        return [(plugin, tools) for plugin, tools in found]

    def notice_lines(self, view: SwarmView, member: MemberView, loop: str) -> list[NoticeLine]:
        """``swarm_notice_lines``."""
        found = self.collect("swarm_notice_lines", NoticeLine, view=view, member=member, loop=loop)
        return [line for _, line in found]

    def wait_news(
        self, view: SwarmView, member: MemberView, loop: str, path: str | None
    ) -> list[WaitNews]:
        """``swarm_wait_news``.  A ``ToolError`` (a bad path) passes through to the model."""
        from inspect_ai.tool import ToolError

        kwargs = {"view": view, "member": member, "loop": loop, "path": path}
        return [
            news for _, news in self._results("swarm_wait_news", WaitNews, kwargs, (ToolError,))
        ]

    def member_instructions(self, view: SwarmView, member: MemberView) -> list[tuple[str, str]]:
        """``swarm_member_instructions``: (plugin name, paragraph) pairs."""
        return self.collect("swarm_member_instructions", str, view=view, member=member)

    def records(self, view: SwarmView) -> list[tuple[str, dict[str, Any] | PluginError]]:
        """``swarm_records``: (plugin name, records by key, or the plugin's fault) pairs."""
        return self.collect_each("swarm_records", dict, view=view)

    def extra_metrics(self, view: SwarmView) -> list[tuple[str, dict[str, Any] | PluginError]]:
        """``swarm_extra_metrics``: (plugin name, mapping or the plugin's fault) pairs."""
        return self.collect_each("swarm_extra_metrics", dict, view=view)

    # -- observers -----------------------------------------------------------------------------

    def run_started(self, view: SwarmView) -> None:
        """``swarm_run_started``."""
        self.observe("swarm_run_started", view=view)

    def member_started(self, view: SwarmView, member: MemberView) -> None:
        """``swarm_member_started``."""
        self.observe("swarm_member_started", view=view, member=member)

    def member_ended(self, view: SwarmView, event: MemberEnded) -> None:
        """``swarm_member_ended``."""
        self.observe("swarm_member_ended", view=view, event=event)

    def record_delivered(self, view: SwarmView, record: Record) -> None:
        """``swarm_record_delivered``."""
        self.observe("swarm_record_delivered", view=view, record=record)

    def run_ended(
        self,
        view: SwarmView,
        result: SwarmResult,
        after: Callable[[str], None] | None = None,
    ) -> None:
        """``swarm_run_ended``; ``after(plugin)`` is called after each implementation (to check
        what it did), whether or not it failed."""
        hook = "swarm_run_ended"
        for impl in self.impls(hook):
            try:
                self._guarded(impl, {"view": view, "result": result})
            except Exception as ex:
                _log_observer(impl.plugin_name, hook, ex)
            if after is not None:
                after(impl.plugin_name)
