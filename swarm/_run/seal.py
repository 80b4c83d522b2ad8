"""The kernel's seal on the records it writes to a sample's store.

When a swarm ends, the kernel writes its records (``write_records``) and, last, *seals* them:
it keeps, in this process, the digest of every record it wrote to that sample's store
(``record_digest``: the SHA-256 of the record's canonical JSON).  ``kernel_seal(store)`` hands
the seal to a scorer, which can then tell records the kernel wrote from records that someone
else wrote or changed afterwards (a solver of one's own writing the same keys, a later write to
the store): the store's records must have the digests the seal holds, and a protected key the
kernel did not write must be absent.

The seal lives in memory only, keyed by the store object, and is gone when the store is: it is
evidence for the scorer that runs in the same eval, not a signature in the log.  Code running
in the same Python process can reach anything, this registry included; the seal is a guard
against records written through the store, not against in-process code.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from collections.abc import Mapping
from typing import Any

from inspect_ai.util import Store

from swarm._inspect.private import running_task_state

__all__ = ["canonical_json", "in_running_sample", "kernel_seal", "record_digest", "seal_records"]

_SEALS: dict[int, tuple[weakref.ref[Store], dict[str, str]]] = {}


def canonical_json(value: Any) -> str:
    """``value`` as canonical JSON (sorted keys, no spaces, ASCII only); digests hash it."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def record_digest(value: Any) -> str:
    """The SHA-256 (hex) of ``value``'s canonical JSON: the same for a record and for the
    record read back from an ``.eval`` log."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def seal_records(store: Store, digests: Mapping[str, str]) -> None:
    """Record that the kernel wrote ``digests`` (store key to the record's digest) to
    ``store``; a later run in the same sample adds to (and replaces keys of) the seal."""
    key = id(store)
    found = _SEALS.get(key)
    if found is None or found[0]() is not store:

        def forget(_: weakref.ref[Store], key: int = key) -> None:
            _SEALS.pop(key, None)

        found = (weakref.ref(store, forget), {})
        _SEALS[key] = found
    found[1].update(digests)


def kernel_seal(store: Store) -> dict[str, str] | None:
    """What the kernel wrote to ``store`` in this process: each record's store key and digest.
    ``None`` when no swarm wrote records to this store here (a log read back, a solver of
    one's own)."""
    found = _SEALS.get(id(store))
    if found is None or found[0]() is not store:
        return None
    return dict(found[1])


def in_running_sample() -> bool:
    """Whether the caller runs inside a sample of a running eval (a scorer scoring it), not
    in ``inspect score`` re-scoring a log: only there can a seal exist."""
    return running_task_state() is not None
