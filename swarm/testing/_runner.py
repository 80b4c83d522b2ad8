"""Run a swarm eval on the scripted model in one call (for tests and examples)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import Model, get_model
from inspect_ai.scorer import Scorer, includes
from inspect_ai.solver import Solver

from swarm.testing._scripted import Step

__all__ = ["run_eval", "scripted_model"]


def scripted_model(
    scripts: Mapping[str, Sequence[Step | Mapping[str, Any]]] | str | None = None,
    *,
    answer: str = "done",
    delay: float = 0.0,
) -> Model:
    """A ``swarm/scripted`` model following ``scripts``.

    ``scripts`` maps member names (or globs) to steps; it may also be YAML text or the path of
    a YAML/JSON file with that mapping.  Steps are passed on as plain mappings
    (``Step.as_data()``), so the log's model arguments hold the whole script and ``inspect
    score`` on the log can make the model again.
    """
    if not isinstance(scripts, str):  # plain data: the log's model arguments keep it
        scripts = {
            key: [s.as_data() if isinstance(s, Step) else s for s in steps]
            if isinstance(steps, list | tuple)
            else steps  # load_scripts refuses it, naming the key
            for key, steps in (scripts or {}).items()
        }
    return get_model(
        "swarm/scripted",
        scripts=scripts,
        answer=answer,
        delay=delay,
        memoize=False,
    )


def run_eval(
    solver: Solver | Any,
    *,
    model: Model | str | None = None,
    input: str = "What is 6 * 7?",
    target: str = "42",
    scorer: Scorer | None = None,
    log_dir: str | Path | None = None,
    samples: int = 1,
    **eval_args: Any,
) -> EvalLog:
    """Run ``solver`` (a swarm) on a small task and return the log (samples included).

    Defaults: one sample asking for 6 * 7, the ``includes()`` scorer, the scripted model with no
    scripts, logs under ``log_dir`` (Inspect's default when ``None``), no display.
    """
    task = Task(
        dataset=[Sample(id=i + 1, input=input, target=target) for i in range(samples)],
        solver=solver,
        scorer=scorer or includes(),
    )
    logs = eval(
        task,
        model=model or scripted_model(),
        display="none",
        log_dir=None if log_dir is None else str(log_dir),
        **eval_args,
    )
    return logs[0]
