"""Checking, before a cost cap applies, that every member's model has a price."""

from __future__ import annotations

from collections.abc import Iterable

from inspect_ai.model import Model, get_model, get_model_info

from swarm._spec.roster import MemberSpec
from swarm.errors import ConfigError

__all__ = ["check_prices"]


def check_prices(specs: Iterable[MemberSpec], *, all_members: bool) -> None:
    """Raise ``ConfigError`` naming each member model that has no cost data.

    ``specs`` are the members' records in roster order (a counted record once per member).
    With ``all_members`` (there is a cost cap) every member's model needs a price; otherwise
    only those of members with a cost limit, and the message names their ``limits.cost``.
    A member's model is its factory's ``model`` argument when it gives one (a name or a
    ``Model``), else the eval's model.  Models chosen at run time (a subagent's) cannot be
    checked; their calls are counted as unpriced in the ledger.
    """
    missing: set[str] = set()
    fields: list[str] = []
    records = list({id(spec): spec for spec in specs}.values())  # one per record, in order
    for index, spec in enumerate(records):
        if not all_members and spec.limits.cost is None:
            continue
        model = spec.args.get("model")
        if model is None:
            model = get_model()
        if not isinstance(model, str | Model):
            continue
        info = get_model_info(model)
        if info is None or info.cost is None:
            missing.add(str(model))
            fields.append(f"members[{index}].limits.cost")
    if missing:
        names = ", ".join(sorted(missing))
        where, what, drop = (
            ("budget.cost", "a cost cap or cost limit", "the cost cap")
            if all_members
            else (fields[0], "a member's cost limit", "the cost limit")
        )
        raise ConfigError(
            f"{where}: {what} needs prices, and model(s) {names} have none. Give them "
            "with inspect_ai.model.set_model_info(name, ModelInfo(cost=ModelCost(...))) or "
            "set_model_cost(), or `inspect eval --model-cost-config prices.yaml`; or drop "
            f"{drop}."
        )
