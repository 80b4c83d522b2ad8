"""``swarm timeline``: real logs drawn, and the drawings checked against the logs' own events."""

from __future__ import annotations

import ast
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import attrs
import pytest
from inspect_ai.agent import Agent, agent, as_tool, react
from inspect_ai.event import ModelEvent, SpanBeginEvent, ToolEvent
from inspect_ai.log import EvalSample, read_eval_log
from inspect_ai.solver import generate

from swarm import channel, controller, member, swarm, swarm_on_continue, swarm_tools
from swarm.analysis import swarm_evidence
from swarm.cli import main
from swarm.testing import call, fail, pause, reply, run_eval, scripted_model, submit
from swarm.timeline import (
    Lane,
    ModelCall,
    Notice,
    RunTimeline,
    Stop,
    TimelineError,
    ToolCall,
    timeline,
    write_timeline,
)

from helpers import noop, shm_worker

ROOT = Path(__file__).resolve().parent.parent
BOARD = "/shared_memory"
ORDER = ["writer", "waiter", "crasher", "boss"]


@agent
def delegator() -> Agent:
    """A member with a subagent (``helper``) it calls as a tool."""
    helper = react(name="helper", description="Adds numbers.", tools=[noop()])
    return react(tools=[as_tool(helper), swarm_tools()], on_continue=swarm_on_continue())


# writer posts the answer at 0.4 s, appends at 0.6 s and submits a second later, which stops
# the swarm; waiter waits twice (the first returns at once: crasher has ended; the second with
# the file), is refused an overwrite of a file it has not viewed, gets a notice of the append
# (the wait's result covered the create), and is cancelled after the 0.5 s grace in a call;
# crasher's first call raises; boss's subagent calls a tool and submits, then boss is cancelled
SCRIPTS: dict[str, Any] = {
    "writer": [
        reply("warming up"),
        pause(0.4, call("shared_memory", command="create", path=f"{BOARD}/a.md", file_text="42")),
        pause(0.2, call("shared_memory", command="append", path=f"{BOARD}/a.md", append_text="!")),
        call("noop", i=2),
        pause(1.0, submit("42")),
    ],
    "waiter": [
        call("swarm_wait"),
        call("swarm_wait", path=f"{BOARD}/a.md"),
        pause(0.5, call("shared_memory", command="create", path=f"{BOARD}/a.md", file_text="x")),
        pause(5, reply("still thinking")),
    ],
    "crasher": [fail("model API down")],
    "boss": [call("helper", input="add 1 and 2"), pause(5, submit("41"))],
    "boss/sub": [call("noop", i=7), submit("3")],
}


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, EvalSample]:
    log_dir = tmp_path_factory.mktemp("timeline-logs")
    log = run_eval(
        swarm(
            members=[
                member(shm_worker, name="writer"),
                member(shm_worker, name="waiter"),
                member(shm_worker, name="crasher", role="breaks"),
                member(delegator, name="boss"),
            ],
            channels=[channel("shared_memory")],
            controller=controller("leaderless", stop_on_submission=True),
            budget={"grace": 0.5},
        ),
        model=scripted_model(SCRIPTS),
        log_dir=log_dir,
    )
    assert log.status == "success", log.error
    path = Path(log.location)
    samples = read_eval_log(path).samples
    assert samples
    return path, samples[0]


# -- reading the log independently of the timeline's own code -------------------------------


def events_by_member(sample: EvalSample) -> dict[str, Counter[str]]:
    """Model and tool events per member, found by walking each event's span up to a member's
    agent span (a child of the swarm's own agent span)."""
    spans = {e.id: e for e in sample.events if isinstance(e, SpanBeginEvent)}
    swarm_span = next(s.id for s in spans.values() if s.type == "agent" and s.name == "swarm")
    members = {s.id: s.name for s in spans.values() if s.parent_id == swarm_span}

    def member_of(span: str | None) -> str | None:
        while span is not None and span not in members:
            span = spans[span].parent_id if span in spans else None
        return members.get(span) if span is not None else None

    found: dict[str, Counter[str]] = {}
    for e in sample.events:
        if isinstance(e, ModelEvent | ToolEvent):
            who = member_of(e.span_id)
            if who is not None:
                found.setdefault(who, Counter())[
                    "model" if isinstance(e, ModelEvent) else "tool"
                ] += 1
    return found


def comm_by_member(sample: EvalSample) -> dict[str, Counter[str]]:
    """The comm evidence per member: writes, refusals, waits and (distinct) notices."""
    found: dict[str, Counter[str]] = {}
    notices: set[tuple[str, str]] = set()
    for data in swarm_evidence(sample):
        counts = found.setdefault(data["member"], Counter())
        kind = data["kind"]
        if kind == "delivered":
            counts["write"] += 1
        elif kind == "sent":
            counts["rejected"] += 1
        elif kind == "waited":
            counts["wait"] += 1
        elif kind == "notified" and (data["member"], data["notice"]) not in notices:
            notices.add((data["member"], data["notice"]))
            counts["notice"] += 1
    return found


# -- reading the drawings --------------------------------------------------------------------


def local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def classes(e: ET.Element) -> list[str]:
    return (e.get("class") or "").split()


def svg_lanes(root: ET.Element) -> list[ET.Element]:
    return [e for e in root.iter() if local(e.tag) == "g" and e.get("class") == "lane"]


def drawn(lane: ET.Element, kind: str) -> int:
    """How many marks of ``kind`` a lane's drawn marks stand for."""
    return sum(
        int(e.get("data-count", "0"))
        for e in lane.iter()
        if "mark" in classes(e) and kind in classes(e)
    )


def child_text(lane: ET.Element, cls: str) -> str:
    found = next(e for e in lane.iter() if local(e.tag) == "text" and cls in classes(e))
    return "".join(found.itertext()).strip() if cls != "name" else (found.text or "").strip()


def titles(lane: ET.Element, kind: str) -> list[str]:
    return [
        "".join(t.itertext())
        for e in lane.iter()
        if "mark" in classes(e) and kind in classes(e)
        for t in e
        if local(t.tag) == "title"
    ]


def embedded_svg(html: str) -> ET.Element:
    start, end = html.index("<svg"), html.index("</svg>") + len("</svg>")
    return ET.fromstring(html[start:end])


# -- the drawing of a real run ---------------------------------------------------------------


def test_svg_has_a_lane_per_member_in_roster_order_with_its_status(
    scenario: tuple[Path, EvalSample],
) -> None:
    _, sample = scenario
    result = sample.store["inspect_swarm:result"]
    root = ET.fromstring(timeline(sample).to_svg())
    assert local(root.tag) == "svg"
    lanes = svg_lanes(root)
    assert [g.get("data-member") for g in lanes] == [m["name"] for m in result["members"]] == ORDER
    labels = {g.get("data-member"): child_text(g, "status") for g in lanes}
    assert labels == {m["name"]: m["status"] for m in result["members"]}
    assert labels == {
        "writer": "submitted",
        "waiter": "cancelled",
        "crasher": "errored",
        "boss": "cancelled",
    }


def test_marks_per_lane_match_the_logs_events(scenario: tuple[Path, EvalSample]) -> None:
    _, sample = scenario
    lanes = {g.get("data-member"): g for g in svg_lanes(ET.fromstring(timeline(sample).to_svg()))}
    events, comm = events_by_member(sample), comm_by_member(sample)
    ledger = {m["name"]: m["calls"] for m in sample.store["inspect_swarm:ledger"]["members"]}
    for name, lane in lanes.items():
        for kind in ("model", "tool"):
            assert drawn(lane, kind) == events.get(name, Counter())[kind], (name, kind)
        for kind in ("write", "rejected", "wait", "notice"):
            assert drawn(lane, kind) == comm.get(name, Counter())[kind], (name, kind)
        calls = ledger[name]
        assert drawn(lane, "model") == calls["calls"] + calls["errored"] + calls["cache_replays"]
    # what the scripts make certain
    assert [drawn(lanes[n], "model") for n in ORDER] == [5, 4, 1, 4]
    assert [drawn(lanes[n], "tool") for n in ORDER] == [4, 3, 0, 3]
    assert [drawn(lanes[n], "write") for n in ORDER] == [2, 0, 0, 0]
    assert [drawn(lanes[n], "rejected") for n in ORDER] == [0, 1, 0, 0]
    assert drawn(lanes["waiter"], "wait") == 2
    assert drawn(lanes["waiter"], "notice") == 1


def test_hover_names_tools_waits_and_refusals(scenario: tuple[Path, EvalSample]) -> None:
    _, sample = scenario
    lanes = {g.get("data-member"): g for g in svg_lanes(ET.fromstring(timeline(sample).to_svg()))}
    writer_tools = " ".join(titles(lanes["writer"], "tool"))
    for name in ("shared_memory", "noop", "submit"):
        assert name in writer_tools
    assert "helper" in " ".join(titles(lanes["boss"], "tool"))
    assert " ".join(titles(lanes["waiter"], "wait")).count(": news") == 2
    (refused,) = titles(lanes["waiter"], "rejected")
    assert refused.startswith("refused shared_memory create w-3 /shared_memory/a.md")
    assert ": unviewed: " in refused
    (errored,) = titles(lanes["crasher"], "model")
    assert "ScriptedModelError('model API down')" in errored
    assert "mark" in classes(next(e for e in lanes["crasher"].iter() if "err" in classes(e)))


def test_stop_line_and_answer(scenario: tuple[Path, EvalSample]) -> None:
    _, sample = scenario
    result = sample.store["inspect_swarm:result"]
    root = ET.fromstring(timeline(sample).to_svg())
    stop = next(e for e in root.iter() if e.get("class") == "stop")
    assert stop.get("data-reason") == "submitted"
    # drawn where the swarm recorded it, which comes with the first submission: writer's end
    recorded = next(
        e.data["time"]
        for e in sample.events
        if e.event == "info" and isinstance(e.data, dict) and e.data.get("type") == "stop"
    )
    assert float(stop.get("data-time", "nan")) == pytest.approx(recorded, abs=1e-6)
    writer_end = next(m["time"] for m in result["members"] if m["name"] == "writer")
    assert 0 <= recorded - writer_end < 0.05
    label = "".join(next(e for e in stop if local(e.tag) == "text").itertext())
    assert label.startswith("stop: submitted · ")
    lanes = svg_lanes(root)
    assert [g.get("data-answer") for g in lanes] == ["true", "false", "false", "false"]
    assert child_text(lanes[0], "name") == "★ writer"
    assert [e for e in lanes[0].iter() if "star" in classes(e)]
    assert not [e for g in lanes[1:] for e in g.iter() if "star" in classes(e)]


def test_the_model_behind_the_picture(scenario: tuple[Path, EvalSample]) -> None:
    _, sample = scenario
    run = timeline(sample).run
    boss = run.lane("boss")
    # the subagent's calls are the member's, marked nested; its own loop's are not
    assert [c.nested for c in boss.model_calls] == [False, True, True, False]
    assert [(t.function, t.nested) for t in boss.tool_calls] == [
        ("helper", False),
        ("noop", True),
        ("submit", True),
    ]
    waiter = run.lane("waiter")
    assert [w.outcome for w in waiter.waits] == ["news", "news"]
    assert waiter.waits[1].path == f"{BOARD}/a.md"
    assert [(w.record, w.rejected) for w in waiter.writes] == [("w-3", "unviewed")]
    assert run.lane("crasher").error == "ScriptedModelError('model API down')"
    # Inspect records no end for a failed or cancelled call: it lasts until its loop goes on
    # (here: the member's span ends, just before the member's recorded end)
    for name, error in [("crasher", "ScriptedModelError"), ("waiter", "model call cancelled")]:
        lane = run.lane(name)
        last = lane.model_calls[-1]
        assert error in (last.error or "") and not last.end_recorded
        assert lane.ended is not None and lane.ended - 0.05 <= last.end <= lane.ended
    assert run.lane("waiter").model_calls[-1].start < run.lane("writer").ended - 0.5
    assert all(c.end_recorded for c in run.lane("writer").model_calls)
    # the swarm records when its stop began: just after the writer's submission ended it
    assert run.stop is not None
    assert (run.stop.reason, run.stop.basis) == ("submitted", "recorded")
    assert 0 <= run.stop.time - (run.lane("writer").ended or -1) < 0.05
    # every mark lies within its member's life
    for lane in run.lanes:
        assert lane.started is not None and lane.ended is not None
        for mark in (*lane.model_calls, *lane.tool_calls, *lane.writes, *lane.waits, *lane.notices):
            assert lane.started <= mark.start <= mark.end <= lane.ended + 0.05, (lane.name, mark)
    assert run.duration == pytest.approx(sample.store["inspect_swarm:metrics"]["wall_clock"])
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        run.duration = 0  # type: ignore[misc]


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.refs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.refs.extend(v or "" for k, v in attrs if k in ("src", "href", "xlink:href", "srcset"))


def test_html_is_self_contained(scenario: tuple[Path, EvalSample]) -> None:
    _, sample = scenario
    html = timeline(sample).to_html()
    assert html.startswith("<!DOCTYPE html>")
    assert "http://" not in html and "https://" not in html
    refs = _Refs()
    refs.feed(html)
    assert refs.refs == []
    assert not {"link", "img", "iframe", "object", "embed"} & set(refs.tags)
    assert refs.tags.count("script") == 1 and "input" in refs.tags
    root = embedded_svg(html)
    assert [g.get("data-member") for g in svg_lanes(root)] == ORDER
    # the standalone SVG names only its namespace
    svg = timeline(sample).to_svg()
    assert svg.replace('xmlns="http://www.w3.org/2000/svg"', "").count("http") == 0


def test_notebook_view_and_log_sources(scenario: tuple[Path, EvalSample]) -> None:
    path, _ = scenario
    from_path, from_log = timeline(path), timeline(read_eval_log(path), sample=1, epoch=1)
    assert from_path.to_html() == from_log.to_html()
    assert from_path.run.task == "task"
    fragment = from_path._repr_html_()
    assert fragment.startswith('<div class="swarm-timeline" id="stl-')
    assert "<svg" in fragment and 'class="stl-filter"' in fragment and "<html" not in fragment
    with pytest.raises(TimelineError, match=r"has no sample '7'; its samples: 1$"):
        timeline(path, sample=7)
    with pytest.raises(TimelineError, match=r"has no epoch 2; its epochs: 1$"):
        timeline(path, sample=1, epoch=2)


def test_save_picks_the_format_by_suffix(scenario: tuple[Path, EvalSample], tmp_path: Path) -> None:
    _, sample = scenario
    t = timeline(sample)
    assert t.save(tmp_path / "x.svg").read_text(encoding="utf-8") == t.to_svg()
    assert t.save(tmp_path / "x.HTML").read_text(encoding="utf-8") == t.to_html()
    with pytest.raises(TimelineError, match=r"must be \.html or \.svg, not '\.png'"):
        t.save(tmp_path / "x.png")


# -- the command line ------------------------------------------------------------------------


def test_cli_end_to_end(scenario: tuple[Path, EvalSample], tmp_path: Path) -> None:
    path, _ = scenario
    out = tmp_path / "x.html"
    done = subprocess.run(
        [str(Path(sys.executable).parent / "swarm"), "timeline", str(path), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"wrote {out} (sample 1, epoch 1)\n"
    assert out.read_text(encoding="utf-8") == timeline(path).to_html()


def run_main(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["swarm", *args])
    with pytest.raises(SystemExit) as exit:
        main()
    out, err = capsys.readouterr()
    code = exit.value.code
    return (code if isinstance(code, int) else 0), out, err


def test_cli_default_output_and_svg(
    scenario: tuple[Path, EvalSample],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, _ = scenario
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_main(monkeypatch, capsys, "timeline", str(path))
    assert code == 0
    assert (tmp_path / f"{path.stem}-1.html").read_text(encoding="utf-8").startswith("<!DOCTYPE")
    assert out == f"wrote {path.stem}-1.html (sample 1, epoch 1)\n"
    code, _, _ = run_main(
        monkeypatch, capsys, "timeline", str(path), "--sample", "1", "-o", "t.svg"
    )
    assert code == 0
    ET.parse(tmp_path / "t.svg")


def test_cli_picks_sample_and_epoch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    model = scripted_model({"*": [call("noop", i=1), submit("42")]})
    log = run_eval(
        swarm(members=member(shm_worker, count=2)),
        model=model,
        log_dir=tmp_path / "logs",
        samples=2,
        epochs=2,
        log_format="json",
    )
    path = Path(log.location)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_main(
        monkeypatch, capsys, "timeline", str(path), "--sample", "2", "--epoch", "2"
    )
    name = f"{path.stem}-2-epoch2.html"
    assert (code, out) == (0, f"wrote {name} (sample 2, epoch 2; the log has 2 samples)\n")
    svg = embedded_svg((tmp_path / name).read_text(encoding="utf-8"))
    assert "sample 2, epoch 2 · 2 members" in (svg.get("aria-label") or "")
    written = write_timeline(path, tmp_path / "first.svg")
    assert (written.sample, written.epoch, written.samples) == ("1", 1, 2)


@pytest.fixture(scope="module")
def plain_log(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A log of an eval with no swarm in it."""
    log = run_eval(generate(), log_dir=tmp_path_factory.mktemp("plain"), samples=2)
    yield Path(log.location)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.eval"], "error: no log file at missing.eval"),
        (["{log}", "--sample", "nine"], "error: {log} has no sample 'nine'; its samples: 1, 2"),
        (
            ["{log}", "--sample", "2", "--epoch", "3"],
            "error: sample '2' of {log} has no epoch 3; its epochs: 1",
        ),
        (
            ["{log}", "--sample", "2"],
            "error: sample 2 (epoch 1) has no swarm records: inspect_swarm:result is not in its "
            "store, so no swarm ran in it",
        ),
        (
            ["{log}", "-o", "x.png"],
            "error: x.png: the output's suffix must be .html or .svg, not '.png'",
        ),
        (["{dir}"], "error: {dir} is a directory; give the path of one log file"),
    ],
    ids=["missing-log", "unknown-sample", "unknown-epoch", "no-swarm", "bad-suffix", "directory"],
)
def test_cli_fails_cleanly(
    plain_log: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    fill = {"log": str(plain_log), "dir": str(plain_log.parent)}
    code, out, err = run_main(monkeypatch, capsys, "timeline", *(a.format(**fill) for a in args))
    assert code == 1
    assert (out, err) == ("", message.format(**fill) + "\n")
    assert list(tmp_path.iterdir()) == []


# -- spawning and messages: the records the spawning runtime writes --------------------------


def test_children_nest_under_their_parent_with_spawns_and_messages(
    scenario: tuple[Path, EvalSample],
) -> None:
    _, sample = scenario
    store = dict(sample.store)
    result = dict(store["inspect_swarm:result"])
    members = [dict(m) for m in result["members"]]
    crasher = next(m for m in members if m["name"] == "crasher")
    crasher.update(parent="boss", depth=1)
    store["inspect_swarm:result"] = {**result, "members": members}
    store["inspect_swarm:spawns"] = {
        "version": 1,
        "entries": [
            {
                "seq": 1,
                "time": 0.01,
                "op": "spawn",
                "member": "crasher",
                "requested": "crasher",
                "parent": "boss",
                "depth": 1,
            },
            {
                "seq": 2,
                "time": 0.02,
                "op": "refused",
                "member": None,
                "requested": "deep",
                "parent": "boss",
                "reason": "max_depth",
            },
        ],
    }
    store["inspect_swarm:messages"] = [
        {"seq": 1, "time": 0.05, "sender": "crasher", "recipient": "boss", "kind": "message"},
        {"seq": 2, "time": 0.06, "sender": "crasher", "recipient": "boss", "kind": "receipt"},
        {"seq": 3, "time": 0.07, "sender": "nobody", "recipient": "boss", "kind": "message"},
    ]
    t = timeline(sample.model_copy(update={"store": store}))
    assert [(lane.name, lane.depth) for lane in t.run.lanes] == [
        ("writer", 0),
        ("waiter", 0),
        ("boss", 0),
        ("crasher", 1),
    ]
    root = ET.fromstring(t.to_svg())
    lanes = {g.get("data-member"): g for g in svg_lanes(root)}
    assert child_text(lanes["crasher"], "name") == "└ crasher"
    assert lanes["crasher"].get("data-parent") == "boss"
    assert drawn(lanes["boss"], "spawn") == 1 and drawn(lanes["boss"], "spawn-refused") == 1
    assert "refused at 0.020 s: max_depth" in " ".join(titles(lanes["boss"], "spawn-refused"))
    links = next(e for e in root.iter() if e.get("class") == "links")
    lines = [e for e in links if local(e.tag) == "line"]
    messages = [e for e in lines if "msg" in classes(e)]
    assert [(m.get("data-from"), m.get("data-to"), "receipt" in classes(m)) for m in messages] == [
        ("crasher", "boss", False),
        ("crasher", "boss", True),
    ]
    height = int(root.get("data-lane-height", "0"))
    y = {name: float(g.get("transform", "").split(",")[1].rstrip(")")) for name, g in lanes.items()}
    assert float(messages[0].get("y1", "0")) == y["crasher"] + height / 2
    assert float(messages[0].get("y2", "0")) == y["boss"] + height / 2
    (link,) = [e for e in lines if "spawn-link" in classes(e)]
    assert (link.get("data-from"), link.get("data-to")) == ("boss", "crasher")


def test_stop_time_for_other_reasons(scenario: tuple[Path, EvalSample]) -> None:
    _, sample = scenario
    result = sample.store["inspect_swarm:result"]

    # logs from before the swarm recorded its stop: the time is inferred from the records
    events = [
        e
        for e in sample.events
        if not (
            isinstance(e.data if e.event == "info" else None, dict) and e.data.get("type") == "stop"
        )  # type: ignore[union-attr]
    ]
    unrecorded = sample.model_copy(update={"events": events})

    def stop_for(reason: str) -> Stop | None:
        store = {**sample.store, "inspect_swarm:result": {**result, "stop_reason": reason}}
        return timeline(unrecorded.model_copy(update={"store": store})).run.stop

    last = max(m["time"] for m in result["members"])
    assert stop_for("all_done") == Stop(reason="all_done", time=last, basis="the last member's end")
    quiet = stop_for("quiescence")
    assert quiet is not None and quiet.basis == "not recorded: drawn at the run's end"
    assert quiet.time == timeline(unrecorded).run.duration


# -- 256 members, generated ------------------------------------------------------------------


def big_run(members: int = 256, calls: int = 30) -> RunTimeline:
    """``members`` lanes over 100 s: ``calls`` model and tool calls each, the first ten crowded
    into 0.1 s, and a notice; the answer in the middle; one in ten errored."""
    lanes = []
    for i in range(members):
        crowded = [1.0 + 0.01 * j for j in range(10)]
        spread = [2.0 + 95.0 * j / calls for j in range(calls - 10)]
        starts = crowded + spread
        lanes.append(
            Lane(
                name=f"worker-{i + 1}",
                role="worker",
                state="ended",
                status="errored" if i % 10 == 9 else "submitted",
                started=0.0,
                ended=99.0,
                answer=i == 127,
                model_calls=tuple(ModelCall(start=s, end=s + 0.3) for s in starts),
                tool_calls=tuple(
                    ToolCall(start=s + 0.3, end=s + 0.4, function="noop") for s in starts
                ),
                notices=(
                    Notice(
                        start=50.0, end=50.0, notice=f"n-{i}", channels=("shared_memory",), ids=1
                    ),
                ),
            )
        )
    return RunTimeline(
        sample_id="big",
        epoch=1,
        duration=100.0,
        lanes=tuple(lanes),
        stop=Stop(reason="all_done", time=99.0, basis="the last member's end"),
        answer="worker-128",
        answer_mode="first",
    )


def test_256_members_compact_aggregated_and_bounded() -> None:
    from swarm.timeline import Timeline

    run = big_run()
    t = Timeline(run)
    svg, html = t.to_svg(), t.to_html()
    root = ET.fromstring(svg)
    assert root.get("data-compact") == "true"
    assert int(root.get("data-lane-height", "0")) == 12
    lanes = svg_lanes(root)
    assert len(lanes) == 256 and lanes[127].get("data-answer") == "true"
    for g in lanes:
        assert drawn(g, "model") == 30 and drawn(g, "tool") == 30 and drawn(g, "notice") == 1
        # the ten crowded calls are drawn as one mark that says it holds ten
        first = next(e for e in g.iter() if "model" in classes(e))
        assert first.get("data-count") == "10"
        assert "10 model calls from 1.000 s to 1.390 s" in "".join(first.itertext())
    marks = [e for g in lanes for e in g.iter() if "mark" in classes(e)]
    assert len(marks) == 256 * (21 + 21 + 1)
    assert len(svg.encode()) < 2_000_000
    assert 'class="stl-filter"' in html and 'type="search"' in html
    assert [g.get("data-status") for g in lanes].count("errored") == 25


def test_a_drawing_over_the_mark_budget_merges_by_bins() -> None:
    from swarm.timeline import Timeline
    from swarm.timeline._layout import MARK_BUDGET

    # 256 x (51 + 51 + 1) marks would be drawn apart: more than the budget
    root = ET.fromstring(Timeline(big_run(calls=60)).to_svg())
    lanes = svg_lanes(root)
    marks = [e for g in lanes for e in g.iter() if "mark" in classes(e)]
    assert 256 * 5 < len(marks) <= MARK_BUDGET
    for g in lanes:
        assert drawn(g, "model") == 60 and drawn(g, "tool") == 60
        # merged in bins, not into one mark per lane: the lane keeps its shape
        assert 10 <= len([e for e in g.iter() if "model" in classes(e)]) <= 30


def test_more_lanes_than_the_budget_has_room_for_start_at_the_last_bin() -> None:
    import attrs

    from swarm.timeline._layout import MARK_BUDGET, geometry, lane_marks, layout

    # 6,000 lanes of model calls, tool calls and a notice: 18,000 marks at the fewest
    run = big_run(members=6000, calls=12)
    g, placed = layout(run)
    assert g.bin is not None and g.bin >= g.plot
    # what doubling the bins from 4 pixels one drawing at a time comes to
    slow = geometry(run)
    while True:
        marks = [lane_marks(slow, lane) for lane in run.lanes]
        if sum(map(len, marks)) <= MARK_BUDGET or (slow.bin or 0) >= slow.plot:
            break
        slow = attrs.evolve(slow, bin=2 * slow.bin if slow.bin else 4.0)
    assert (g, placed) == (slow, marks)
    assert sum(map(len, placed)) == 6000 * 3


def test_an_interrupted_run_draws_running_and_pending_members() -> None:
    from swarm.timeline import Timeline

    run = RunTimeline(
        sample_id="cut",
        epoch=2,
        duration=10.0,
        lanes=(
            Lane(name="busy", role=None, state="running", status=None, started=1.0, ended=None),
            Lane(name="later", role=None, state="pending", status=None, started=None, ended=None),
        ),
    )
    root = ET.fromstring(Timeline(run).to_svg())
    busy, later = svg_lanes(root)
    assert [child_text(busy, "status"), child_text(later, "status")] == ["running", "pending"]
    (life,) = [e for e in busy.iter() if "life" in classes(e)]
    # from its start to the run's end (x = gutter + plot * t / duration), with no end tick
    assert (float(life.get("x", "0")), float(life.get("width", "0"))) == (230 + 100, 900)
    assert not [e for e in busy.iter() if "end" in classes(e)]
    assert not [e for e in later.iter() if {"life", "end"} & set(classes(e))]
    assert not [e for e in root.iter() if e.get("class") == "stop"]
    assert "no stop recorded · no answer" in (root.get("aria-label") or "")


def test_a_calls_time_before_the_model_is_not_drawn_as_model_time(
    scenario: tuple[Path, EvalSample],
) -> None:
    from swarm.timeline import Timeline

    # Inspect's working time is the model's own: the run's first call's one-time setup (or a
    # connection slot, a retry's backoff) comes before it and is drawn apart, lighter
    slow_start = ModelCall(start=1.0, end=3.0, working=0.5)
    quick = ModelCall(start=5.0, end=6.0, working=0.9995)  # 0.05 px before: not drawn
    unknown = ModelCall(start=7.0, end=8.0)  # no working time: all of it is the model's
    run = RunTimeline(
        sample_id="s",
        epoch=1,
        duration=10.0,
        lanes=(
            Lane(
                name="m",
                role=None,
                state="ended",
                status="submitted",
                started=0.0,
                ended=9.0,
                model_calls=(slow_start, quick, unknown),
            ),
        ),
    )
    (lane,) = svg_lanes(ET.fromstring(Timeline(run).to_svg()))

    def rects(kind: str) -> list[tuple[float, float]]:
        return [
            (float(e.get("x", "0")), float(e.get("width", "0")))
            for e in lane.iter()
            if "mark" in classes(e) and kind in classes(e)
        ]

    # x = 230 + 1000 * t / 10
    assert rects("setup") == [(330.0, 150.0)]
    assert rects("model") == [(480.0, 50.0), (730.0, pytest.approx(99.95, abs=0.1)), (930.0, 100.0)]
    (setup,) = [e for e in lane.iter() if "setup" in classes(e)]
    assert "".join(setup.itertext()) == (
        "before the model call's own time from 1.000 s to 2.500 s: waiting for a connection slot, "
        "a retry's backoff or the run's first call's setup"
    )
    # from a log: each call's working time is its event's
    _, sample = scenario
    span = next(e.id for e in sample.events if isinstance(e, SpanBeginEvent) and e.name == "writer")
    logged = [
        e.working_time for e in sample.events if isinstance(e, ModelEvent) and e.span_id == span
    ]
    drawn_calls = timeline(sample).run.lane("writer").model_calls
    assert len(logged) == 5 and all(w is not None for w in logged)
    assert [c.working for c in drawn_calls] == logged


def test_few_members_are_not_compact(scenario: tuple[Path, EvalSample]) -> None:
    _, sample = scenario
    root = ET.fromstring(timeline(sample).to_svg())
    assert root.get("data-compact") == "false" and root.get("data-lane-height") == "30"


# -- the package's place in the layers -------------------------------------------------------


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_timeline_is_a_face_of_the_kernel() -> None:
    package = ROOT / "swarm" / "timeline"
    allowed = {
        "swarm",
        "swarm.records",
        "swarm.errors",
        "swarm.analysis",
        "swarm.diagnosis",  # a tool on the public API, as analysis is
        "swarm.timeline",
    }
    for path in package.glob("*.py"):
        ours = {m for m in _imports(path) if m == "swarm" or m.startswith("swarm.")}
        bad = {m for m in ours if m not in allowed and not m.startswith("swarm.timeline.")}
        assert not bad, f"{path.name} imports kernel internals {sorted(bad)}"
    for path in (ROOT / "swarm").rglob("*.py"):
        if package in path.parents or path.parent.name == "cli":
            continue
        assert not {m for m in _imports(path) if m.startswith("swarm.timeline")}, path


def test_the_docs_pictures_are_timelines_of_their_examples() -> None:
    # docs/images holds what the examples drew (the build's own output, committed): each is a
    # timeline of its example's members, with that run's critical path and findings
    def picture(name: str) -> ET.Element:
        return ET.fromstring((ROOT / "docs" / "images" / name).read_text(encoding="utf-8"))

    def findings(root: ET.Element) -> list[tuple[str | None, str | None]]:
        return [
            (e.get("data-member"), e.get("data-check"))
            for e in root.iter()
            if local(e.tag) == "g" and e.get("class") == "finding" and e.get("data-check")
        ]

    def lanes(root: ET.Element) -> list[str | None]:
        return [g.get("data-member") for g in svg_lanes(root)]

    fan_out = picture("diagnosis-fan-out.svg")
    assert lanes(fan_out) == ["lead", "north", "south", "east"]
    (path,) = [e for e in fan_out.iter() if e.get("class") == "critical-path"]
    assert path.get("data-steps") == "6" and findings(fan_out) == []
    board = picture("diagnosis-board.svg")
    assert lanes(board) == ["writer", "reader", "broken"]
    assert findings(board) == [("reader", "ignored_input"), ("broken", "never_acted")]
    demo = picture("timeline-demo.svg")
    assert lanes(demo) == ["writer", "waiter", "crasher"]
    assert findings(demo) == [("writer", "premature_termination"), ("crasher", "never_acted")]
    for root in (fan_out, board, demo):  # drawn since model time excludes what came before it
        assert [e for e in root.iter() if "setup" in classes(e)]


def test_lanes_whose_names_share_a_start_are_told_apart(tmp_path: Path) -> None:
    """The fan-out's eight children: before, every lane read ``worker-events…`` (issue 42)."""
    from swarm.plugins.scorers.fanout import load_fixture
    from tests.fanout_cases import honest, run_fanout

    fixture = load_fixture("json-events")
    sample = run_fanout(fixture, "bwrap", honest(fixture), log_dir=tmp_path)
    lanes = svg_lanes(ET.fromstring(timeline(sample).to_svg()))
    shown = {g.get("data-member"): child_text(g, "name") for g in lanes}
    assert len(shown) == 9 and len(set(shown.values())) == 9
    for s in fixture.shards:
        name = shown[s.worker].removeprefix("└ ")
        assert name.endswith(s.worker[-6:])  # "nts-01": the part that differs is kept
        assert name == s.worker or "…" in name
