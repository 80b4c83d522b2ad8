"""The fan-out eval with a deepagent lead, keyless: Inspect's deepagent fans out through its own
background subagents, one per shard, and the rubric judges the run by the rules it applies to
the spawn tools.  The same as ``swarm fanout --fixture json-events --lead deepagent``."""

from swarm.plugins.scorers.fanout import run_fanout

outcome = run_fanout("json-events", model=None, timeout=600, log_dir="logs", lead="deepagent")
rules = ("coverage", "delegation", "dedup", "receipts", "provenance", "proof_of_work")
for rule in (*rules, "resolved"):
    print(f"{rule}: {outcome[rule]}")
children = outcome["efficiency"]["children"]
print(f"children: {children['members']}, their model calls: {children['model_calls']}")
print(f"lead: {outcome['lead']}, isolated: {outcome['isolation']['isolated']}")
