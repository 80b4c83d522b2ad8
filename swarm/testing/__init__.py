"""Testing helpers for swarm-eval and its plugin authors: the scripted model, the scripted
server and eval runners."""

from __future__ import annotations

from swarm.testing._noisy import NoisyModelAPI
from swarm.testing._runner import run_eval, scripted_model
from swarm.testing._script import Fault, StepUsage
from swarm.testing._scripted import (
    ScriptedModelAPI,
    ScriptedModelError,
    Step,
    call,
    fail,
    pause,
    poll,
    reply,
    submit,
)
from swarm.testing._server import Attempt, ScriptedServer

__all__ = [
    "Attempt",
    "Fault",
    "NoisyModelAPI",
    "ScriptedModelAPI",
    "ScriptedModelError",
    "ScriptedServer",
    "Step",
    "StepUsage",
    "call",
    "fail",
    "pause",
    "poll",
    "reply",
    "run_eval",
    "scripted_model",
    "submit",
]
