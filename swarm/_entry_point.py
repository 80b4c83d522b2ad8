"""The ``inspect_ai`` entry point: makes swarm-eval's objects known to Inspect.

``swarm/swarm`` (the agent), ``swarm/worker`` and ``swarm/deepagent`` (members wired to the
channels), ``swarm/codex`` and ``swarm/claude_code`` (agent CLIs as members),
``swarm/calculator_worker``, ``swarm/swarm_demo`` and ``swarm/arithmetic`` (the demo),
``swarm/swarm_arm`` and ``swarm/arms_demo`` (experiments), the ``swarm/swarm_diagnosis``
scorer (the failure checks of ``swarm.diagnosis``) and the ``swarm/member_scores`` scorer
(``swarm.analysis``), the ``swarm/scripted`` and ``swarm/noisy`` models, and the ``bwrap``
sandbox provider (``swarm._faces.bwrap``).

Inspect names an object from an installed package ``<package>/<name>``.  From an *editable*
install of a distribution whose name (``swarm-eval``) differs from its package (``swarm``) it
cannot tell the package and registers the bare name; the objects are then registered under
their qualified names as well, so the same names work however swarm-eval is installed.

Loading it also makes swarm-eval's user-facing errors end an Inspect command as one message on
stderr, without a traceback (``swarm.cli.install_inspect_excepthook``).

It is the top of the kernel's layers (docs/architecture.md): the one module that imports the
agent, the demo, the scripted model and the CLI together.
"""

from __future__ import annotations

from inspect_ai.scorer import mean, scorer
from inspect_ai.util import registry_info

from swarm._faces import bwrap  # noqa: F401  (registers the bwrap sandbox provider)
from swarm._faces.agent import swarm
from swarm._faces.agent_clis import claude_code_member, codex_member
from swarm._faces.deepagent import deepagent_member
from swarm._faces.worker import worker
from swarm._inspect.private import register_as, unshadow_inspect_name
from swarm.analysis import member_scores
from swarm.cli import install_inspect_excepthook
from swarm.demo import arithmetic, calculator_worker, swarm_demo
from swarm.diagnosis import swarm_diagnosis
from swarm.diagnosis._scorer import SCORER_NAME, swarm_diagnosis_scorer
from swarm.experiments import arms_demo, swarm_arm
from swarm.testing import _noisy, _scripted  # noqa: F401  (register swarm/scripted, swarm/noisy)

PACKAGE = "swarm"

# swarm-eval's configuration and plugin errors end `inspect eval` as one message on stderr
install_inspect_excepthook()

for _obj in (
    swarm,
    worker,
    deepagent_member,
    codex_member,
    claude_code_member,
    calculator_worker,
    arithmetic,
    swarm_demo,
    swarm_arm,
    arms_demo,
):
    _name = registry_info(_obj).name
    if "/" not in _name:
        register_as(_obj, f"{PACKAGE}/{_name}")
        unshadow_inspect_name("agent", _name)  # "deepagent" by name stays Inspect's

if "/" not in registry_info(swarm_diagnosis).name:
    scorer(metrics={"*": [mean()]}, name=f"{PACKAGE}/{SCORER_NAME}")(swarm_diagnosis_scorer)
if "/" not in registry_info(member_scores).name:
    register_as(member_scores, f"{PACKAGE}/member_scores")
