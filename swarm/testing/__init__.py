"""Testing helpers for swarm-eval and its plugin authors: the scripted model and eval runners."""

from __future__ import annotations

from swarm.testing._runner import run_eval, scripted_model
from swarm.testing._scripted import (
    ScriptedModelAPI,
    ScriptedModelError,
    Step,
    call,
    fail,
    pause,
    reply,
    submit,
)

__all__ = [
    "ScriptedModelAPI",
    "ScriptedModelError",
    "Step",
    "call",
    "fail",
    "pause",
    "reply",
    "run_eval",
    "scripted_model",
    "submit",
]
