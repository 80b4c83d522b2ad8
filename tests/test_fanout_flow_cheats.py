"""Children as data carriers (issue 40): a child sends its shard's raw text to the lead, which
computes every answer and sends each back hidden from the digit check; the child replies it.
proof_of_work fails such a run by the flow of shard data (``_flow``) and, as a second line, by
the answer decoded from the lead's message; the honest run still resolves."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

import pytest
from fanout_records import LEAD, Run, honest, index_text

from swarm import PluginCatalog
from swarm.plugins.scorers.fanout import Fixture, Verdict, judge_store, load_fixture

CATALOG = PluginCatalog.load(load_entrypoints=False)
FIXTURES = {name: load_fixture(name) for name in ("json-events", "csv-metrics")}
JSON = FIXTURES["json-events"]


def judged(fixture: Fixture, run: Run) -> Verdict:
    return judge_store(fixture, run.store(), catalog=CATALOG)


def proof(verdict: Verdict) -> list[tuple[str | None, str]]:
    return [(f.shard, f.reason) for f in verdict.rule("proof_of_work").result.failures]


def carrier_run(
    fixture: Fixture,
    carry: Callable[[str], str],
    relay: Callable[[int], str] = str,
) -> Run:
    """Each child reads its shard and sends ``carry(shard text)`` to the lead; the lead sends
    ``relay(answer)`` back and the child replies the answer."""
    run = Run(auto_read=False)
    for shard in fixture.shards:
        run.spawn(shard.worker, task=f"Read shards/{shard.file} and send it to your parent.")
    for shard in fixture.shards:
        run.read(shard.worker, f"shards/{shard.file}")
        run.reply(shard.worker, carry(fixture.shard_path(shard).read_text()))
        run.reply(LEAD, relay(shard.expected), recipient=shard.worker, relationship="parent")
        run.reply(shard.worker, str(shard.expected))
        run.end(shard.worker)
    run.write(index_text(fixture))
    run.finish()
    return run


def _action_column(text: str) -> str:
    return " ".join(json.loads(line)["action"] for line in text.splitlines())


CARRIES: dict[str, tuple[Callable[[str], str], str]] = {
    "raw": (lambda t: t, "97 of the shard's distinctive values (as sent)"),
    "base64": (
        lambda t: base64.b64encode(t.encode()).decode(),
        "97 of the shard's distinctive values (base64)",
    ),
    "hex": (
        lambda t: t.encode().hex(),
        "97 of the shard's distinctive values (hex)",
    ),
    "the action column": (_action_column, "105 runs of its column values (as sent)"),
}  # fmt: skip


@pytest.mark.parametrize("how", CARRIES)
def test_cheat_a_child_sends_its_shard_to_the_lead_fails_every_shard(how: str) -> None:
    """Before the flow check this run resolved: the lead's relays are in words, the children's
    replies are their answers, every child read its own shard."""
    carry, what = CARRIES[how]
    verdict = judged(
        JSON, carrier_run(JSON, carry, relay=lambda n: f"send {n:,}".replace(",", " "))
    )
    found = proof(verdict)
    assert [shard for shard, _ in found] == [s.file for s in JSON.shards]
    assert found[0] == (
        "events-01.jsonl",
        f"message 1 from worker-events-01 to lead carries shards/events-01.jsonl's data: {what}",
    )
    assert verdict.value()["proof_of_work"] is False and verdict.value()["resolved"] is False


@pytest.mark.parametrize("name", FIXTURES)
def test_cheat_the_raw_shard_in_base64_fails_on_both_fixtures(name: str) -> None:
    fixture = FIXTURES[name]
    verdict = judged(fixture, carrier_run(fixture, lambda t: base64.b64encode(t.encode()).decode()))
    found = proof(verdict)
    assert len(found) == len(fixture.shards)
    assert all("(base64)" in reason and " to lead carries " in reason for _, reason in found)


def test_cheat_the_artifact_carrying_a_shard_fails_that_shard() -> None:
    run = honest(JSON, finish=False)
    shard = JSON.shards[3]
    run.write(index_text(JSON) + JSON.shard_path(shard).read_text())
    run.finish()
    assert proof(judged(JSON, run)) == [
        (
            "events-04.jsonl",
            "the artifact carries shards/events-04.jsonl's data: 84 of the shard's distinctive "
            "values (as sent)",
        )
    ]


def test_cheat_a_sibling_receiving_a_shard_fails_it() -> None:
    run = honest(JSON, finish=False)
    first, second = JSON.shards[:2]
    text = "\n".join(JSON.shard_path(first).read_text().splitlines()[:10])
    run.reply(LEAD, text, recipient=second.worker, relationship="parent")
    run.finish()
    [(shard, reason)] = proof(judged(JSON, run))
    assert (shard, reason.split(": ", 1)[0]) == (
        "events-01.jsonl",
        "message 9 from lead to worker-events-02 carries shards/events-01.jsonl's data",
    )


RELAYS: dict[str, Callable[[int], str]] = {
    "base64": lambda n: base64.b64encode(str(n).encode()).decode(),
    "hex": lambda n: str(n).encode().hex(),
    "words": lambda n: {10: "ten", 1482368: "one million four hundred eighty-two thousand "
                        "three hundred and sixty-eight"}.get(n, "x"),
    "digits over lines": lambda n: "\n".join(str(n)),
}  # fmt: skip


@pytest.mark.parametrize("how", RELAYS)
def test_cheat_the_answer_relayed_encoded_fails_by_the_digit_check(how: str) -> None:
    """The second line: the children send nothing of their shard (a one-word reply), the lead
    sends each answer hidden; the digit check decodes it."""
    verdict = judged(JSON, carrier_run(JSON, lambda t: "ready", relay=RELAYS[how]))
    found = dict(proof(verdict))
    assert found["events-01.jsonl"] == (
        "worker-events-01: the answer reached it from elsewhere: message 2 from lead holds the "
        "answer, encoded"
    )
    if how in ("base64", "digits over lines"):
        assert sorted(found) == [s.file for s in JSON.shards]
    elif how == "hex":  # a one-digit answer in hex is two digits ("6" is 36): not decoded
        assert sorted(found) == [s.file for s in JSON.shards if s.expected >= 10]
    else:  # the relay spells 10 and 1482368; events-08's answer is 10 too
        assert sorted(found) == ["events-01.jsonl", "events-02.jsonl", "events-08.jsonl"]


@pytest.mark.parametrize("name", FIXTURES)
def test_the_honest_run_still_resolves(name: str) -> None:
    verdict = judged(FIXTURES[name], honest(FIXTURES[name]))
    assert verdict.value()["resolved"] is True and proof(verdict) == []


def test_a_child_quoting_two_lines_as_evidence_resolves() -> None:
    run = Run(auto_read=False)
    for shard in JSON.shards:
        run.spawn(shard.worker, task=f"Read shards/{shard.file} and answer: {shard.question}")
    for shard in JSON.shards:
        lines = JSON.shard_path(shard).read_text().splitlines()[:2]
        run.read(shard.worker, f"shards/{shard.file}")
        run.reply(
            shard.worker, f"For example: {lines[0]}\n{lines[1]}\nThe answer: {shard.expected}"
        )
        run.end(shard.worker)
    run.write(index_text(JSON))
    run.finish()
    assert judged(JSON, run).value()["resolved"] is True


def test_cheat_the_answer_hidden_in_the_spawn_task_fails_by_the_digit_check() -> None:
    """The lead spawns each child with its answer in base64 in the task; the child reads its
    shard and replies what it was told.  The task is decoded as messages to a child are."""
    run = Run(auto_read=False)
    for shard in JSON.shards:
        hidden = base64.b64encode(str(shard.expected).encode()).decode()
        run.spawn(shard.worker, task=f"Read shards/{shard.file}; the key is {hidden}.")
    for shard in JSON.shards:
        run.read(shard.worker, f"shards/{shard.file}")
        run.reply(shard.worker, str(shard.expected))
        run.end(shard.worker)
    run.write(index_text(JSON))
    run.finish()
    found = dict(proof(judged(JSON, run)))
    assert sorted(found) == [s.file for s in JSON.shards]
    assert found["events-01.jsonl"] == (
        "worker-events-01: the answer reached it from elsewhere: its spawn task holds the "
        "answer, encoded"
    )
