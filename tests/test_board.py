"""The shared-memory board: commands, texts, bounds, two-phase writes, and per-loop news."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from swarm import ConfigError
from swarm.plugins.channels._board import (
    CONTROLS,
    Applied,
    Board,
    BoardError,
    FileChange,
    path_error,
)
from swarm.plugins.channels._board_text import FILE_HEADER, LISTING_HEADER

R = "/shared_memory"
_records = itertools.count(1)


def write(
    board: Board, command: str, *, loop: str = "L1", member: str = "w-1", **args: Any
) -> Applied:
    plan = board.plan(command, args, member=member, loop=loop)
    return board.apply(plan, record_id=f"w-{next(_records)}")


def refused(
    board: Board, command: str, *, loop: str = "L1", member: str = "w-1", **args: Any
) -> BoardError:
    with pytest.raises(BoardError) as info:
        board.plan(command, args, member=member, loop=loop)
    assert info.value.control in CONTROLS
    return info.value


def see(board: Board, path: str, *, loop: str = "L1", member: str = "w-1") -> str:
    return board.view(path, member=member, loop=loop).text


def body(view_text: str) -> str:
    """The fenced part of a file view."""
    return view_text.split("\n\n", 1)[1]


# -- bounds and paths --------------------------------------------------------------------------


def test_default_bounds() -> None:
    b = Board().bounds
    assert (b.max_files, b.max_file_bytes, b.max_file_lines, b.max_board_bytes) == (
        100,
        16_000,
        1_000,
        400_000,
    )


@pytest.mark.parametrize(
    ("bounds", "field"),
    [
        ({"max_files": 0}, "max_files"),
        ({"max_files": 10_001}, "max_files"),
        ({"max_file_bytes": 262_145}, "max_file_bytes"),
        ({"max_file_lines": 0}, "max_file_lines"),
        ({"max_file_lines": True}, "max_file_lines"),
        ({"max_file_bytes": 500, "max_board_bytes": 499}, "max_board_bytes"),
        ({"max_board_bytes": 16_777_217}, "max_board_bytes"),
    ],
)
def test_bounds_out_of_range_name_the_field(bounds: dict[str, int], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        Board(**bounds)


def test_bounds_at_the_edges() -> None:
    Board(max_files=10_000, max_file_bytes=1, max_file_lines=100_000, max_board_bytes=1)
    Board(max_file_bytes=262_144, max_board_bytes=16_777_216)


@pytest.mark.parametrize(
    "path",
    [R, f"{R}/a", f"{R}/A.b-c_d", f"{R}/" + "/".join("abcdefgh"), f"{R}/" + "x" * 64, f"{R}/..a"],
)
def test_valid_paths(path: str) -> None:
    assert path_error(path) is None


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/memories/a", "paths must start with /shared_memory/."),
        (f"{R}x/a", "paths must start with /shared_memory/."),
        ("f-3", "file ids like f-3 are accepted only by view"),
        (f"{R}/", "empty component"),
        (f"{R}/a//b", "empty component"),
        (f"{R}/a/../b", "'.' and '..' are not allowed (paths are never normalised)"),
        (f"{R}/./b", "'.' and '..' are not allowed"),
        (f"{R}/" + "x" * 65, "a component is 65 characters; the limit is 64"),
        (f"{R}/a b", "component 'a b' may use only letters, digits, '.', '_' and '-'."),
        (f"{R}/é", "component 'é' may use only"),
        (
            f"{R}/" + "/".join("abcdefghi"),
            "it has 9 components under /shared_memory; the limit is 8",
        ),
        (f"{R}/" + "/".join(["x" * 60] * 3), "it is 197 bytes; the limit is 160"),
    ],
)
def test_invalid_paths_say_what_is_wrong_and_name_the_path(path: str, says: str) -> None:
    error = refused(Board(), "create", path=path, file_text="x")
    assert error.control == "path"
    assert error.message.startswith(f"Invalid path {path!r}: ")
    assert says in error.message


def test_path_is_required_and_must_be_text() -> None:
    board = Board()
    assert refused(board, "create", file_text="x").message == "Path is required for create command"
    assert refused(board, "delete", path="").message == "Path is required for delete command"
    assert (
        refused(board, "create", path=3, file_text="x").message == "path must be a string, not int"
    )
    assert refused(board, "rename", new_path=f"{R}/b").message == (
        "old_path is required for rename command"
    )
    assert refused(board, "view", path=f"{R}/a").message == "Unknown command: view"


# -- create / view -----------------------------------------------------------------------------


def test_create_then_view_shows_the_fenced_numbered_file() -> None:
    board = Board()
    applied = write(board, "create", path=f"{R}/x.md", file_text="alpha\r\nbeta\rgamma\n")
    assert applied.ack == f"Created {R}/x.md (f-1, version 1)."
    assert applied.changes == (FileChange(file="f-1", path=f"{R}/x.md", base=0, version=1),)
    assert applied.payload_bytes == len("alpha\nbeta\ngamma\n")
    info = board.get("f-1")
    assert info is not None and info.content == "alpha\nbeta\ngamma\n"
    record = info.record
    viewed = board.view(f"{R}/x.md", member="w-2", loop="L2")
    assert viewed.text == (
        f"{FILE_HEADER}\n\n"
        f'<peer_file id="f-1" path="{R}/x.md" version="1" writer="w-1" record="{record}">\n'
        "     1\talpha\n     2\tbeta\n     3\tgamma\n</peer_file>"
    )
    assert not viewed.listing
    assert [r.as_dict() for r in viewed.files] == [
        {"file": "f-1", "path": f"{R}/x.md", "version": 1, "record": record}
    ]
    assert board.view("f-1", member="w-2", loop="L2").text == viewed.text


def test_view_range_follows_memory_rules() -> None:
    board = Board()
    write(board, "create", path=f"{R}/x", file_text="\n".join(f"l{i}" for i in range(1, 6)))
    viewed = board.view(f"{R}/x", member="w-1", loop="L1", view_range=[2, 3])
    assert 'lines="2-3">\n     2\tl2\n     3\tl3\n</peer_file>' in viewed.text
    assert viewed.files[0].lines == (2, 3)
    assert viewed.files[0].as_dict()["lines"] == [2, 3]
    assert 'lines="4-5"' in board.view(f"{R}/x", member="w-1", loop="L1", view_range=[4, -1]).text
    assert 'lines="4-5"' in board.view(f"{R}/x", member="w-1", loop="L1", view_range=[4, 99]).text
    cases = {
        (0, 2): "Invalid `view_range`: [0, 2]. Its first element `0` should be within the range "
        "of lines of the file: [1, 5]",
        (3, 2): "Invalid `view_range`: [3, 2]. Its second element `2` should be larger or equal "
        "than its first `3`",
        (1,): "Invalid `view_range`. It should be a list of two integers.",
    }
    for view_range, message in cases.items():
        with pytest.raises(BoardError) as info:
            board.view(f"{R}/x", member="w-1", loop="L1", view_range=list(view_range))
        assert (info.value.control, info.value.message) == ("invalid", message)


def test_listing_and_empty_board() -> None:
    board = Board()
    assert see(board, R) == "/shared_memory has no files."
    write(board, "create", path=f"{R}/notes.md", file_text="a")
    write(board, "create", path=f"{R}/d/e/f.md", file_text="b", loop="L2", member="w-2")
    write(board, "create", path=f"{R}/d/g", file_text="c")
    listing = board.view(R, member="w-3", loop="L3")
    assert listing.listing
    assert listing.text == (
        f"{LISTING_HEADER}\n\n"
        f'<peer_listing path="{R}">\n'
        f"f-2  version 1  w-2  {R}/d/e/f.md\n"
        f"f-3  version 1  w-1  {R}/d/g\n"
        f"f-1  version 1  w-1  {R}/notes.md\n"
        "</peer_listing>"
    )
    assert [r.file for r in listing.files] == ["f-2", "f-3", "f-1"]
    assert body(see(board, f"{R}/d/e")).splitlines()[1:-1] == [f"f-2  version 1  w-2  {R}/d/e/f.md"]
    # a listing marks nothing seen
    assert board.news("L3") == ("f-1", "f-2", "f-3")


def test_view_errors() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="x")
    for path, control, message in [
        (f"{R}/b", "not_found", f"The path {R}/b does not exist. Please provide a valid path."),
        (f"{R}/a/b", "not_found", f"The path {R}/a/b does not exist. Please provide a valid path."),
        ("f-9", "not_found", "There is no file f-9."),
        ("", "invalid", "Path is required for view command"),
        ("/tmp", "path", "Invalid path '/tmp': paths must start with /shared_memory/."),
    ]:
        with pytest.raises(BoardError) as info:
            board.view(path, member="w-1", loop="L1")
        assert (info.value.control, info.value.message) == (control, message)


def test_replacing_needs_a_view_of_the_current_version() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="one", loop="L1", member="w-1")
    error = refused(board, "create", path=f"{R}/a", file_text="two", loop="L2", member="w-2")
    assert (error.control, error.message) == (
        "unviewed",
        "f-1 is at version 1, last written by w-1, which you have not viewed; "
        "view it before replacing it.",
    )
    see(board, f"{R}/a", loop="L2", member="w-2")
    applied = write(board, "create", path=f"{R}/a", file_text="two", loop="L2", member="w-2")
    assert applied.ack == f"Replaced {R}/a (f-1, now version 2)."
    # the writer's own write counts as seen: it may replace again
    applied = write(board, "create", path=f"{R}/a", file_text="three", loop="L2", member="w-2")
    assert applied.changes[0].base == 2 and applied.changes[0].version == 3


def test_create_conflicts_with_directories_and_files() -> None:
    board = Board()
    write(board, "create", path=f"{R}/d/f", file_text="x")
    assert refused(board, "create", path=f"{R}/d", file_text="y").message == (
        f"The path {R}/d is a directory; a file cannot be created there."
    )
    error = refused(board, "create", path=f"{R}/d/f/g", file_text="y")
    assert (error.control, error.message) == (
        "exists",
        f"{R}/d/f is a file, so {R}/d/f/g cannot be created under it.",
    )
    assert refused(board, "append", path=R, append_text="y").control == "exists"


# -- str_replace / insert / append ---------------------------------------------------------------


def test_str_replace_needs_no_view_and_uses_memory_errors() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="red\ngreen\nred\nblue\n")
    other = {"loop": "L2", "member": "w-2"}
    applied = write(board, "str_replace", path=f"{R}/a", old_str="green", new_str="teal", **other)
    assert applied.ack == f"Edited {R}/a (f-1, now version 2)."
    assert applied.payload_bytes == 4
    assert board.get("f-1").content == "red\nteal\nred\nblue\n"  # type: ignore[union-attr]
    cases = [
        (
            {"old_str": ""},
            "str_replace: The `old_str` parameter cannot be empty. Consider using "
            "the `insert` command instead.",
        ),
        (
            {"old_str": "pink"},
            f"No replacement was performed, old_str `pink` did not appear verbatim in {R}/a.",
        ),
        (
            {"old_str": "red"},
            "No replacement was performed. Multiple occurrences of old_str "
            "`red` in lines [1, 3]. Please ensure it is unique",
        ),
        ({"old_str": 4}, "old_str must be a string, not int"),
    ]
    for args, message in cases:
        error = refused(board, "str_replace", path=f"{R}/a", **args, **other)
        assert (error.control, error.message) == ("invalid", message)
    # new_str omitted deletes; overlapping occurrences count as several
    write(board, "str_replace", path=f"{R}/a", old_str="blue\n", **other)
    assert board.get("f-1").content == "red\nteal\nred\n"  # type: ignore[union-attr]
    write(board, "create", path=f"{R}/b", file_text="aaa")
    assert (
        "Multiple occurrences" in refused(board, "str_replace", path=f"{R}/b", old_str="aa").message
    )
    write(board, "create", path=f"{R}/d/x", file_text="x")
    assert refused(board, "str_replace", path=f"{R}/d", old_str="x").message == (
        f"The path {R}/d is a directory and only the `view` command can be used on directories"
    )
    error = refused(board, "str_replace", path=f"{R}/nope", old_str="x")
    assert (error.control, error.message) == (
        "not_found",
        f"The path {R}/nope does not exist. Please provide a valid path.",
    )


def test_str_replace_normalises_line_endings() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="one\ntwo\n")
    write(board, "str_replace", path=f"{R}/a", old_str="one\r\ntwo", new_str="1\r2")
    assert board.get(f"{R}/a").content == "1\n2\n"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("content", "line", "insert", "result"),
    [
        ("a\nb\n", 0, "x", "x\na\nb\n"),
        ("a\nb\n", 1, "x\ny\n", "a\nx\ny\nb\n"),
        ("a\nb\n", 2, "x", "a\nb\nx"),
        ("a\nb", 2, "x\n", "a\nb\nx\n"),
        ("a\nb", 1, "", "a\n\nb"),
        ("", 0, "x", "x"),
    ],
)
def test_insert_after_line(content: str, line: int, insert: str, result: str) -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text=content)
    applied = write(board, "insert", path=f"{R}/a", insert_line=line, insert_text=insert)
    assert applied.ack == f"Inserted text after line {line} of {R}/a (f-1, now version 2)."
    assert board.get("f-1").content == result  # type: ignore[union-attr]


def test_insert_errors() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="a\nb\n")
    cases = [
        (
            {"insert_line": 3, "insert_text": "x"},
            "Invalid `insert_line` parameter: 3. It should be "
            "within the range of lines of the file: [0, 2]",
        ),
        (
            {"insert_line": -1, "insert_text": "x"},
            "Invalid `insert_line` parameter: -1. It should "
            "be within the range of lines of the file: [0, 2]",
        ),
        ({"insert_text": "x"}, "insert_line is required for insert command"),
        ({"insert_line": 1}, "insert_text is required for insert command"),
        ({"insert_line": True, "insert_text": "x"}, "insert_line must be an integer, not True"),
    ]
    for args, message in cases:
        error = refused(board, "insert", path=f"{R}/a", **args)
        assert (error.control, error.message) == ("invalid", message)
    error = refused(board, "insert", path=f"{R}/a", insert_line=0, insert_text="x", loop="L2")
    assert error.message.endswith("view it before inserting into it.")


def test_append_creates_adds_a_newline_and_needs_no_view() -> None:
    board = Board()
    applied = write(board, "append", path=f"{R}/log", append_text="first")
    assert applied.ack == f"Created {R}/log (f-1, version 1)."
    applied = write(board, "append", path=f"{R}/log", append_text="second\n", loop="L2")
    assert applied.ack == f"Appended to {R}/log (f-1, now version 2)."
    write(board, "append", path=f"{R}/log", append_text="third", loop="L2")
    assert board.get("f-1").content == "first\nsecond\nthird"  # type: ignore[union-attr]
    error = refused(board, "append", path=f"{R}/log", append_text="")
    assert error.message == "append: The `append_text` parameter cannot be empty."
    assert refused(board, "append", path=f"{R}/log").message == (
        "append_text is required for append command"
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from("ab\né\n"), min_size=1, max_size=6),
        min_size=1,
        max_size=12,
    )
)
def test_appends_are_measured_as_the_whole_file_would_be(payloads: list[str]) -> None:
    """An append sizes the file from what it adds; the bounds it meets are the whole file's."""
    board = Board(max_file_bytes=40, max_file_lines=8, max_board_bytes=1_000)
    content = ""
    for i, payload in enumerate(payloads):
        after = content + ("\n" if content and not content.endswith("\n") else "") + payload
        lines = after.split("\n")
        n_lines = len(lines) - (lines[-1] == "")
        args = {"path": f"{R}/log", "append_text": payload, "loop": f"L{i % 3}"}
        if len(after.encode()) > 40 or n_lines > 8:
            error = refused(board, "append", **args)
            assert error.control == (
                "max_file_bytes" if len(after.encode()) > 40 else "max_file_lines"
            )
            continue
        write(board, "append", **args)
        content = after
        assert board.get("f-1").content == content  # type: ignore[union-attr]


def test_appends_meet_the_line_bound_at_exactly_its_value() -> None:
    board = Board(max_file_lines=1_000)
    for i in range(1_000):
        write(board, "append", path=f"{R}/log", append_text=f"line {i}", loop=f"L{i % 7}")
    error = refused(board, "append", path=f"{R}/log", append_text="one more")
    assert (error.control, error.message) == (
        "max_file_lines",
        f"{R}/log would have 1001 lines; the limit is 1000 lines per file.",
    )


def test_blind_append_does_not_mark_unseen_content_seen() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="x", loop="L1")
    write(board, "append", path=f"{R}/a", append_text="y", loop="L2", member="w-2")
    assert board.news("L2") == ("f-1",)
    assert board.status_line("L2") == (
        "Shared memory: 1 file changed since you last viewed it (f-1 new)."
    )
    assert (
        refused(
            board, "insert", path=f"{R}/a", insert_line=0, insert_text="z", loop="L2", member="w-2"
        ).control
        == "unviewed"
    )
    # an append over a version the loop had seen does count as seen
    see(board, f"{R}/a", loop="L2", member="w-2")
    write(board, "append", path=f"{R}/a", append_text="z", loop="L2", member="w-2")
    assert board.news("L2") == ()


# -- delete / rename ---------------------------------------------------------------------------


def test_delete_leaves_a_tombstone_and_frees_the_path() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="x")
    applied = write(board, "delete", path=f"{R}/a")
    assert applied.ack == f"Deleted {R}/a (f-1)."
    assert applied.changes[0].as_dict() == {
        "file": "f-1",
        "path": f"{R}/a",
        "base": 1,
        "version": 2,
        "deleted": True,
    }
    tomb = board.get("f-1")
    assert tomb is not None and tomb.deleted and tomb.version == 2
    assert board.get(f"{R}/a") is None and board.file_count == 0 and board.total_bytes == 0
    viewed = board.view("f-1", member="w-2", loop="L2")
    assert viewed.text == "f-1 was deleted by w-1."
    assert viewed.files[0].deleted
    assert write(board, "create", path=f"{R}/a", file_text="y").ack == (
        f"Created {R}/a (f-2, version 1)."
    )


def test_delete_a_directory_needs_a_view_of_each_file() -> None:
    board = Board()
    for name in ("d/a", "d/b", "d/e/c", "x"):
        write(board, "create", path=f"{R}/{name}", file_text=name, loop="L2", member="w-2")
    see(board, f"{R}/d/a")
    see(board, f"{R}/d/e/c")
    error = refused(board, "delete", path=f"{R}/d")
    assert error.message == (
        "f-2 is at version 1, last written by w-2, which you have not viewed; "
        "view it before deleting it."
    )
    see(board, f"{R}/d/b")
    applied = write(board, "delete", path=f"{R}/d")
    assert applied.ack == f"Deleted 3 files under {R}/d (f-1, f-2, f-3)."
    assert [f.path for f in board.files()] == [f"{R}/x"]
    assert refused(board, "delete", path=R).message == "The root /shared_memory cannot be deleted."
    assert refused(board, "delete", path=f"{R}/d").control == "not_found"


def test_rename_a_file_and_a_directory() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="x")
    applied = write(board, "rename", old_path=f"{R}/a", new_path=f"{R}/b/c")
    assert applied.ack == f"Renamed {R}/a to {R}/b/c (f-1, now version 2)."
    assert applied.changes[0].as_dict() == {
        "file": "f-1",
        "old_path": f"{R}/a",
        "new_path": f"{R}/b/c",
        "base": 1,
        "version": 2,
    }
    write(board, "create", path=f"{R}/b/d", file_text="y")
    applied = write(board, "rename", old_path=f"{R}/b", new_path=f"{R}/e")
    assert applied.ack == f"Renamed {R}/b to {R}/e (2 files)."
    assert [(f.id, f.path, f.version) for f in board.files()] == [
        ("f-1", f"{R}/e/c", 3),
        ("f-2", f"{R}/e/d", 2),
    ]
    assert board.get(f"{R}/b/c") is None


def test_rename_errors() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="x")
    write(board, "create", path=f"{R}/d/f", file_text="y")
    deep = f"{R}/" + "/".join("bcdefghi")
    cases = [
        (f"{R}/a", f"{R}/d/f", "exists", f"The destination {R}/d/f already exists"),
        (f"{R}/a", f"{R}/d", "exists", f"The destination {R}/d already exists"),
        (f"{R}/a", R, "exists", f"The destination {R} already exists"),
        (
            f"{R}/a",
            f"{R}/d/f/g",
            "exists",
            f"{R}/d/f is a file, so {R}/d/f/g cannot be created under it.",
        ),
        (
            f"{R}/d",
            f"{R}/d/sub",
            "path",
            f"Cannot rename {R}/d to {R}/d/sub: it would be inside itself.",
        ),
        (
            f"{R}/nope",
            f"{R}/b",
            "not_found",
            f"The path {R}/nope does not exist. Please provide a valid path.",
        ),
        (R, f"{R}/b", "path", "The root /shared_memory cannot be renamed."),
        (
            f"{R}/d",
            deep,
            "path",
            f"Cannot rename {R}/d to {deep}: Invalid path '{deep}/f': it has 9 "
            "components under /shared_memory; the limit is 8.",
        ),
    ]
    for old, new, control, message in cases:
        error = refused(board, "rename", old_path=old, new_path=new)
        assert (error.control, error.message) == (control, message)
    error = refused(board, "rename", old_path=f"{R}/a", new_path=f"{R}/z", loop="L2")
    assert error.message.endswith("view it before renaming it.")


# -- content rules and bounds --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "found"),
    [
        ("<peer_file", "<peer_file"),
        ("a </peer_message> b", "</peer_message"),
        ('<PEER_LISTING path="x">', "<PEER_LISTING"),
        ("x\n</Peer_File", "</Peer_File"),
    ],
)
def test_fence_markers_are_refused(written: str, found: str) -> None:
    board = Board()
    error = refused(board, "create", path=f"{R}/a", file_text=written)
    assert (error.control, error.message) == (
        "fence",
        f"the text would put {found!r} in {R}/a; shared memory cannot hold fence markers "
        "(<peer_message, <peer_file, <peer_listing, opening or closing, in any case).",
    )
    assert board.file_count == 0
    write(board, "create", path=f"{R}/a", file_text="<peer>, peer_file, <peer-file")


def test_a_fence_marker_formed_by_an_edit_is_refused() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="<peerXfile")
    assert refused(board, "str_replace", path=f"{R}/a", old_str="X", new_str="_").control == "fence"


def test_bounds_are_refused_with_their_control() -> None:
    board = Board(max_files=2, max_file_bytes=10, max_file_lines=2, max_board_bytes=15)
    write(board, "create", path=f"{R}/a", file_text="12345678")
    error = refused(board, "create", path=f"{R}/b", file_text="12345678901")
    assert (error.control, error.message) == (
        "max_file_bytes",
        f"{R}/b would be 11 bytes; the limit is 10 bytes per file.",
    )
    error = refused(board, "create", path=f"{R}/b", file_text="1\n2\n3")
    assert (error.control, error.message) == (
        "max_file_lines",
        f"{R}/b would have 3 lines; the limit is 2 lines per file.",
    )
    error = refused(board, "create", path=f"{R}/b", file_text="12345678")
    assert (error.control, error.message) == (
        "max_board_bytes",
        "shared memory would hold 16 bytes; the limit is 15 bytes in all.",
    )
    write(board, "create", path=f"{R}/b", file_text="1")
    error = refused(board, "append", path=f"{R}/c", append_text="1")
    assert (error.control, error.message) == (
        "max_files",
        "shared memory has 2 files; the limit is 2. Delete a file you no longer need or add to "
        "an existing one.",
    )
    # multi-byte characters count as UTF-8 bytes; a trailing newline does not add a line
    assert refused(board, "create", path=f"{R}/a", file_text="ééééé!").control == "max_file_bytes"
    write(board, "create", path=f"{R}/a", file_text="1\n2\n")
    assert refused(board, "append", path=f"{R}/a", append_text="3").control == "max_file_lines"


# -- two-phase writes ----------------------------------------------------------------------------


def test_plan_changes_nothing_and_apply_commits_it() -> None:
    board = Board()
    plan = board.plan("create", {"path": f"{R}/a", "file_text": "x"}, member="w-1", loop="L1")
    assert plan.changes == (FileChange(file=None, path=f"{R}/a", base=0, version=1),)
    assert plan.payload == "x" and board.file_count == 0
    board.apply(plan, record_id="w-1")
    assert board.get("f-1").record == "w-1"  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="already applied"):
        board.apply(plan, record_id="w-2")


def test_apply_after_unrelated_writes_succeeds() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="x")
    plan = board.plan(
        "insert", {"path": f"{R}/a", "insert_line": 1, "insert_text": "y"}, member="w-1", loop="L1"
    )
    write(board, "create", path=f"{R}/b", file_text="z", loop="L2", member="w-2")
    board.apply(plan, record_id="w-9")
    assert board.get("f-1").content == "x\ny"  # type: ignore[union-attr]


def test_stale_when_the_result_would_differ() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="a\nb\n")
    args = {"path": f"{R}/a", "insert_line": 1, "insert_text": "y"}
    first = board.plan("insert", args, member="w-1", loop="L1")
    second = board.plan("insert", args, member="w-1", loop="L1")
    board.apply(first, record_id="w-2")
    with pytest.raises(BoardError) as info:
        board.apply(second, record_id="w-3")
    assert (info.value.control, info.value.message) == (
        "stale",
        "the files this write was computed against changed before it was committed; "
        "view them and retry.",
    )
    assert board.get("f-1").version == 2  # type: ignore[union-attr]


def test_blind_writes_tolerate_versions_moving_on() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="a\nb\n")
    replace = board.plan(
        "str_replace", {"path": f"{R}/a", "old_str": "a", "new_str": "A"}, member="w-2", loop="L2"
    )
    append = board.plan("append", {"path": f"{R}/a", "append_text": "c"}, member="w-2", loop="L2")
    write(board, "append", path=f"{R}/a", append_text="z", loop="L3", member="w-3")
    assert board.apply(replace, record_id="w-5").changes[0].base == 2
    assert board.apply(append, record_id="w-6").changes[0].version == 4
    assert board.get("f-1").content == "A\nb\nz\nc"  # type: ignore[union-attr]
    # ...but not the file disappearing or the match going away
    gone = board.plan(
        "str_replace", {"path": f"{R}/a", "old_str": "z", "new_str": "Z"}, member="w-2", loop="L2"
    )
    write(board, "str_replace", path=f"{R}/a", old_str="z", new_str="y", loop="L3", member="w-3")
    with pytest.raises(BoardError, match="view them and retry") as info:
        board.apply(gone, record_id="w-7")
    assert info.value.control == "stale"
    created = board.plan(
        "append", {"path": f"{R}/new", "append_text": "1"}, member="w-2", loop="L2"
    )
    write(board, "append", path=f"{R}/new", append_text="2", loop="L3", member="w-3")
    with pytest.raises(BoardError, match="view them and retry"):
        board.apply(created, record_id="w-8")


def test_a_bound_reached_before_apply_is_reported_as_itself() -> None:
    board = Board(max_file_bytes=10, max_board_bytes=12)
    plan = board.plan("create", {"path": f"{R}/a", "file_text": "12345"}, member="w-1", loop="L1")
    write(board, "create", path=f"{R}/b", file_text="12345678", loop="L2", member="w-2")
    with pytest.raises(BoardError) as info:
        board.apply(plan, record_id="w-3")
    assert info.value.control == "max_board_bytes"


# -- news, notices, status lines, waits ----------------------------------------------------------


def test_views_count_per_loop_not_per_member() -> None:
    board = Board()
    board.add_loop("own", "w-1")
    board.add_loop("sub", "w-1")
    write(board, "create", path=f"{R}/a", file_text="x", loop="L2", member="w-2")
    see(board, "f-1", loop="sub")
    assert board.news("sub") == () and board.news("own") == ("f-1",)
    assert refused(board, "delete", path=f"{R}/a", loop="own").control == "unviewed"
    # a subagent's write is news to its own member's loop
    write(board, "append", path=f"{R}/a", append_text="y", loop="sub")
    assert board.news("L2") == ("f-1",)
    assert board.news("own") == ("f-1",) and board.news("sub") == ()


def test_a_loop_belongs_to_one_member() -> None:
    board = Board()
    board.add_loop("L1", "w-1")
    with pytest.raises(ValueError, match="acts for 'w-1'"):
        board.view(R, member="w-2", loop="L1")


def test_notice_text_and_coverage() -> None:
    board = Board()
    board.add_loop("L1", "w-1")
    write(board, "create", path=f"{R}/a", file_text="x", loop="L2", member="w-2")
    notice = board.notice("L1")
    assert notice is not None
    assert notice.text == (
        "1 shared memory file changed since you last viewed it (f-1 new; by w-2). View one with "
        'shared_memory(command="view", path="f-1"), or list them with path="/shared_memory".'
    )
    assert notice.ids == [{"file": "f-1", "version": 1, "record": board.get("f-1").record}]  # type: ignore[union-attr]
    assert board.notice("L1") is None  # covered until it changes again
    assert board.status_line("L1") is not None  # the status line still says it
    # a turn whose result ended with the board's news gets no notice at its boundary: at most
    # one summary of the board per turn, and what changes next waits for the next boundary
    write(board, "append", path=f"{R}/a", append_text="w", loop="L2", member="w-2")
    assert board.notice("L1") is None
    write(board, "append", path=f"{R}/a", append_text="y", loop="L3", member="w-3")
    see(board, f"{R}/a")
    write(board, "append", path=f"{R}/a", append_text="z", loop="L3", member="w-3")
    write(board, "create", path=f"{R}/b", file_text="b", loop="L2", member="w-2")
    notice = board.notice("L1")
    assert notice is not None and notice.text.startswith(
        "2 shared memory files changed since you last viewed them (f-1, f-2 new; by w-2, w-3). "
        'View one with shared_memory(command="view", path="f-1")'
    )
    assert [i["version"] for i in notice.ids] == [4, 1]


def test_notice_names_at_most_ten_ids() -> None:
    board = Board()
    board.add_loop("L1", "w-1")
    for i in range(13):
        write(board, "create", path=f"{R}/f{i}", file_text="x", loop="L2", member="w-2")
    notice = board.notice("L1")
    assert notice is not None
    assert (
        "(f-1 new, f-2 new, f-3 new, f-4 new, f-5 new, f-6 new, f-7 new, f-8 new, f-9 new, "
        "f-10 new, and 3 more; by w-2)" in notice.text
    )
    assert len(notice.ids) == 13
    status = board.status_line("L1")
    assert status is not None and status.startswith("Shared memory: 13 files changed since you ")
    assert status.endswith("f-10 new, and 3 more).")


def test_notice_names_at_most_ten_writers() -> None:
    # thirteen members each wrote a file: the notice names ten of them, however many wrote
    board = Board()
    board.add_loop("L1", "w-1")
    for i in range(13):
        member = f"w-{i + 10}"
        write(board, "create", path=f"{R}/f{i}", file_text="x", loop=f"L{i + 10}", member=member)
    notice = board.notice("L1")
    assert notice is not None
    assert (
        "and 3 more; by w-10, w-11, w-12, w-13, w-14, w-15, w-16, w-17, w-18, w-19, and 3 more)"
        in notice.text
    )
    news = board.wait_news("L1", None)
    assert news is not None and "w-19, and 3 more)" in news.text


def test_own_writes_are_not_news() -> None:
    board = Board()
    board.add_loop("L2", "w-2")
    write(board, "create", path=f"{R}/a", file_text="x")
    assert board.news("L1") == () and board.status_line("L1") is None
    assert board.notice("L1") is None


def test_tombstones_are_news_only_to_loops_that_knew_the_file() -> None:
    board = Board()
    for loop, member in [("seer", "w-2"), ("told", "w-3"), ("blind", "w-4")]:
        board.add_loop(loop, member)
    write(board, "create", path=f"{R}/a", file_text="x")
    see(board, "f-1", loop="seer", member="w-2")
    assert board.notice("told") is not None
    write(board, "delete", path=f"{R}/a")
    assert board.news("seer") == ("f-1",) and board.news("told") == ("f-1",)
    assert board.news("blind") == ()
    notice = board.notice("seer")
    assert notice is not None and notice.text.startswith(
        "1 shared memory file changed since you last viewed it (f-1 deleted; by w-1). "
        'View one with shared_memory(command="view", path="f-1")'
    )
    assert board.status_line("told") == (
        "Shared memory: 1 file changed since you last viewed it (f-1 deleted)."
    )
    assert board.view("f-1", member="w-3", loop="told").text == "f-1 was deleted by w-1."
    assert board.news("told") == ()


def test_wait_news_filters_by_path_directory_or_id() -> None:
    board = Board()
    board.add_loop("L1", "w-1")
    write(board, "create", path=f"{R}/d/a", file_text="x", loop="L2", member="w-2")
    write(board, "create", path=f"{R}/e", file_text="y", loop="L3", member="w-3")
    news = board.wait_news("L1", f"{R}/d")
    assert news is not None
    assert news.text == (
        "1 shared memory file changed where you waited (f-1 new; by w-2). "
        'View one with shared_memory(command="view", path="f-1").'
    )
    assert [i["file"] for i in news.ids] == ["f-1"]
    assert board.wait_news("L1", f"{R}/d/b") is None
    assert board.wait_news("L1", "f-2") is not None
    everything = board.wait_news("L1", None)
    assert everything is not None and everything.text.startswith(
        "2 shared memory files changed where you waited (f-1 new, f-2 new; by w-2, w-3)."
    )
    # it keeps reporting until the file is viewed
    assert board.wait_news("L1", f"{R}/d") is not None
    see(board, "f-1")
    assert board.wait_news("L1", f"{R}/d") is None
    with pytest.raises(BoardError) as info:
        board.wait_news("L1", "/tmp")
    assert info.value.control == "path"
    with pytest.raises(BoardError, match="There is no file f-7"):
        board.wait_news("L1", "f-7")


def test_loops_joining_later_see_existing_files_as_news() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="x")
    write(board, "delete", path=f"{R}/a")
    write(board, "create", path=f"{R}/b", file_text="y")
    assert board.news("late") == ("f-2",)


# -- properties ----------------------------------------------------------------------------------

LOOPS = {"own-1": "m-1", "sub-1": "m-1", "own-2": "m-2", "own-3": "m-3"}
PATHS = [f"{R}/a", f"{R}/b", f"{R}/d/x", f"{R}/d/y", f"{R}/a/z", f"{R}/d", f"{R}/e/d"]
pieces = st.sampled_from(["a", "b", "ab", "é", "\n", "\r\n", "\r"] * 4 + ["<peer_file"])
texts = st.lists(pieces, max_size=6).map("".join)
loops = st.sampled_from(sorted(LOOPS))
paths = st.sampled_from(PATHS)


def _model_insert(content: str, line: int, insert: str) -> str:
    parts = content.splitlines(keepends=True)
    head, tail = "".join(parts[:line]), "".join(parts[line:])
    if head and not head.endswith("\n"):
        head += "\n"
    if tail and not insert.endswith("\n"):
        insert += "\n"
    return head + insert + tail


class BoardMachine(RuleBasedStateMachine):
    """Random writes, views and news calls from several loops against a small board."""

    def __init__(self) -> None:
        super().__init__()
        self.board = Board(max_files=3, max_file_bytes=20, max_file_lines=4, max_board_bytes=32)
        self.live: dict[str, str] = {}  # path -> id
        self.content: dict[str, str | None] = {}  # id -> content (None: deleted)
        self.version: dict[str, int] = {}
        self.history: dict[str, list[tuple[int, str]]] = {}  # id -> [(version, loop)]
        self.seen: dict[str, dict[str, int]] = {loop: {} for loop in LOOPS}
        self.told: dict[str, set[str]] = {loop: set() for loop in LOOPS}
        self.covered: dict[str, dict[str, int]] = {loop: {} for loop in LOOPS}
        # a result (a status line) told the loop the board's news since its last notice call
        self.informed: dict[str, bool] = dict.fromkeys(LOOPS, False)
        self.plans: list[Any] = []
        self.records = itertools.count(1)

    @initialize()
    def register_loops_and_seed(self) -> None:
        for loop, member in LOOPS.items():
            self.board.add_loop(loop, member)
        self.attempt("create", {"path": f"{R}/a", "file_text": "one\ntwo\n"}, "own-2")
        self.attempt("create", {"path": f"{R}/d/x", "file_text": "ab"}, "own-3")

    # the model ---------------------------------------------------------------------------

    def other(self, loop: str, file: str) -> int:
        return max((v for v, w in self.history[file] if w != loop), default=0)

    def expected_news(self, loop: str) -> set[str]:
        out = set()
        for file, content in self.content.items():
            seen = self.seen[loop].get(file, 0)
            known = content is not None or seen > 0 or file in self.told[loop]
            if self.other(loop, file) > seen and known:
                out.add(file)
        return out

    def expected(self, command: str, args: dict[str, Any]) -> str | None:
        """The content a single-file write must leave (None for delete/rename)."""
        path = args.get("path")
        old = self.content[self.live[path]] if path in self.live else None
        norm = {
            k: v.replace("\r\n", "\n").replace("\r", "\n")
            for k, v in args.items()
            if isinstance(v, str)
        }
        if command == "create":
            return norm["file_text"]
        if command == "append":
            if not old:
                return norm["append_text"]
            return old + ("" if old.endswith("\n") else "\n") + norm["append_text"]
        if command == "str_replace":
            assert old is not None
            return old.replace(norm["old_str"], norm.get("new_str", ""), 1)
        if command == "insert":
            assert old is not None
            return _model_insert(old, args["insert_line"], norm["insert_text"])
        return None

    def snapshot(self) -> object:
        news = {loop: self.board.news(loop) for loop in LOOPS}
        return self.board.files(), self.board.total_bytes, news

    # the rules ---------------------------------------------------------------------------

    def attempt(
        self, command: str, args: dict[str, Any], loop: str, *, later: bool = False
    ) -> None:
        before = self.snapshot()
        try:
            plan = self.board.plan(command, args, member=LOOPS[loop], loop=loop)
        except BoardError as error:
            event(f"{command} refused: {error.control}")
            assert error.control in CONTROLS, error.control
            assert self.snapshot() == before
            if error.control == "unviewed":
                file = error.message.split(" ", 1)[0]
                assert self.seen[loop].get(file, 0) < self.version[file]
            return
        assert self.snapshot() == before
        if later:
            self.plans.append((plan, args, loop))
        else:
            self.commit(plan, args, loop)

    def commit(self, plan: Any, args: dict[str, Any], loop: str) -> None:
        command = plan.command
        before = self.snapshot()
        try:
            applied = self.board.apply(plan, record_id=f"w-{next(self.records)}")
        except BoardError as error:
            event(f"{command} refused at apply: {error.control}")
            assert error.control == "stale" or error.control.startswith("max_"), error
            assert self.snapshot() == before
            return
        event(f"{command} applied")
        content = self.expected(command, args)  # against the model as it was before the write
        for change in applied.changes:
            file = change.file
            assert file is not None
            if change.base == 0:
                assert file not in self.content, "ids are never reused"
                self.history[file] = []
            else:
                assert change.base == self.version[file] and self.content[file] is not None
                if command in ("create", "insert", "delete", "rename"):
                    assert self.seen[loop].get(file, 0) >= change.base, "a view was needed"
            assert change.version == change.base + 1
            if change.old_path is not None or change.deleted:
                del self.live[change.old_path or change.path]
            if change.deleted:
                self.content[file] = None
            else:
                self.live[change.path] = file
                if content is not None:
                    self.content[file] = content
            if change.base == 0 or self.seen[loop].get(file, 0) == change.base:
                self.seen[loop][file] = change.version
            self.version[file] = change.version
            self.history[file].append((change.version, loop))

    def pick(self, data: st.DataObject, *, view: bool = False, loop: str = "") -> str:
        """A path: often one that holds a file now (which ``loop`` may view first)."""
        live = sorted(self.live)
        path = data.draw(st.sampled_from(live) if live and data.draw(st.booleans()) else paths)
        if view and data.draw(st.booleans()):
            self.look(loop, path)
        return path

    @rule(loop=loops, path=paths, file_text=texts)
    def create(self, loop: str, path: str, file_text: str) -> None:
        self.attempt("create", {"path": path, "file_text": file_text}, loop)

    @rule(data=st.data(), loop=loops, file_text=texts)
    def replace(self, data: st.DataObject, loop: str, file_text: str) -> None:
        self.attempt(
            "create", {"path": self.pick(data, view=True, loop=loop), "file_text": file_text}, loop
        )

    @rule(data=st.data(), loop=loops, append_text=texts, later=st.booleans())
    def append(self, data: st.DataObject, loop: str, append_text: str, later: bool) -> None:
        args = {"path": self.pick(data), "append_text": append_text}
        self.attempt("append", args, loop, later=later)

    @rule(data=st.data(), loop=loops, new=texts, later=st.booleans())
    def str_replace(self, data: st.DataObject, loop: str, new: str, later: bool) -> None:
        path = self.pick(data)
        content = self.content[self.live[path]] if path in self.live else None
        if content and data.draw(st.booleans()):
            start = data.draw(st.integers(0, len(content) - 1))
            old = content[start : data.draw(st.integers(start + 1, len(content)))]
        else:
            old = data.draw(texts)
        args = {"path": path, "old_str": old, "new_str": new}
        self.attempt("str_replace", args, loop, later=later)

    @rule(data=st.data(), loop=loops, line=st.integers(-1, 4), text=texts, later=st.booleans())
    def insert(self, data: st.DataObject, loop: str, line: int, text: str, later: bool) -> None:
        args = {
            "path": self.pick(data, view=True, loop=loop),
            "insert_line": line,
            "insert_text": text,
        }
        self.attempt("insert", args, loop, later=later)

    @rule(data=st.data(), loop=loops, later=st.booleans())
    def delete(self, data: st.DataObject, loop: str, later: bool) -> None:
        self.attempt("delete", {"path": self.pick(data, view=True, loop=loop)}, loop, later=later)

    @rule(data=st.data(), loop=loops, new=paths)
    def rename(self, data: st.DataObject, loop: str, new: str) -> None:
        self.attempt(
            "rename", {"old_path": self.pick(data, view=True, loop=loop), "new_path": new}, loop
        )

    @rule(data=st.data())
    def apply_later(self, data: st.DataObject) -> None:
        if self.plans:
            plan, args, loop = self.plans.pop(data.draw(st.integers(0, len(self.plans) - 1)))
            self.commit(plan, args, loop)

    @rule(data=st.data(), loop=loops)
    def view(self, data: st.DataObject, loop: str) -> None:
        ids = st.sampled_from(["f-1", "f-2", "f-3", "f-4", f"{R}/d", R])
        self.look(loop, data.draw(ids) if data.draw(st.booleans()) else self.pick(data))

    def look(self, loop: str, target: str) -> None:
        try:
            viewed = self.board.view(target, member=LOOPS[loop], loop=loop)
        except BoardError as error:
            assert error.control in ("not_found",), error
            return
        if viewed.listing:
            assert sorted(r.path for r in viewed.files) == sorted(
                p for p in self.live if p == target or p.startswith(target + "/") or target == R
            )
            return
        (read,) = viewed.files
        assert read.version == self.version[read.file]
        self.seen[loop][read.file] = read.version
        content = self.content[read.file]
        if content is None:
            assert read.deleted and viewed.text.startswith(f"{read.file} was deleted by ")
            return
        shown = viewed.text.split("\n\n", 1)[1].split("\n")[1:-1]
        assert [line.split("\t", 1)[1] for line in shown] == content.splitlines()
        assert [int(line.split("\t", 1)[0]) for line in shown] == list(
            range(1, len(content.splitlines()) + 1)
        )

    @rule(loop=loops)
    def notice(self, loop: str) -> None:
        expected = {
            f
            for f in self.expected_news(loop)
            if self.other(loop, f) > self.covered[loop].get(f, 0)
        }
        if self.informed[loop]:  # at most one summary of the board per turn
            expected = set()
        self.informed[loop] = False
        notice = self.board.notice(loop)
        named = set() if notice is None else {i["file"] for i in notice.ids}
        assert named == expected
        for file in named:
            self.covered[loop][file] = self.other(loop, file)
            self.told[loop].add(file)

    @rule(loop=loops)
    def status_line(self, loop: str) -> None:
        news = self.expected_news(loop)
        status = self.board.status_line(loop)
        assert (status is None) == (not news)
        self.tell(loop, news)
        self.informed[loop] = True

    @rule(loop=loops, where=st.one_of(st.none(), paths, st.just(R)))
    def wait_news(self, loop: str, where: str | None) -> None:
        news = self.expected_news(loop)
        waited = self.board.wait_news(loop, where)
        named = set() if waited is None else {i["file"] for i in waited.ids}
        assert named <= news
        if where is None or where == R:
            assert named == news
        self.tell(loop, named)

    def tell(self, loop: str, files: set[str]) -> None:
        """A result named ``files`` to ``loop``: told, and covered for its next notice."""
        self.told[loop] |= files
        for file in files:
            self.covered[loop][file] = self.other(loop, file)

    @invariant()
    def bounds_hold_and_content_matches(self) -> None:
        b, bounds = self.board, self.board.bounds
        live = b.files()
        assert len(live) == b.file_count <= bounds.max_files
        sizes = [len((f.content or "").encode()) for f in live]
        assert all(s <= bounds.max_file_bytes for s in sizes)
        assert sum(sizes) == b.total_bytes <= bounds.max_board_bytes
        assert all(len((f.content or "").splitlines()) <= bounds.max_file_lines for f in live)
        assert {f.path: f.id for f in live} == self.live
        for file, content in self.content.items():
            info = b.get(file)
            assert info is not None and info.content == content
            assert info.version == self.version[file]
        for f in live:
            assert not any(p in self.live for p in _prefixes(f.path)), "no file under a file"

    @invariant()
    def news_is_exactly_the_definition(self) -> None:
        for loop in LOOPS:
            assert set(self.board.news(loop)) == self.expected_news(loop)


def _prefixes(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(3, len(parts))]


BoardMachine.TestCase.settings = settings(
    max_examples=100,
    stateful_step_count=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestBoardMachine = BoardMachine.TestCase


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_path_grammar_matches_its_definition(tail: str) -> None:
    path = f"{R}/{tail}"
    parts = tail.split("/")
    ok = (
        len(path.encode("utf-8", "surrogatepass")) <= 160
        and len(parts) <= 8
        and all(
            0 < len(p) <= 64
            and p not in (".", "..")
            and all(c.isascii() and (c.isalnum() or c in "._-") for c in p)
            for p in parts
        )
    )
    assert (path_error(path) is None) == ok
