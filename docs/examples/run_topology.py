"""Run the swarm described by topology.yaml, check topology.toml says the same, show an error.

The same file works from the command line:

    inspect eval docs/examples/task.py --solver swarm/swarm \
        -S config=docs/examples/topology.yaml --model swarm/scripted
"""

from pathlib import Path

from swarm import RESULT_KEY, ConfigError, load_topology, swarm
from swarm.testing import pause, reply, run_eval, scripted_model, submit

HERE = Path(__file__).parent

yaml_topology = load_topology(HERE / "topology.yaml")
toml_topology = load_topology(HERE / "topology.toml")
print("topology.toml == topology.yaml:", toml_topology == yaml_topology)

SCRIPTS = {
    "react-*": [reply("working on it"), submit("42")],
    "reviewer": [reply("checking"), pause(0.5, submit("42"))],
}
log = run_eval(swarm(config=HERE / "topology.yaml"), model=scripted_model(SCRIPTS))
result = log.samples[0].store[RESULT_KEY]
for m in result["members"]:
    print(f"{m['name']:<9} role={m['role']!s:<29} {m['status']}")
print("stop reason:", result["stop_reason"])
print("answer:", result["final"]["member"], f"({result['final']['mode']})")

# A bad value is an error naming the field.
try:
    swarm(config={"members": [{"factory": "react", "count": 0}]})
except ConfigError as ex:
    print("error:", ex)
