"""Every use of Inspect's private API, in one place.

Each function here reads something Inspect keeps but does not export, and ``PrerequisiteError``
is the exception type Inspect's command line prints as a message without a traceback (the base
of swarm-eval's user-facing errors, so this module is the lowest layer of the kernel).
``tests/test_inspect_private.py`` calls every one of them, so an Inspect release that moves one
fails loudly in that test rather than quietly in a run.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import import_module
from importlib.metadata import version
from typing import Any, Literal

from inspect_ai._util.error import PrerequisiteError, set_exception_hook
from inspect_ai.model import ModelUsage
from inspect_ai.util import token_limit

__all__ = [
    "PRIVATE_NAMES",
    "PrerequisiteError",
    "TESTED_INSPECT",
    "UsageTap",
    "background_owned_by",
    "bridged_call",
    "current_agent_span_id",
    "current_background_registry",
    "inspect_exception_hook_first",
    "missing_private_api",
    "register_as",
    "unshadow_inspect_name",
    "require_private_api",
    "registry_lookup",
    "registry_names",
    "running_task_state",
    "sample_sandboxes",
    "sandbox_proxy",
    "sandbox_unproxied",
    "use_sandbox",
    "sample_model_usage",
    "store_events_suspended",
    "token_metering_suspended",
    "tool_output_limit",
]


# the newest Inspect release swarm-eval's whole suite passed on (raise it with the bound in
# pyproject.toml after scripts/inspect-canary.sh and the suite pass on a newer one)
TESTED_INSPECT = "0.3.285"

# every name this module imports from Inspect's private modules, by module (tests/
# test_inspect_private.py checks the table against the imports below, so it cannot drift)
PRIVATE_NAMES: dict[str, tuple[str, ...]] = {
    "inspect_ai._util.error": ("PrerequisiteError", "set_exception_hook"),
    "inspect_ai.agent._bridge.bridge": ("_patch_config",),
    "inspect_ai.agent._deepagent.agent_tool": ("current_background_registry",),
    "inspect_ai._util.registry": (
        "RegistryInfo",
        "_registry",
        "registry_add",
        "registry_find",
        "registry_key",
        "registry_lookup",
    ),
    "inspect_ai.model._generate_config": ("active_generate_config",),
    "inspect_ai.model._model": ("sample_model_usage",),
    "inspect_ai.solver._task_state": ("sample_state",),
    "inspect_ai.util._background": ("background_target",),
    "inspect_ai.util._limit": ("token_limit_tree",),
    "inspect_ai.util._sandbox.context": (
        "sandbox_default_context_var",
        "sandbox_environments_context_var",
        "sandbox_with_environments_context_var",
    ),
    "inspect_ai.util._sandbox.events": ("SandboxEnvironmentProxy",),
    "inspect_ai.util._span": ("current_agent_span_id",),
    "inspect_ai.util._store": ("suspend_store_events",),
}


def inspect_exception_hook_first() -> None:
    """Install Inspect's exception hook now, as its ``platform_init`` does at the first eval
    (once per process), so that a hook installed after this one stays outermost."""
    set_exception_hook()


def missing_private_api() -> list[str]:
    """The names of ``PRIVATE_NAMES`` the installed Inspect lacks (``module.name``), in order."""
    missing: list[str] = []
    for module_name, names in PRIVATE_NAMES.items():
        try:
            module = import_module(module_name)
        except ImportError:
            missing.extend(f"{module_name}.{name}" for name in names)
            continue
        missing.extend(f"{module_name}.{n}" for n in names if not hasattr(module, n))
    return missing


def require_private_api() -> None:
    """Refuse, in one message, an installed Inspect that lacks a private name swarm-eval uses
    (rather than an ``ImportError`` inside a sample's run)."""
    missing = missing_private_api()
    if missing:
        raise PrerequisiteError(
            f"swarm-eval cannot run on inspect-ai {version('inspect-ai')}: it lacks "
            f"{', '.join(missing)}, which swarm-eval uses (swarm/_inspect/private.py). "
            "Install the newest release its suite passed on: "
            f"pip install 'inspect-ai=={TESTED_INSPECT}'"
        )


@contextmanager
def background_owned_by(target: Any) -> Iterator[None]:
    """Make ``target`` (with ``start_soon(func, *args)``) where Inspect's ``background()``
    starts work for the calling task and every task it starts, instead of the sample's task
    group (Inspect's private ``background_target``, which ``deepagent``'s background subagents
    honour too)."""
    from inspect_ai.util._background import background_target

    token = background_target.set(target)
    try:
        yield
    finally:
        background_target.reset(token)


def bridged_call() -> Literal["in_process", "sandbox"] | None:
    """How the model call the calling task is making comes through Inspect's agent bridge:
    ``"in_process"`` (``agent_bridge()`` patched the SDK client in this task, so an error
    raised into the call reaches the agent), ``"sandbox"`` (any other bridged request: the
    sandbox service of ``sandbox_agent_bridge()``, where Inspect turns a limit error into the
    end of the whole sample), or ``None`` (not bridged).

    Whether a call is bridged is public (``current_agent_bridge_context()``); which bridge it
    came through is only in the in-process bridge's private patch configuration.
    """
    from inspect_ai.agent import current_agent_bridge_context

    if current_agent_bridge_context() is None:
        return None
    from inspect_ai.agent._bridge.bridge import _patch_config

    return "in_process" if _patch_config.get().enabled else "sandbox"


def sample_model_usage() -> dict[str, ModelUsage]:
    """The running sample's usage per model, copied (no public reader inside a sample)."""
    from inspect_ai.model._model import sample_model_usage as usage

    return {k: copy.copy(v) for k, v in usage().items()}


@contextmanager
def store_events_suspended() -> Iterator[None]:
    """Spans opened inside (and in tasks started inside) copy no store and log no
    ``StoreEvent``; spans opened before keep theirs, so the enclosing span logs the net change
    once (Inspect's private ``suspend_store_events``).  Without it every member's spans copy
    the whole store at their start and end, and each logs the writes of every member running
    beside it: the roster's size times the writes."""
    from inspect_ai.util._store import suspend_store_events

    with suspend_store_events():
        yield


def token_metering_suspended() -> bool:
    """Whether the calling task is inside ``suspend_token_limit()`` (approval calls...)."""
    from inspect_ai.util._limit import token_limit_tree

    return bool(token_limit_tree.is_suspended())


def tool_output_limit() -> int | None:
    """The most UTF-8 bytes a tool result may hold before Inspect truncates it: the active
    ``GenerateConfig.max_tool_output``, else Inspect's default of 16 KiB; ``None`` when it is
    0 (no truncation).  Inspect truncates a result *over* the limit; one of exactly the limit
    reaches the model whole.  (A tool's own ``max_output`` would take precedence; the swarm's
    tools set none.)"""
    from inspect_ai.model._generate_config import active_generate_config

    limit = active_generate_config().max_tool_output
    if limit is None:
        limit = 16 * 1024
    return limit if limit > 0 else None


def current_agent_span_id() -> str | None:
    """The id of the innermost agent span of the calling task."""
    from inspect_ai.util._span import current_agent_span_id as span_id

    return span_id()


def current_background_registry() -> Any:
    """The background registry of the deepagent the calling task runs in (its ``AgentFuture``
    per background subagent: ``agent_id``, ``span_id``, ``subagent_name``, ``status``,
    ``result``, ``error``), or ``None`` outside one."""
    from inspect_ai.agent._deepagent.agent_tool import current_background_registry as found

    return found()


class UsageTap:
    """Inspect's own record of everything a block of code spends, opened around one member.

    An unlimited ``token_limit(None)`` node: Inspect records every completed call's usage into the
    nodes of the calling task's limit tree *before* it checks any limit and whether or not it calls
    the usage hooks, so the node also holds a call that tripped a sample limit and a native
    compaction.  Calls made under ``suspend_token_limit()`` are not recorded (by design: they are
    the approval calls the ledger leaves unattributed).
    """

    __slots__ = ("_node",)

    def __init__(self) -> None:
        self._node: Any = token_limit(None)

    def __enter__(self) -> UsageTap:
        self._node.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._node.__exit__(*exc)

    @property
    def usage(self) -> ModelUsage:
        """Everything recorded so far (a value: Inspect replaces, never mutates, the total)."""
        usage: ModelUsage = self._node._usage
        return usage


def registry_lookup(kind: str, name: str) -> object | None:
    """The object registered with Inspect as ``name`` of ``kind`` (``"agent"``...), or ``None``
    (Inspect's public API can build from a name but not look one up)."""
    from inspect_ai._util.registry import registry_lookup as lookup

    return lookup(kind, name)  # type: ignore[arg-type]


def registry_names(kind: str) -> list[str]:
    """The names of every object of ``kind`` registered with Inspect now, sorted, as a lookup
    takes them (Inspect's own without their ``inspect_ai/`` prefix): for "did you mean"."""
    from inspect_ai._util.registry import registry_find
    from inspect_ai.util import registry_info

    found = registry_find(lambda info: info.type == kind)
    return sorted({registry_info(o).name.removeprefix("inspect_ai/") for o in found})


def register_as(obj: object, name: str) -> None:
    """Register ``obj`` with Inspect a second time under ``name``, keeping its kind and
    metadata (so ``swarm/...`` names work from an editable install too)."""
    from inspect_ai._util.registry import RegistryInfo, registry_add
    from inspect_ai.util import registry_info

    info = registry_info(obj)
    registry_add(obj, RegistryInfo(type=info.type, name=name, metadata=info.metadata))


def unshadow_inspect_name(kind: str, name: str) -> None:
    """Drop a bare registry ``name`` that hides Inspect's own object of that name (an editable
    install registers ``deepagent`` bare, and Inspect finds a bare name before its own
    ``inspect_ai/deepagent``): the bare name is Inspect's again."""
    from inspect_ai._util.registry import _registry, registry_key

    if registry_key(kind, f"inspect_ai/{name}") in _registry:  # type: ignore[arg-type]
        _registry.pop(registry_key(kind, name), None)  # type: ignore[arg-type]


def running_task_state() -> Any:
    """The running sample's ``TaskState`` (a scorer needs it, its target above all), or
    ``None`` outside a sample."""
    from inspect_ai.solver._task_state import sample_state

    return sample_state()


def sample_sandboxes() -> tuple[dict[str, Any], str] | None:
    """The running sample's sandbox environments (Inspect's own dict, which it cleans up when
    the sample ends, scoring included) and the default one's name; ``None`` without any."""
    from inspect_ai.util._sandbox.context import (
        sandbox_default_context_var,
        sandbox_environments_context_var,
    )

    environments = sandbox_environments_context_var.get(None)
    if not environments:
        return None
    return environments, sandbox_default_context_var.get()


def use_sandbox(environment: Any) -> None:
    """Make ``environment`` the only sandbox, and the default, of the calling task (and the
    tasks it starts): what ``inspect_ai.util.sandbox()`` returns there."""
    from inspect_ai.util._sandbox.context import (
        sandbox_default_context_var,
        sandbox_environments_context_var,
        sandbox_with_environments_context_var,
    )

    sandbox_environments_context_var.set({"default": environment})
    sandbox_with_environments_context_var.set({})
    sandbox_default_context_var.set("default")


def sandbox_proxy(environment: Any) -> Any:
    """``environment`` wrapped as Inspect wraps a sample's own (its calls become
    ``SandboxEvent``s in the transcript, and Inspect's cleanup can unwrap it)."""
    from inspect_ai.util._sandbox.events import SandboxEnvironmentProxy

    return SandboxEnvironmentProxy(environment)


def sandbox_unproxied(environment: Any) -> Any:
    """The provider's environment inside Inspect's event-recording wrapper (itself if none)."""
    from inspect_ai.util._sandbox.events import SandboxEnvironmentProxy

    return environment._sandbox if isinstance(environment, SandboxEnvironmentProxy) else environment
