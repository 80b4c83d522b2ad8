"""What `inspect view` shows of a swarm: the spans of a sample's transcript, the swarm's info
events and its records in the sample's store, read from a log file.

    python docs/examples/log_view.py LOG

The same log opened with `inspect view` shows these in a sample's Transcript tab (the spans
and events) and its Info tab (the Store card).
"""

import sys
from collections import Counter

from inspect_ai.event import InfoEvent, ModelEvent, SpanBeginEvent, ToolEvent
from inspect_ai.log import read_eval_log

from swarm import RESULT_KEY
from swarm.records import INFO_SOURCE

log = read_eval_log(sys.argv[1])
sample = log.samples[0]
print(f"sample {sample.id}")

# the span tree, with each member's model and tool calls (its tool spans' and subagents' too)
spans = {e.id: e for e in sample.events if isinstance(e, SpanBeginEvent)}
children: dict[str | None, list[SpanBeginEvent]] = {}
for span in spans.values():
    children.setdefault(span.parent_id, []).append(span)


def owner(span_id: str | None) -> str | None:
    """The outermost agent span inside the swarm's own that holds ``span_id``: a member."""
    found = None
    while span_id is not None and span_id in spans:
        span = spans[span_id]
        parent = spans.get(span.parent_id or "")
        if span.type == "agent" and parent is not None and parent.type == "agent":
            found = span.id
        span_id = span.parent_id
    return found


calls: Counter[tuple[str | None, str]] = Counter()
for event in sample.events:
    if isinstance(event, ModelEvent | ToolEvent):
        calls[owner(event.span_id), event.event] += 1


def show(span: SpanBeginEvent, depth: int) -> None:
    if span.type == "tool":
        return  # counted on the member's line
    line = f"{'  ' * depth}{span.name} ({span.type})"
    if owner(span.id) == span.id:
        line += f": {calls[span.id, 'model']} model calls, {calls[span.id, 'tool']} tool calls"
    print(line)
    for child in children.get(span.id, []):
        show(child, depth + 1)


print("transcript:")
for root in children.get(None, []):
    show(root, 1)

info = [e.data for e in sample.events if isinstance(e, InfoEvent) and e.source == INFO_SOURCE]
print(f"Info: {INFO_SOURCE} events:", ", ".join(str(d["type"]) for d in info))
print("store:", ", ".join(sorted(sample.store)))
final = sample.store[RESULT_KEY]["final"]
print(f"answer: {final['member']} ({final['mode']})")
print("its message's metadata:", sample.messages[-1].metadata)
