"""swarm-eval: evaluate swarms of AI agents with Inspect AI.

The public API.  Built-in and third-party plugins import only from here.
"""

from __future__ import annotations

from swarm._agent import swarm
from swarm._budget import Budget
from swarm._bus import (
    Bus,
    CommCounts,
    Draft,
    Loop,
    NoticeLine,
    Record,
    RecordRejected,
    Rejection,
    WaitNews,
    current_bus,
)
from swarm._context import current_member
from swarm._defaults import first_submission, last_submission
from swarm._finish import RESULT_KEY
from swarm._manager import (
    PluginCatalog,
    PluginSource,
    Registration,
    get_plugin_manager,
    plugin_catalog,
    reset_plugin_catalog,
)
from swarm._member_tools import swarm_on_continue, swarm_tools, swarm_wait
from swarm._roster import MemberSpec, member
from swarm._topology import PluginSpec, channel, controller, load_topology
from swarm._worker import worker
from swarm.errors import ConfigError, PluginError, SwarmError, UsageError
from swarm.hookspecs import Register, hookimpl, hookspec
from swarm.records import (
    Answer,
    Decision,
    Delivery,
    FinalRecord,
    FinalRule,
    MemberEnded,
    MemberInfo,
    MemberLimits,
    MemberResult,
    MemberSubmitted,
    MemberView,
    Quiescent,
    RubricRule,
    RuleFailure,
    RuleResult,
    SwarmResult,
    SwarmView,
)

__version__ = "0.1.0"

__all__ = [
    "RESULT_KEY",
    "Answer",
    "Budget",
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
    "MemberInfo",
    "MemberLimits",
    "MemberResult",
    "MemberSpec",
    "MemberSubmitted",
    "MemberView",
    "NoticeLine",
    "PluginCatalog",
    "PluginError",
    "PluginSource",
    "PluginSpec",
    "Quiescent",
    "Record",
    "RecordRejected",
    "Register",
    "Registration",
    "Rejection",
    "RubricRule",
    "RuleFailure",
    "RuleResult",
    "SwarmError",
    "SwarmResult",
    "SwarmView",
    "UsageError",
    "WaitNews",
    "__version__",
    "channel",
    "controller",
    "current_bus",
    "current_member",
    "first_submission",
    "get_plugin_manager",
    "hookimpl",
    "hookspec",
    "last_submission",
    "load_topology",
    "member",
    "plugin_catalog",
    "reset_plugin_catalog",
    "swarm",
    "swarm_on_continue",
    "swarm_tools",
    "swarm_wait",
    "worker",
]
