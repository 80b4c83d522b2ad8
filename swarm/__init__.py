"""swarm-eval: evaluate swarms of AI agents with Inspect AI.

The public API.  Built-in and third-party plugins import only from here.
"""

from __future__ import annotations

from swarm._checks import check_writable_directory, shortened
from swarm._faces.agent import swarm
from swarm._faces.agent_clis import AGENT_COMPOSE, claude_code_member, codex_member
from swarm._faces.bwrap import BwrapConfig
from swarm._faces.worker import worker
from swarm._hooks.catalog import (
    PluginCatalog,
    PluginSource,
    Registration,
    get_plugin_manager,
    plugin_catalog,
    reset_plugin_catalog,
    rubric,
)
from swarm._hooks.defaults import first_submission, last_submission
from swarm._hooks.votes import Normalizer, load_normalizer, normalize_answer, vote
from swarm._report.counters import CommCounts
from swarm._run.bridge_tools import BridgeTools, bridge_tools
from swarm._run.bus import Bus, current_bus
from swarm._run.identity import current_member
from swarm._run.sandboxes import member_sandbox
from swarm._run.seal import in_running_sample, kernel_seal, record_digest
from swarm._run.tools import swarm_on_continue, swarm_tools, swarm_wait
from swarm._spec.budget import Budget
from swarm._spec.roster import MemberSpec, check_member_name, member
from swarm._spec.sandboxes import Sandboxes
from swarm._spec.spawning import Spawning
from swarm._spec.topology import PluginSpec, channel, controller, load_topology
from swarm.errors import (
    ConfigError,
    MemberErrors,
    MissingExtra,
    PluginError,
    RecordRejected,
    SwarmError,
    UsageError,
)
from swarm.hookspecs import Register, hookimpl, hookspec
from swarm.records import (
    ANSWER_MAX_CHARS,
    KERNEL_PREFIX,
    LEDGER_KEY,
    MESSAGES_KEY,
    METRICS_KEY,
    READS_KEY,
    RESERVED_KEYS,
    RESULT_KEY,
    SPAWNS_KEY,
    SUBAGENTS_KEY,
    SYNTHESIS_PROMPT,
    Answer,
    Decision,
    Delivery,
    Draft,
    FinalRecord,
    FinalRule,
    Loop,
    MemberEnded,
    MemberInfo,
    MemberLimits,
    MemberResult,
    MemberSubmitted,
    MemberView,
    NoticeLine,
    Quiescent,
    Receipt,
    Record,
    Rejection,
    RubricRule,
    RuleFailure,
    RuleResult,
    SpawnDecision,
    SpawnRequest,
    Submission,
    SwarmResult,
    SwarmView,
    Synthesis,
    WaitNews,
    is_protected_key,
)

__version__ = "0.1.0"

__all__ = [
    "ANSWER_MAX_CHARS",
    "KERNEL_PREFIX",
    "LEDGER_KEY",
    "MESSAGES_KEY",
    "READS_KEY",
    "SUBAGENTS_KEY",
    "METRICS_KEY",
    "RESERVED_KEYS",
    "RESULT_KEY",
    "SPAWNS_KEY",
    "SYNTHESIS_PROMPT",
    "Answer",
    "BridgeTools",
    "Budget",
    "BwrapConfig",
    "Bus",
    "CommCounts",
    "ConfigError",
    "Decision",
    "Delivery",
    "Draft",
    "FinalRecord",
    "FinalRule",
    "Loop",
    "MemberEnded",
    "MemberErrors",
    "MemberInfo",
    "MemberLimits",
    "MemberResult",
    "MemberSpec",
    "MemberSubmitted",
    "MemberView",
    "NoticeLine",
    "Normalizer",
    "PluginCatalog",
    "PluginError",
    "PluginSource",
    "PluginSpec",
    "Quiescent",
    "Receipt",
    "Record",
    "RecordRejected",
    "Register",
    "Registration",
    "Rejection",
    "SpawnDecision",
    "SpawnRequest",
    "Spawning",
    "Sandboxes",
    "RubricRule",
    "RuleFailure",
    "RuleResult",
    "Submission",
    "SwarmError",
    "SwarmResult",
    "SwarmView",
    "Synthesis",
    "MissingExtra",
    "UsageError",
    "WaitNews",
    "__version__",
    "AGENT_COMPOSE",
    "bridge_tools",
    "claude_code_member",
    "codex_member",
    "channel",
    "check_member_name",
    "check_writable_directory",
    "member_sandbox",
    "controller",
    "current_bus",
    "current_member",
    "first_submission",
    "get_plugin_manager",
    "hookimpl",
    "hookspec",
    "in_running_sample",
    "is_protected_key",
    "kernel_seal",
    "last_submission",
    "load_normalizer",
    "load_topology",
    "member",
    "normalize_answer",
    "plugin_catalog",
    "record_digest",
    "reset_plugin_catalog",
    "rubric",
    "shortened",
    "swarm",
    "swarm_on_continue",
    "swarm_tools",
    "swarm_wait",
    "vote",
    "worker",
]
