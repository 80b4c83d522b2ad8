"""The fan-out eval's ``inspect_ai`` entry point: makes its objects known to Inspect.

``swarm/fanout``: the task (``inspect eval swarm/fanout -T fixture=json-events``), and
``swarm/fanout_rubric``: the rubric as a scorer, for ``inspect score LOG --scorer
swarm/fanout_rubric -S fixture=...``.

Inspect names an object from an installed package ``<package>/<name>``.  From an *editable*
install of a distribution whose name (``swarm-eval``) differs from its package (``swarm``) it
cannot tell the package and registers the bare name; the scorer is then registered a second
time under its qualified name, so the same name works however swarm-eval is installed.
"""

from __future__ import annotations

from inspect_ai import task
from inspect_ai.scorer import scorer
from inspect_ai.util import registry_info

from ._scorer import SCORER_METRICS, SCORER_NAME, fanout_rubric, fanout_rubric_scorer
from ._task import fanout

PACKAGE = "swarm"

if "/" not in registry_info(fanout_rubric).name:
    scorer(metrics=SCORER_METRICS, name=f"{PACKAGE}/{SCORER_NAME}")(fanout_rubric_scorer)
if "/" not in registry_info(fanout).name:
    task(name=f"{PACKAGE}/fanout")(fanout.__wrapped__ if hasattr(fanout, "__wrapped__") else fanout)
