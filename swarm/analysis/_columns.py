"""``SwarmColumns``: a swarm's cost and ledger data as columns of Inspect's ``samples_df()``."""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.analysis import Column, SampleColumn
from inspect_ai.log import EvalSample, EvalSampleSummary

from swarm.records import LEDGER_KEY

__all__ = ["SwarmColumns", "require_dataframes"]


def require_dataframes() -> None:
    """Raise a clear ``ImportError`` when pandas or pyarrow (for ``samples_df()``) is missing."""
    missing = []
    for name in ("pandas", "pyarrow"):
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise ImportError(
            f"samples_df() with SwarmColumns needs {' and '.join(missing)}: "
            'pip install "swarm-eval[analysis]"  (or "pandas>=2.1.0" "pyarrow>=10.0.1")'
        )


def _ledger(sample: EvalSample | EvalSampleSummary) -> dict[str, Any] | None:
    store = getattr(sample, "store", None) or {}
    value = store.get(LEDGER_KEY)
    return value if isinstance(value, dict) else None


def _usage(sample: EvalSample | EvalSampleSummary) -> dict[str, Any]:
    return dict(getattr(sample, "model_usage", None) or {})


def swarm_cost(sample: EvalSample | EvalSampleSummary) -> float:
    """Priced cost of the sample's model usage, scorer calls included."""
    return float(sum(u.total_cost or 0.0 for u in _usage(sample).values()))


def _unpriced_in_usage(sample: EvalSample | EvalSampleSummary) -> set[str]:
    return {m for m, u in _usage(sample).items() if u.total_tokens > 0 and u.total_cost is None}


def swarm_complete(sample: EvalSample | EvalSampleSummary) -> bool:
    """The ledger's interval is complete and every model in model_usage is priced."""
    ledger = _ledger(sample)
    return bool(ledger and ledger["total_complete"] and not _unpriced_in_usage(sample))


def swarm_members(sample: EvalSample | EvalSampleSummary) -> int | None:
    """Members in the roster."""
    ledger = _ledger(sample)
    return None if ledger is None else len(ledger["members"])


def swarm_resumed(sample: EvalSample | EvalSampleSummary) -> bool:
    """The sample resumed from a checkpoint (False without a ledger)."""
    ledger = _ledger(sample)
    return bool(ledger and ledger["resumed"])


def _cap(sample: EvalSample | EvalSampleSummary, kind: str) -> Any:
    ledger = _ledger(sample)
    return None if ledger is None else ledger["caps"][kind]


def swarm_cost_cap(sample: EvalSample | EvalSampleSummary) -> float | None:
    """The swarm's cost cap in dollars."""
    cap = _cap(sample, "cost")
    return None if cap is None else float(cap)


def swarm_token_cap(sample: EvalSample | EvalSampleSummary) -> int | None:
    """The swarm's token cap."""
    cap = _cap(sample, "tokens")
    return None if cap is None else int(cap)


def swarm_time_cap(sample: EvalSample | EvalSampleSummary) -> float | None:
    """The swarm's time cap in seconds."""
    cap = _cap(sample, "time")
    return None if cap is None else float(cap)


def _calls(sample: EvalSample | EvalSampleSummary, field: str) -> int | None:
    ledger = _ledger(sample)
    return None if ledger is None else int(ledger["calls"][field])


def swarm_errored(sample: EvalSample | EvalSampleSummary) -> int | None:
    """Calls in the swarm that errored or were cancelled (retries included)."""
    return _calls(sample, "errored")


def swarm_no_usage(sample: EvalSample | EvalSampleSummary) -> int | None:
    """Calls in the swarm that completed with no usage."""
    return _calls(sample, "no_usage")


def swarm_unpriced(sample: EvalSample | EvalSampleSummary) -> int | None:
    """Calls in the swarm whose usage has no cost."""
    return _calls(sample, "unpriced")


def swarm_unpriced_models(sample: EvalSample | EvalSampleSummary) -> str:
    """Models with tokens and no cost, from the ledger and model_usage, as a JSON list."""
    ledger = _ledger(sample)
    models = set(ledger["unpriced_models"]) if ledger else set()
    return json.dumps(sorted(models | _unpriced_in_usage(sample)))


SwarmColumns: list[Column] = [
    SampleColumn("swarm_cost", path=swarm_cost, full=True),
    SampleColumn("swarm_complete", path=swarm_complete, full=True),
    SampleColumn("swarm_members", path=swarm_members, full=True),
    SampleColumn("swarm_resumed", path=swarm_resumed, full=True),
    SampleColumn("swarm_cost_cap", path=swarm_cost_cap, full=True),
    SampleColumn("swarm_token_cap", path=swarm_token_cap, full=True),
    SampleColumn("swarm_time_cap", path=swarm_time_cap, full=True),
    SampleColumn("swarm_errored", path=swarm_errored, full=True),
    SampleColumn("swarm_no_usage", path=swarm_no_usage, full=True),
    SampleColumn("swarm_unpriced", path=swarm_unpriced, full=True),
    SampleColumn("swarm_unpriced_models", path=swarm_unpriced_models, full=True),
]
"""The eleven swarm columns for ``samples_df(columns=SampleSummary + SwarmColumns)``."""
