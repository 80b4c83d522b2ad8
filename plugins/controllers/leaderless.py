"""``leaderless``: everyone starts at once; stop at the first submission or when all are done."""

from __future__ import annotations

from typing import Any

from swarm import (
    Answer,
    ConfigError,
    Decision,
    FinalRule,
    MemberSubmitted,
    Normalizer,
    Register,
    SwarmView,
    Synthesis,
    first_submission,
    hookimpl,
    last_submission,
    load_normalizer,
    vote,
)

FINAL_RULES = ("first", "last", "vote", "verify_then_vote", "synthesize")


class Leaderless:
    """The leaderless controller.  Configuration only: every decision reads the snapshot.

    Starting every member and stopping ``all_done`` when none is left running are the
    kernel's default decisions, so this controller only decides the stop at a submission and
    the answer.  ``verifier`` (read by the kernel) checks each submission; ``synthesis``
    (read by the kernel) is the final step of ``synthesize``.
    """

    def __init__(
        self,
        stop_on_submission: bool,
        final: FinalRule,
        *,
        verifier: Any = None,
        normalize: Normalizer | None = None,
        synthesis: Synthesis | None = None,
    ) -> None:
        self.stop_on_submission = stop_on_submission
        self.final = final
        self.verifier = verifier
        self.normalize = normalize
        self.synthesis = synthesis

    @hookimpl
    def swarm_on_submission(self, view: SwarmView, event: MemberSubmitted) -> Decision | None:
        # a spawned member's submission answers its parent's task: it stops nothing
        if not self.stop_on_submission or view.member(event.member).depth > 0:
            return None
        return Decision(stop="submitted")

    @hookimpl
    def swarm_choose_answer(self, view: SwarmView) -> Answer:
        if self.final in ("vote", "verify_then_vote"):
            only = self.final == "verify_then_vote"
            return vote(view, normalize=self.normalize, verified_only=only)
        if self.final == "synthesize":
            if not any(m.depth == 0 for m in view.submissions):
                return Answer(member=None, mode=None, reason="no_submissions")
            return Answer(member=None, mode="synthesize")
        return last_submission(view) if self.final == "last" else first_submission(view)


def leaderless(
    stop_on_submission: bool | None = None,
    final: FinalRule = "first",
    verifier: Any = None,
    normalize: Any = None,
    synthesize_model: str | None = None,
    synthesize_prompt: str | None = None,
) -> Leaderless:
    """Start every member at once.

    Args:
        stop_on_submission: stop the swarm (reason ``submitted``) at the first submission;
            when false, let every member finish (reason ``all_done``).  Default: true for
            ``final="first"``, false for every other rule (each needs every answer).
        final: the answer: ``"first"`` (earliest submission), ``"last"`` (latest), ``"vote"``
            (the most frequent normalised answer), ``"verify_then_vote"`` (the same among the
            answers ``verifier`` passed) or ``"synthesize"`` (one model call that reads the
            answers and writes one).
        verifier: checks every submission, as the ``verified`` controller's does (``"task"``,
            a scorer name, or a ``Scorer``); needed by ``verify_then_vote``.  Default: none.
        normalize: the normaliser of ``vote`` and ``verify_then_vote``: a registered
            normaliser's name (``default``, ``exact``, ``number`` or a plugin's), or from
            Python a function of one str returning a str.  Default: ``normalize_answer``.
        synthesize_model: the model of ``synthesize``'s call.  Default: the task's model.
        synthesize_prompt: its prompt, with ``{input}`` and ``{answers}``.  Default:
            ``SYNTHESIS_PROMPT``.
    """
    if final not in FINAL_RULES:
        listed = ", ".join(repr(r) for r in FINAL_RULES)
        raise ConfigError(f"leaderless.final: expected one of {listed}, got {final!r}")
    if stop_on_submission is None:
        stop_on_submission = final == "first"
    if not isinstance(stop_on_submission, bool):
        raise ConfigError(
            f"leaderless.stop_on_submission: expected true or false, got {stop_on_submission!r}"
        )
    if final != "first" and stop_on_submission:
        raise ConfigError(
            f"leaderless.final: {final!r} needs stop_on_submission=False (a stop at the first "
            "submission leaves only the first)"
        )
    if verifier is not None and not isinstance(verifier, str) and not callable(verifier):
        raise ConfigError(f"leaderless.verifier: expected a scorer, got {verifier!r}")
    if final == "verify_then_vote" and verifier in (None, ""):
        raise ConfigError(
            "leaderless.verifier: 'verify_then_vote' needs a verifier: 'task', a scorer name "
            "or a Scorer"
        )
    for name, value in (
        ("synthesize_model", synthesize_model),
        ("synthesize_prompt", synthesize_prompt),
    ):
        if value is not None and (not isinstance(value, str) or not value):
            raise ConfigError(f"leaderless.{name}: expected a non-empty string, got {value!r}")
    if final != "synthesize" and (synthesize_model or synthesize_prompt):
        raise ConfigError(
            "leaderless.synthesize_model: set only with final='synthesize'"
            if synthesize_model
            else "leaderless.synthesize_prompt: set only with final='synthesize'"
        )
    synthesis = (
        Synthesis(model=synthesize_model, prompt=synthesize_prompt)
        if final == "synthesize"
        else None
    )
    if normalize is not None and final not in ("vote", "verify_then_vote"):
        raise ConfigError(
            f"leaderless.normalize: set only with final='vote' or 'verify_then_vote' (final "
            f"{final!r} compares no answers, so a normaliser would never be used)"
        )
    norm = None if normalize is None else load_normalizer(normalize, "leaderless.normalize")
    return Leaderless(
        stop_on_submission, final, verifier=verifier, normalize=norm, synthesis=synthesis
    )


@hookimpl
def swarm_register_controllers(register: Register) -> None:
    register("leaderless", leaderless)
