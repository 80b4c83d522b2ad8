"""Run the fan-out eval on a shipped fixture with no model key (the scripted demonstration) and
print each rule and the efficiency figures.  The same as ``swarm fanout --fixture json-events``."""

from swarm.plugins.scorers.fanout import run_fanout

outcome = run_fanout("json-events", model=None, timeout=600, log_dir="logs")
rules = ("coverage", "delegation", "dedup", "receipts", "provenance", "proof_of_work")
for rule in (*rules, "resolved"):
    print(f"{rule}: {outcome[rule]}")
children = outcome["efficiency"]["children"]
print(f"children: {children['members']}, their model calls: {children['model_calls']}")
