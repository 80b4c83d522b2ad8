"""What the generator makes for one fixture, and the orchestration prompt it writes for it.

Only ``_generate`` and the per-fixture data modules use this; a fixture on disk is read back
with ``load_fixture``, never through these classes.
"""

from __future__ import annotations

from pathlib import PurePath

import attrs

__all__ = ["ARTIFACT", "GeneratedFixture", "GeneratedShard", "render_task"]

ARTIFACT = "combined-index.md"
"""The file the lead writes in its working directory: one bullet per shard."""


@attrs.frozen(kw_only=True)
class GeneratedShard:
    """One data shard: its bare file name, its question, its content and its answer."""

    file: str
    question: str
    text: str
    expected: int

    @property
    def stem(self) -> str:
        """The file name without its extension (``events-01``)."""
        return PurePath(self.file).stem

    @property
    def worker(self) -> str:
        """The child name the lead must spawn for this shard."""
        return f"worker-{self.stem}"


@attrs.frozen(kw_only=True)
class GeneratedFixture:
    """A whole fixture: its name, what its shards hold (for the prompt) and the shards."""

    name: str
    data_description: str
    shards: tuple[GeneratedShard, ...]


def _shard_lines(fixture: GeneratedFixture) -> str:
    return "\n".join(f"- shards/{shard.file}: {shard.question}" for shard in fixture.shards)


def _example_task(shard: GeneratedShard, data_description: str) -> str:
    return (
        f"Read the file shards/{shard.file} in the working directory ({data_description}) "
        f"and answer this question: {shard.question} "
        "Compute the answer with the bash or python tool; do not guess. "
        'Then reply with send_message(to="parent", text=...) where text is the answer '
        "as a bare integer (digits only, no words, no units), and end."
    )


def render_task(fixture: GeneratedFixture) -> str:
    """The orchestration prompt (``task.txt``) for ``fixture``, with a worked example on its
    own first shard."""
    first = fixture.shards[0]
    count = len(fixture.shards)
    example = _example_task(first, fixture.data_description).replace('"', '\\"')
    return f"""\
You are the lead of a data-analysis fan-out over {count} read-only data shards. Each shard \
has one question. Answer every shard's question by delegating it to a dedicated child \
member. Never compute or look up an answer yourself, and do not open the shards yourself: \
only the children read them.

Each child works in a sandbox of its own that holds only its shard, under shards/ \
({fixture.data_description}); your own sandbox holds no shard. The shards and their questions:

{_shard_lines(fixture)}

Your tools:
- spawn_child(name, task) starts a child member that runs the task text you give it.
- list_children() lists your children and whether each is running or has ended.
- cancel_child(name) stops one of your running children.
- wait_for_children() returns when every child has ended and its reply or receipt has been \
delivered to you.
- send_message(to, text) sends text to a member by name, to "parent" or to "children"; \
read_messages() returns the messages delivered to you.
Children read their shard and run code with the bash and python tools, each in its own \
sandbox: you and every child have a working directory of your own.

Procedure:
1. Spawn exactly one child per shard, named worker-<file stem>: the child for \
shards/{first.file} is named {first.worker}. The task you give a child must name its shard's \
path and question, and must tell it to reply with the number only, by calling \
send_message(to="parent", text=...). For example, for the first shard:

   spawn_child(name="{first.worker}", task="{example}")

2. Never have two live children for the same shard. Spawn each worker name once, apart from \
the one retry in step 4.
3. Call wait_for_children(), then read_messages() to collect the replies.
4. One retry per shard is allowed. A child that ends without replying leaves a receipt saying \
so: spawn it again with the same name and the same task, then call wait_for_children() again. \
Do not retry a shard a second time.
5. When every child has replied or ended, write {ARTIFACT} in your working directory with \
exactly one bullet per shard and nothing else, one per line, in this form:

   - {first.file}: <answer>

   Use the bare file name ({first.file}), not shards/{first.file}, and copy each answer \
verbatim from its child's reply. Do not write the file before every child has replied or \
ended.
6. Then submit.

Do not read, run or change anything outside your working directory, and do not change the \
shards.
"""
