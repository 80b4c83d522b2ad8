"""The fan-out eval's fixtures: data shards with machine-checkable answers, and their loader.

``load_fixture("json-events")`` (or ``"csv-metrics"``, or the path of any directory of the same
shape) returns a checked ``Fixture``; ``fixture_names()`` lists the shipped ones.
"""

from __future__ import annotations

from ._fixture import Fixture, Shard, fixture_names, load_fixture

__all__ = ["Fixture", "Shard", "fixture_names", "load_fixture"]
