"""The shared-memory board's values pinned in full: acks, refusals, news lines, evidence, bounds.

Each test states the exact text or record a model or the run's evidence gets, computed by hand,
for inputs the other board tests leave open (ids past f-9, a file's own path as a wait filter,
bounds met exactly, the argument errors' words, a loop's own blind write over another's).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from swarm import ConfigError
from swarm.plugins.channels._board import (
    Applied,
    Board,
    BoardError,
    FileInfo,
    FileRead,
    path_error,
)

R = "/shared_memory"


def write(
    board: Board,
    command: str,
    *,
    loop: str = "L1",
    member: str = "w-1",
    record: str = "w-1",
    **args: Any,
) -> Applied:
    plan = board.plan(command, args, member=member, loop=loop)
    return board.apply(plan, record_id=record)


def refusal(board: Board, command: str, *, loop: str = "L1", **args: Any) -> tuple[str, str]:
    with pytest.raises(BoardError) as info:
        board.plan(command, args, member="w-1", loop=loop)
    return info.value.control, info.value.message


def news_line(board: Board, loop: str) -> str:
    notice = board.notice(loop)
    assert notice is not None
    return notice.text


# -- acks and ids ------------------------------------------------------------------------------


def test_ids_past_f_9_are_in_number_order_in_acks_and_news() -> None:
    board = Board()
    # f-1 at d/j ... f-10 at d/a: path order is the reverse of id order
    for i in range(10):
        write(board, "create", path=f"{R}/d/{'jihgfedcba'[i]}", file_text="x")
    assert board.news("L2") == tuple(f"f-{i}" for i in range(1, 11))
    deleted = write(board, "delete", path=f"{R}/d")
    assert deleted.ack == (
        "Deleted 10 files under /shared_memory/d "
        "(f-1, f-2, f-3, f-4, f-5, f-6, f-7, f-8, f-9, f-10)."
    )
    assert deleted.command == "delete"


def test_eleven_files_name_ten_ids_and_one_more() -> None:
    board = Board()
    for i in range(11):
        write(board, "create", path=f"{R}/f{i}", file_text="x")
    assert board.status_line("L2") == (
        "Shared memory: 11 files changed since you last viewed them (f-1 new, f-2 new, f-3 new, "
        "f-4 new, f-5 new, f-6 new, f-7 new, f-8 new, f-9 new, f-10 new, and 1 more)."
    )


def test_a_directory_of_one_file_is_renamed_and_deleted_as_one_file() -> None:
    board = Board()
    write(board, "create", path=f"{R}/d/a", file_text="x")
    renamed = write(board, "rename", old_path=f"{R}/d", new_path=f"{R}/e")
    assert renamed.ack == "Renamed /shared_memory/d to /shared_memory/e (1 file)."
    assert (renamed.command, renamed.payload_bytes) == ("rename", 0)
    plan = board.plan("delete", {"path": f"{R}/e"}, member="w-1", loop="L1")
    assert (plan.target, plan.subtree, plan.payload, plan.payload_bytes) == (f"{R}/e", True, "", 0)
    deleted = board.apply(plan, record_id="w-3")
    assert deleted.ack == "Deleted 1 file under /shared_memory/e (f-1)."
    assert deleted.payload_bytes == 0


def test_a_file_write_plans_its_own_path_and_no_subtree() -> None:
    board = Board()
    plan = board.plan("create", {"path": f"{R}/a", "file_text": "hé"}, member="w-1", loop="L1")
    assert plan.target == f"{R}/a" and plan.subtree is False
    assert (plan.payload, plan.payload_bytes) == ("hé", 3)
    applied = board.apply(plan, record_id="w-1")
    assert (applied.command, applied.ack) == (
        "create",
        "Created /shared_memory/a (f-1, version 1).",
    )
    with pytest.raises(ValueError, match=r"^this plan was already applied$"):
        board.apply(plan, record_id="w-2")


def test_file_info_names_the_last_writer_its_record_and_loop() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="x", record="w-7")
    assert board.get(f"{R}/a") == FileInfo(
        id="f-1", path=f"{R}/a", content="x", version=1, writer="w-1", record="w-7", loop="L1"
    )
    write(board, "append", path=f"{R}/a", append_text="y", loop="L2", member="w-2", record="w-8")
    assert board.get("f-1") == FileInfo(
        id="f-1", path=f"{R}/a", content="x\ny", version=2, writer="w-2", record="w-8", loop="L2"
    )


# -- argument errors ---------------------------------------------------------------------------


def test_missing_arguments_name_the_argument_and_command() -> None:
    board = Board()
    assert refusal(board, "create", path=f"{R}/a") == (
        "invalid",
        "file_text is required for create command",
    )
    write(board, "create", path=f"{R}/a", file_text="ab")
    assert refusal(board, "rename", old_path=f"{R}/a") == (
        "invalid",
        "new_path is required for rename command",
    )
    assert refusal(board, "str_replace", path=f"{R}/a", new_str="c") == (
        "invalid",
        "str_replace: The `old_str` parameter cannot be empty. Consider using the `insert` "
        "command instead.",
    )
    # a missing new_str replaces with nothing
    write(board, "str_replace", path=f"{R}/a", old_str="b")
    assert board.get("f-1").content == "a"  # type: ignore[union-attr]


def test_str_replace_in_an_empty_file_finds_nothing() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="")
    assert refusal(board, "str_replace", path=f"{R}/a", old_str="XX", new_str="y") == (
        "invalid",
        "No replacement was performed, old_str `XX` did not appear verbatim in /shared_memory/a.",
    )


def test_many_matches_name_every_line_up_to_a_hundred() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="\nx\nx\nx")
    assert refusal(board, "str_replace", path=f"{R}/a", old_str="x", new_str="y") == (
        "invalid",
        "No replacement was performed. Multiple occurrences of old_str `x` in lines [2, 3, 4]. "
        "Please ensure it is unique",
    )
    write(board, "create", path=f"{R}/b", file_text="x\n" * 150)
    _, message = refusal(board, "str_replace", path=f"{R}/b", old_str="x", new_str="y")
    assert message == (
        f"No replacement was performed. Multiple occurrences of old_str `x` in lines "
        f"{list(range(1, 101))}. Please ensure it is unique"
    )


def test_text_with_a_lone_surrogate_is_refused() -> None:
    board = Board()
    assert refusal(board, "create", path=f"{R}/a", file_text="a\ud800") == (
        "invalid",
        "the text is not valid UTF-8 (it has a lone surrogate).",
    )


def test_view_ranges_at_their_edges() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="a\nb\nc\n")

    def shown(view_range: Any) -> tuple[str, tuple[int, int] | None]:
        viewed = board.view(f"{R}/a", member="w-1", loop="L1", view_range=view_range)
        return viewed.text.split("\n\n", 1)[1], viewed.files[0].lines

    fence = '<peer_file id="f-1" path="/shared_memory/a" version="1" writer="w-1" record="w-1"'
    assert shown([1, 1]) == (f'{fence} lines="1-1">\n     1\ta\n</peer_file>', (1, 1))
    assert shown([2, 2]) == (f'{fence} lines="2-2">\n     2\tb\n</peer_file>', (2, 2))
    assert shown([3, 3]) == (f'{fence} lines="3-3">\n     3\tc\n</peer_file>', (3, 3))
    shape = "Invalid `view_range`. It should be a list of two integers."
    for bad, message in [
        (
            [0, 1],
            "Invalid `view_range`: [0, 1]. Its first element `0` should be within the "
            "range of lines of the file: [1, 3]",
        ),
        (
            [3, 2],
            "Invalid `view_range`: [3, 2]. Its second element `2` should be larger or "
            "equal than its first `3`",
        ),
        (5, shape),
        ([True, 2], shape),
        ([1, "2"], shape),
    ]:
        with pytest.raises(BoardError) as info:
            shown(bad)
        assert (info.value.control, info.value.message) == ("invalid", message)


def test_a_view_path_that_is_not_text_is_refused() -> None:
    board = Board()
    with pytest.raises(BoardError) as info:
        board.view(5, member="w-1", loop="L1")  # type: ignore[arg-type]
    assert (info.value.control, info.value.message) == ("invalid", "path must be a string, not int")


# -- paths -------------------------------------------------------------------------------------


def test_path_lengths_at_the_limits() -> None:
    at_limit = f"{R}/{'a' * 64}/{'b' * 64}/{'c' * 15}"
    assert len(at_limit) == 160 and path_error(at_limit) is None
    assert path_error(at_limit + "c") == f"Invalid path {at_limit + 'c'!r}: it is 161 bytes; " + (
        "the limit is 160."
    )
    shown_whole = f"{R}/{'a' * 64}/{'b' * 64}/{'c' * 55}"
    assert len(shown_whole) == 200
    assert path_error(shown_whole) == f"Invalid path '{shown_whole}': it is 200 bytes; " + (
        "the limit is 160."
    )
    assert path_error(
        shown_whole + "d"
    ) == f"Invalid path '{shown_whole}... (201 characters)': it is 201 bytes; " + (
        "the limit is 160."
    )


def test_a_file_id_as_a_write_path_says_ids_are_for_view() -> None:
    assert refusal(Board(), "create", path="f-3", file_text="x") == (
        "path",
        "Invalid path 'f-3': paths must start with /shared_memory/ (file ids like f-3 are "
        "accepted only by view).",
    )


# -- bounds ------------------------------------------------------------------------------------


def test_bounds_met_exactly_are_allowed_and_a_replaced_file_frees_its_bytes() -> None:
    board = Board(max_file_bytes=10, max_board_bytes=10)
    write(board, "create", path=f"{R}/a", file_text="a" * 10)
    assert board.total_bytes == 10
    write(
        board, "create", path=f"{R}/a", file_text="0123456789"
    )  # the 10 bytes it replaces are freed
    write(board, "str_replace", path=f"{R}/a", old_str="01", new_str="ab")
    assert (board.total_bytes, board.get("f-1").content) == (10, "ab23456789")  # type: ignore[union-attr]
    assert refusal(board, "append", path=f"{R}/a", append_text="d") == (
        "max_file_bytes",
        "/shared_memory/a would be 12 bytes; the limit is 10 bytes per file.",
    )


def test_max_board_bytes_must_be_an_integer_not_a_bool() -> None:
    for value in (True, "5"):
        message = (
            f"shared_memory max_board_bytes must be an integer in [1, 16777216], not {value!r}"
        )
        with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
            Board(max_file_bytes=1, max_board_bytes=value)  # type: ignore[arg-type]


# -- listings and evidence ---------------------------------------------------------------------


def test_listings_are_listings_even_when_empty_and_read_versions_and_records() -> None:
    board = Board()
    empty = board.view(R, member="w-1", loop="L1")
    assert (empty.text, empty.files, empty.listing) == ("/shared_memory has no files.", (), True)
    write(board, "create", path=f"{R}/a", file_text="x", record="w-5")
    write(board, "append", path=f"{R}/a", append_text="y", record="w-6")
    listing = board.view(R, member="w-1", loop="L1")
    assert listing.listing is True
    assert listing.files == (FileRead(file="f-1", path=f"{R}/a", version=2, record="w-6"),)


def test_a_tombstone_view_is_evidence_of_a_deleted_file() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="x", record="w-1")
    write(board, "delete", path=f"{R}/a", record="w-2")
    viewed = board.view("f-1", member="w-2", loop="L2")
    assert viewed.text == "f-1 was deleted by w-1."
    assert [f.as_dict() for f in viewed.files] == [
        {"file": "f-1", "path": f"{R}/a", "version": 2, "record": "w-2", "deleted": True}
    ]
    assert viewed.listing is False


# -- news --------------------------------------------------------------------------------------


def test_a_wait_on_a_files_own_path_reports_it() -> None:
    board = Board()
    board.add_loop("L1", "w-1")
    write(
        board, "create", path=f"{R}/notes.md", file_text="x", loop="L2", member="w-2", record="w-4"
    )
    news = board.wait_news("L1", f"{R}/notes.md")
    assert news is not None
    assert news.text == (
        "1 shared memory file changed where you waited (f-1 new; by w-2). "
        'View one with shared_memory(command="view", path="f-1").'
    )
    assert news.ids == [{"file": "f-1", "version": 1, "record": "w-4"}]


def test_a_wait_on_an_id_reports_only_that_file() -> None:
    board = Board()
    board.add_loop("L1", "w-1")
    write(board, "create", path=f"{R}/a", file_text="x", loop="L2", member="w-2")
    write(board, "create", path=f"{R}/b", file_text="y", loop="L2", member="w-2")
    board.view("f-1", member="w-1", loop="L1")
    assert board.wait_news("L1", "f-1") is None
    assert board.news("L1") == ("f-2",)


def test_wait_filter_errors_have_their_control_and_message() -> None:
    board = Board()
    with pytest.raises(BoardError) as info:
        board.wait_news("L1", "f-9")
    assert (info.value.control, info.value.message) == ("not_found", "There is no file f-9.")
    with pytest.raises(BoardError) as info:
        board.wait_news("L1", "/tmp")
    assert (info.value.control, info.value.message) == (
        "path",
        "Invalid path '/tmp': paths must start with /shared_memory/.",
    )


def test_a_loop_that_joins_later_is_notified_of_the_files_already_there() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="x")
    assert news_line(board, "L2") == (
        "1 shared memory file changed since you last viewed it (f-1 new; by w-1). View one with "
        'shared_memory(command="view", path="f-1"), or list them with path="/shared_memory".'
    )


def test_a_loop_first_seen_without_a_member_keeps_the_member_it_is_given() -> None:
    board = Board()
    assert board.news("L9") == ()
    board.add_loop("L9", "w-1")
    board.add_loop("L9", "w-1")
    with pytest.raises(ValueError, match=r"^loop 'L9' acts for 'w-1', not 'w-2'$"):
        board.add_loop("L9", "w-2")


def test_planning_for_another_member_of_a_loop_is_refused_at_plan() -> None:
    board = Board()
    board.add_loop("L1", "w-1")
    with pytest.raises(ValueError, match=r"^loop 'L1' acts for 'w-1', not 'w-2'$"):
        board.plan("create", {"path": f"{R}/a", "file_text": "x"}, member="w-2", loop="L1")


def test_a_blind_write_over_anothers_file_names_the_other_writer() -> None:
    board = Board()
    board.add_loop("L1", "w-1")
    write(board, "create", path=f"{R}/a", file_text="x", loop="L2", member="w-2")
    write(board, "append", path=f"{R}/a", append_text="y")  # L1 never viewed w-2's version
    assert news_line(board, "L1") == (
        "1 shared memory file changed since you last viewed it (f-1 new; by w-2). View one with "
        'shared_memory(command="view", path="f-1"), or list them with path="/shared_memory".'
    )
    news = board.wait_news("L1", None)
    assert news is not None and news.text == (
        "1 shared memory file changed where you waited (f-1 new; by w-2). "
        'View one with shared_memory(command="view", path="f-1").'
    )


def test_news_points_at_a_live_file_before_a_deleted_one() -> None:
    board = Board()
    board.add_loop("L1", "w-1")
    write(board, "create", path=f"{R}/a", file_text="x")
    write(board, "create", path=f"{R}/b", file_text="y")
    board.view("f-1", member="w-2", loop="L2")
    write(board, "delete", path=f"{R}/a", loop="L2", member="w-2")
    write(board, "append", path=f"{R}/b", append_text="z", loop="L2", member="w-2")
    assert news_line(board, "L1") == (
        "2 shared memory files changed since you last viewed them (f-1 deleted, f-2; by w-2). "
        'View one with shared_memory(command="view", path="f-2"), or list them with '
        'path="/shared_memory".'
    )


def test_a_loops_own_write_does_not_bring_back_news_it_was_told() -> None:
    board = Board()
    board.add_loop("L1", "w-1")
    write(board, "create", path=f"{R}/a", file_text="x", loop="L2", member="w-2")
    assert board.status_line("L1") == (
        "Shared memory: 1 file changed since you last viewed it (f-1 new)."
    )
    assert board.notice("L1") is None  # the turn's result already said it
    write(board, "append", path=f"{R}/a", append_text="y")  # still unviewed: still news
    assert board.news("L1") == ("f-1",)
    assert board.notice("L1") is None  # but not a notice again: nothing changed since it was told


def test_appending_to_an_empty_file_adds_no_blank_line() -> None:
    board = Board()
    write(board, "create", path=f"{R}/a", file_text="")
    applied = write(board, "append", path=f"{R}/a", append_text="y")
    assert applied.ack == "Appended to /shared_memory/a (f-1, now version 2)."
    assert board.get("f-1").content == "y"  # type: ignore[union-attr]


def test_a_viewed_file_is_not_in_the_next_notice() -> None:
    board = Board()
    board.add_loop("L1", "w-1")
    write(board, "create", path=f"{R}/a", file_text="x", loop="L2", member="w-2")
    write(board, "create", path=f"{R}/b", file_text="y", loop="L2", member="w-2")
    board.view(f"{R}/a", member="w-1", loop="L1")
    assert news_line(board, "L1").startswith(
        "1 shared memory file changed since you last viewed it (f-2 new; by w-2)."
    )
    # a file changed again and viewed before the next notice is not in it either
    write(board, "append", path=f"{R}/a", append_text="z", loop="L2", member="w-2")
    board.view("f-1", member="w-1", loop="L1")
    assert board.notice("L1") is None and board.news("L1") == ("f-2",)


def test_a_file_created_and_deleted_unseen_is_in_no_notice() -> None:
    board = Board()
    board.add_loop("L1", "w-1")
    write(board, "create", path=f"{R}/a", file_text="x", loop="L2", member="w-2")
    assert board.news("L1") == ("f-1",)  # news, not yet in a notice
    write(board, "delete", path=f"{R}/a", loop="L2", member="w-2")
    assert board.news("L1") == () and board.notice("L1") is None
