"""The ``json-events`` fixture's data: eight JSONL logs of user and service events.

Each record has ``ts``, ``user``, ``action``, ``bytes`` (an integer) and ``service``.  People
work in sessions (login, work, mostly a logout; some sessions began before the log did), a few
at a time; two service accounts (``ci-bot``, ``backup-svc``) act without ever logging in; and
the action ``deploy-preview`` sits next to ``deploy``.  So a substring match, or counting every
user where login users are asked for, gives a different answer from the one asked for.  The
shard asking about ``bytes > 500`` holds records of exactly 500, 499 and 501 bytes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from ._gen_fixture import GeneratedFixture, GeneratedShard

__all__ = ["QUESTIONS", "events_fixture"]

Event = tuple[str, str, int]
"""(user, action, bytes) before a timestamp is assigned."""

PEOPLE = (
    "alice", "bob", "carol", "dmitri", "eve", "farah", "gwen", "hiro", "ines", "jamal",
    "kofi", "lena", "mateo", "nadia", "oskar", "priya", "quinn", "rosa", "sven", "tariq",
)  # fmt: skip
BOTS: dict[str, tuple[str, ...]] = {
    "ci-bot": ("deploy", "deploy-preview", "upload"),
    "backup-svc": ("upload", "download"),
}
WORK_WEIGHTS = {
    "view": 30,
    "upload": 12,
    "download": 14,
    "deploy": 8,
    "deploy-preview": 4,
    "delete": 4,
}
BYTES = {
    "view": (300, 2400),
    "login": (180, 420),
    "logout": (90, 260),
    "upload": (1200, 250_000),
    "download": (800, 90_000),
    "deploy": (4000, 60_000),
    "deploy-preview": (2000, 30_000),
    "delete": (0, 120),
}
SERVICES = ("api", "web", "billing", "search", "auth")

QUESTIONS = (
    'How many records have action exactly "deploy"?',
    'What is the sum of the bytes field over the records whose action is exactly "upload"?',
    'How many distinct values of the user field appear in records whose action is exactly "login"?',
    "What is the largest value of the bytes field in this file?",
    'How many records have action exactly "logout"?',
    "How many records have a bytes value greater than 500?",
    'What is the sum of the bytes field over the records whose action is exactly "deploy"?',
    "How many distinct values of the user field appear in this file?",
)

Answer = Callable[[list[Event]], int]

ANSWERS: tuple[Answer, ...] = (
    lambda events: sum(1 for _, action, _ in events if action == "deploy"),
    lambda events: sum(size for _, action, size in events if action == "upload"),
    lambda events: len({user for user, action, _ in events if action == "login"}),
    lambda events: max(size for _, _, size in events),
    lambda events: sum(1 for _, action, _ in events if action == "logout"),
    lambda events: sum(1 for _, _, size in events if size > 500),
    lambda events: sum(size for _, action, size in events if action == "deploy"),
    lambda events: len({user for user, _, _ in events}),
)


def _event(rng: random.Random, user: str, action: str) -> Event:
    low, high = BYTES[action]
    return (user, action, rng.randrange(low, high + 1))


def _session(rng: random.Random, user: str) -> list[Event]:
    """A person's session: a login (unless it began before the log did), some work, and
    mostly a logout."""
    events = [] if rng.randrange(100) < 15 else [_event(rng, user, "login")]
    for _ in range(rng.randrange(1, 9)):
        action = rng.choices(list(WORK_WEIGHTS), weights=list(WORK_WEIGHTS.values()))[0]
        events.append(_event(rng, user, action))
    if rng.randrange(100) < 75:
        events.append(_event(rng, user, "logout"))
    return events


def _stream(rng: random.Random, people: list[str], target: int) -> list[Event]:
    """Sessions of ``people``, up to three at a time interleaved, with service-account events
    in between, about ``target`` events in all."""
    sessions: list[list[Event]] = []
    while sum(len(session) for session in sessions) < target:
        sessions.append(_session(rng, rng.choice(people)))
    active: list[list[Event]] = []
    events: list[Event] = []
    while sessions or active:
        while sessions and len(active) < 3:
            active.append(sessions.pop(0))
        if rng.randrange(100) < 12:
            bot = rng.choice(sorted(BOTS))
            events.append(_event(rng, bot, rng.choice(BOTS[bot])))
        session = rng.choice(active)
        events.append(session.pop(0))
        if not session:
            active.remove(session)
    return events


def _edge_cases(index: int, people: list[str], rng: random.Random) -> list[Event]:
    """Records that make a careless reading of shard ``index``'s question answer wrongly."""
    if index in (0, 6):  # deploy: a preview must not count, a real deploy must exist
        return [("ci-bot", "deploy-preview", 7340), (rng.choice(people), "deploy", 12_288)]
    if index == 5:  # bytes > 500: exactly 500 must not count
        return [(rng.choice(people), "view", size) for size in (500, 500, 500, 499, 501)]
    if index == 2:  # distinct login users: one person logs in twice, a bot never does
        person = rng.choice(people)
        return [(person, "login", 233), (person, "login", 301), ("backup-svc", "upload", 4096)]
    return []


def _timestamped(events: list[Event], day: int, rng: random.Random) -> list[str]:
    at = datetime(2024, 5, day, 6, 0, 0, tzinfo=UTC)
    lines = []
    for user, action, size in events:
        at += timedelta(seconds=rng.randrange(4, 600))
        record = {
            "ts": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "user": user,
            "action": action,
            "bytes": size,
            "service": rng.choice(SERVICES),
        }
        lines.append(json.dumps(record) + "\n")
    return lines


def _shard(index: int, seed: str) -> GeneratedShard:
    rng = random.Random(f"{seed}/json-events/{index + 1}")
    people = list(PEOPLE)
    rng.shuffle(people)
    people = people[: rng.randrange(6, 14)]
    events = _stream(rng, people, target=rng.randrange(36, 100))
    for edge in _edge_cases(index, people, rng):
        events.insert(rng.randrange(len(events) + 1), edge)
    return GeneratedShard(
        file=f"events-{index + 1:02d}.jsonl",
        question=QUESTIONS[index],
        text="".join(_timestamped(events, index + 1, rng)),
        expected=ANSWERS[index](events),
    )


def events_fixture(seed: str) -> GeneratedFixture:
    """The ``json-events`` fixture, the same for the same ``seed``."""
    return GeneratedFixture(
        name="json-events",
        data_description=(
            "JSON Lines: one JSON record per line, with the fields ts, user, action, bytes "
            "and service"
        ),
        shards=tuple(_shard(index, seed) for index in range(len(QUESTIONS))),
    )
