"""The answer rules that read answers: ``vote`` and ``verify_then_vote``, and their normaliser.

Both count the answers of roster members that submitted (a spawned member's answer is to its
parent's task), as the views hold them (cut at ``ANSWER_MAX_CHARS``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from swarm._checks import shown
from swarm._hooks.catalog import catalog_in_use
from swarm.errors import ConfigError
from swarm.records import Answer, MemberView, SwarmView

__all__ = ["Normalizer", "load_normalizer", "normalize_answer", "roster_submissions", "vote"]

Normalizer = Callable[[str], str]
"""A function from an answer's text to the form votes compare."""


def normalize_answer(text: str) -> str:
    """The default normaliser: whitespace stripped from both ends, every run of whitespace
    inside made one space, and the text case-folded (``"  Forty\\n TWO "`` -> ``"forty two"``)."""
    return " ".join(text.split()).casefold()


def load_normalizer(value: Any, where: str) -> Normalizer:
    """A normaliser from a setting: a callable (from Python), or a registered name.

    A name is looked up among the normalisers plugins register (``swarm_register_normalizers``;
    the built-ins: ``default``, ``exact``, ``number``) in the catalog the swarm is built with.
    A string is never imported: ``"module:function"`` is refused, since a topology file or a
    ``-S`` value must not name Python to run on model-written answers.

    ``ConfigError`` naming ``where`` for anything else, or an unknown name.
    """
    if callable(value):
        return value  # type: ignore[no-any-return]
    catalog = catalog_in_use()
    known = ", ".join(catalog.names("normalizer")) or "none"
    if not isinstance(value, str) or not value:
        raise ConfigError(
            f"{where}: expected a registered normaliser's name ({known}), got {shown(value)}"
        )
    if ":" in value:
        raise ConfigError(
            f"{where}: {shown(value)} names Python code; a topology file or -S value can "
            f"only name a registered normaliser ({known}). Register yours in a plugin "
            "(@hookimpl def swarm_register_normalizers(register): register('mine', mine), "
            "under the 'swarm' entry point group) or pass the function itself from Python: "
            "see docs/answers.md"
        )
    try:
        found = catalog.lookup("normalizer", value).factory
    except ConfigError as ex:
        raise ConfigError(f"{where}: {ex}") from None
    return found


def _name(normalize: Normalizer) -> str:
    module = getattr(normalize, "__module__", None)
    qualname = getattr(normalize, "__qualname__", None) or repr(normalize)
    return f"{module}:{qualname}" if module else qualname


def _normalized(normalize: Normalizer, m: MemberView) -> str | None:
    if m.answer is None:
        return None
    try:
        key = normalize(m.answer)
    except Exception as ex:
        raise ValueError(
            f"the normaliser {_name(normalize)} failed on the answer of {m.name}: "
            f"{type(ex).__name__}: {ex}"
        ) from ex
    except BaseException as ex:  # SystemExit, or the run's bound: the hook's guard holds it
        ex.add_note(f"in the normaliser {_name(normalize)} on the answer of {m.name}")
        raise
    if not isinstance(key, str):
        raise TypeError(
            f"the normaliser {_name(normalize)} returned {type(key).__name__} {key!r} for the "
            f"answer of {m.name}, not a str"
        )
    return key or None


def roster_submissions(view: SwarmView) -> list[MemberView]:
    """The roster members that submitted (a spawned member's answer is to its parent's task),
    in the order they submitted: by the submission's time, then roster order."""
    return sorted(
        (m for m in view.submissions if m.depth == 0), key=lambda m: (m.ended or 0.0, m.index)
    )


def vote(
    view: SwarmView, *, normalize: Normalizer | None = None, verified_only: bool = False
) -> Answer:
    """The most frequent normalised answer among the roster members' submissions.

    ``normalize`` (default ``normalize_answer``) maps each answer to the form compared; an
    answer that normalises to ``""`` is no vote.  A tie goes to the tied answer submitted first
    (by the submission's time, then roster order), and the answer is that first submission's
    member (mode ``vote``).  With ``verified_only`` only submissions the verifier passed vote
    (mode ``verify_then_vote``; none passed: no answer, reason ``no_verified_submissions``).
    No vote at all: no answer, reason ``no_submissions``.

    A normaliser that raises or returns something other than a ``str`` raises an error naming
    it (the hook that called ``vote`` then fails the sample with a ``PluginError``).
    """
    norm = normalize or normalize_answer
    mode = "verify_then_vote" if verified_only else "vote"
    subs = roster_submissions(view)
    if verified_only:
        subs = [m for m in subs if m.verified]
        if not subs:
            return Answer(member=None, mode=None, reason="no_verified_submissions")
    counts: dict[str, int] = {}
    first: dict[str, MemberView] = {}
    for m in subs:
        key = _normalized(norm, m)
        if key is None:
            continue
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, m)
    if not counts:
        return Answer(member=None, mode=None, reason="no_submissions")
    # dicts keep insertion order, which is submission order: max() keeps the first of a tie
    winner = max(counts, key=lambda k: counts[k])
    return Answer(member=first[winner].name, mode=mode)  # type: ignore[arg-type]
