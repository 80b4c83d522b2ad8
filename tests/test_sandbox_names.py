"""The names and paths of ``sandboxes.share`` and ``sandboxes.files`` (issue 39): a path with a
control character (NUL above all) is refused, and so is a name no member can have (a typo that
would give nobody the files), when ``swarm()`` is called and by ``swarm topology check``; the
names a member can have (the roster's, a deepagent's custom subagents, and in a swarm whose
members spawn any name a child may be given) are accepted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from swarm import ConfigError, member, plugin_catalog, swarm
from swarm._spec.topology import SwarmSpec, swarm_spec
from swarm.cli import cli

PER = {"per_member": True}
SUBAGENT = {"name": "checker", "description": "checks", "prompt": "You check."}


def refused(**given: Any) -> str:
    with pytest.raises(ConfigError) as info:
        swarm(**given)
    return str(info.value)


def accepted(**given: Any) -> SwarmSpec:
    swarm(**given)  # what swarm() checks: the spec it holds is swarm_spec's
    return swarm_spec(plugin_catalog(), **given)


def pair() -> list[Any]:
    return [member("swarm/worker", name="writer"), member("swarm/worker", name="reader")]


def spawning_lead() -> dict[str, Any]:
    return {
        "members": member("swarm/worker", name="lead", can_spawn=["worker"]),
        "templates": {"worker": member("swarm/worker")},
    }


# -- paths -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "shown", "char", "at"),
    [
        ("data/a\x00.txt", "'data/a\\x00.txt'", "'\\x00'", 6),
        ("\x00", "'\\x00'", "'\\x00'", 0),
        ("a.txt\n", "'a.txt\\n'", "'\\n'", 5),
        ("a\tb", "'a\\tb'", "'\\t'", 1),
        ("a\x7f", "'a\\x7f'", "'\\x7f'", 1),
        ("a\x85b", "'a\\x85b'", "'\\x85'", 1),  # a C1 control (NEL)
        ("a\x1b[0m", "'a\\x1b[0m'", "'\\x1b'", 1),
    ],
)
def test_a_path_with_a_control_character_is_refused_naming_its_field(
    path: str, shown: str, char: str, at: int
) -> None:
    files = {"writer": ["data/ok.txt", path]}
    assert refused(members=pair(), sandboxes={**PER, "files": files}) == (
        f"sandboxes.files.writer[1]: {shown} holds a control character ({char} at {at}); a "
        "file path cannot"
    )


@pytest.mark.parametrize("path", ["data/ä é.txt", "a b/c-d_e.txt", "x~1", "日本.txt"])
def test_a_path_of_printable_characters_is_kept(path: str) -> None:
    spec = accepted(members=pair(), sandboxes={**PER, "files": {"writer": [path]}})
    assert dict(spec.sandboxes.files) == {"writer": (path,)}


# -- names -------------------------------------------------------------------------------------


def test_a_files_name_no_member_has_is_refused_with_the_names_there_are() -> None:
    files = {"writer": ["a.txt"], "raeder": ["b.txt"]}
    assert refused(members=pair(), sandboxes={**PER, "files": files}) == (
        "sandboxes.files: 'raeder' names no member (did you mean 'reader'?); the members are "
        "writer, reader (no member spawns, so no other member joins)"
    )


def test_a_share_name_no_member_has_is_refused_naming_its_group() -> None:
    share = [["writer", "reader"], ["editor", "checker"]]
    members = [*pair(), member("swarm/worker", name="editor")]
    assert refused(members=members, sandboxes={**PER, "share": share}) == (
        "sandboxes.share[1]: 'checker' names no member; the members are writer, reader, editor "
        "(no member spawns, so no other member joins)"
    )


def test_a_name_far_from_every_member_gets_no_suggestion_and_a_long_roster_is_cut() -> None:
    members = member("swarm/worker", name="w", count=25)
    shown = ", ".join(f"w-{i}" for i in range(1, 21))
    assert refused(members=members, sandboxes={**PER, "files": {"zzz": ["a"]}}) == (
        f"sandboxes.files: 'zzz' names no member; the members are {shown}, ... (25 in all) "
        "(no member spawns, so no other member joins)"
    )


def test_a_counted_members_names_and_a_template_less_roster_are_known() -> None:
    members = [member("swarm/worker", name="w", count=2), member("swarm/worker")]
    sandboxes = {**PER, "share": [["w-1", "worker"]], "files": {"w-2": ["a"], "w-1": ["b"]}}
    spec = accepted(members=members, sandboxes=sandboxes)
    assert spec.sandboxes.share == (("w-1", "worker"),)
    assert dict(spec.sandboxes.files) == {"w-2": ("a",), "w-1": ("b",)}


def test_a_deepagents_custom_subagents_are_known_and_built_in_ones_are_not() -> None:
    lead = member("swarm/deepagent", name="lead", args={"subagents": ["general", SUBAGENT]})
    spec = accepted(members=lead, sandboxes={**PER, "files": {"checker": ["a"]}})
    assert dict(spec.sandboxes.files) == {"checker": ("a",)}
    # a built-in subagent's tools run in the member's own sandbox: files for it reach no one
    assert refused(members=lead, sandboxes={**PER, "files": {"general": ["a"]}}) == (
        "sandboxes.files: 'general' names no member; the members and subagents are lead, "
        "checker (no member spawns, so no other member joins)"
    )
    assert refused(members=lead, sandboxes={**PER, "files": {"chekcer": ["a"]}}) == (
        "sandboxes.files: 'chekcer' names no member (did you mean 'checker'?); the members and "
        "subagents are lead, checker (no member spawns, so no other member joins)"
    )


def test_one_subagent_given_alone_is_known_too() -> None:
    lead = member("swarm/deepagent", name="lead", args={"subagents": SUBAGENT})
    spec = accepted(members=lead, sandboxes={**PER, "share": [["lead", "checker"]]})
    assert spec.sandboxes.share == (("lead", "checker"),)


def test_in_a_swarm_that_spawns_a_childs_name_is_accepted() -> None:
    # a child's name is its parent's choice at the spawn (the fan-out task names worker-<stem>)
    sandboxes = {**PER, "share": [["lead", "worker-b"]], "files": {"worker-a": ["a"]}}
    spec = accepted(**spawning_lead(), sandboxes=sandboxes)
    assert dict(spec.sandboxes.files) == {"worker-a": ("a",)}
    assert spec.sandboxes.share == (("lead", "worker-b"),)


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        (
            "worker a",
            "'worker a' must start with a letter or digit and use only letters, digits, '.', "
            "'_' and '-' (at most 64 characters)",
        ),
        (
            "w" * 65,
            f"{'w' * 65!r} must start with a letter or digit and use only letters, digits, '.', "
            "'_' and '-' (at most 64 characters)",
        ),
        ("init", "'init' is reserved by Inspect (init, solvers and scorers name sample phases)"),
        (
            "parent",
            "'parent' is reserved by swarm-eval (send_message reads 'parent' and 'children' as "
            "relations, not member names)",
        ),
    ],
)
def test_in_a_swarm_that_spawns_a_name_no_child_can_have_is_refused(
    name: str, problem: str
) -> None:
    tail = "; it names no member or subagent, and no child can be called so"
    assert refused(**spawning_lead(), sandboxes={**PER, "files": {name: ["a"]}}) == (
        f"sandboxes.files: {problem}{tail}"
    )
    share = [["lead", name]]
    assert refused(**spawning_lead(), sandboxes={**PER, "share": share}) == (
        f"sandboxes.share[0]: {problem}{tail}"
    )


def test_a_template_that_no_member_may_spawn_makes_no_name_known() -> None:
    # templates without can_spawn: nobody spawns, so a child's name is no member's either
    templates = {"worker": member("swarm/worker")}
    assert refused(
        members=pair(), templates=templates, sandboxes={**PER, "files": {"worker-a": ["a"]}}
    ) == (
        "sandboxes.files: 'worker-a' names no member; the members are writer, reader (no member "
        "spawns, so no other member joins)"
    )


# -- a topology file, and swarm topology check -------------------------------------------------

TOPOLOGY = """\
members:
  - {agent: swarm/worker, name: writer}
  - {agent: swarm/worker, name: reader}
sandboxes:
  per_member: true
  files:
"""


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            '    raeder: ["b.txt"]\n',
            "sandboxes.files: 'raeder' names no member (did you mean 'reader'?); the members "
            "are writer, reader (no member spawns, so no other member joins)",
        ),
        (
            '    reader: ["b\\0.txt"]\n',
            "sandboxes.files.reader[0]: 'b\\x00.txt' holds a control character ('\\x00' at 1); "
            "a file path cannot",
        ),
    ],
)
def test_swarm_and_topology_check_refuse_them_in_a_file(
    tmp_path: Path, files: str, message: str
) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text(TOPOLOGY + files)
    with pytest.raises(ConfigError) as info:
        swarm(config=str(path))
    assert str(info.value) == f"{path}: {message}"
    result = CliRunner().invoke(cli, ["topology", "check", str(path)])
    assert result.exit_code == 1
    assert isinstance(result.exception, ConfigError)
    assert str(result.exception) == f"{path}: {message}"


def test_topology_check_accepts_the_names_members_have(tmp_path: Path) -> None:
    path = tmp_path / "topology.yaml"
    path.write_text(TOPOLOGY + '    reader: ["b.txt"]\n    writer: ["data/a b.txt"]\n')
    result = CliRunner().invoke(cli, ["topology", "check", str(path)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"# {path}: valid; 2 member(s): writer, reader\n")
