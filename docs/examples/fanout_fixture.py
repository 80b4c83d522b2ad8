"""Load a shipped fan-out fixture, make a fixture of your own from a copy, and see a copy whose
prompt was not updated refused.

A fixture is a folder: fixture.json (the scoring manifest), task.txt (the lead's prompt) and
shards/ (the data).  `load_fixture` takes a shipped name or the folder's path.
"""

import json
import shutil
import tempfile
from pathlib import Path

from swarm import ConfigError
from swarm.plugins.scorers.fanout import fixture_names, load_fixture

print("shipped:", ", ".join(fixture_names()))
fixture = load_fixture("csv-metrics")
print(f"{fixture.name}: {len(fixture.shards)} shards, artifact {fixture.artifact}")
first = fixture.shards[0]
print(f"  {first.file} ({first.worker}): {first.question} -> {first.expected}")

with tempfile.TemporaryDirectory() as tmp:
    mine = Path(tmp) / "my-metrics"
    shutil.copytree(fixture.directory, mine)

    # New data for the first shard (a busier minute), and its new answer in the manifest.
    with (mine / "shards" / "metrics-01.csv").open("a") as shard:
        shard.write("1714550000,7,99,64,151,1020\n")
    manifest = json.loads((mine / "fixture.json").read_text())
    manifest["name"] = "my-metrics"
    manifest["shards"][0]["expected"] = 99
    (mine / "fixture.json").write_text(json.dumps(manifest, indent=2) + "\n")
    copy = load_fixture(mine)
    print(f"{copy.name}: {copy.shards[0].file} now expects {copy.shards[0].expected}")

    # A new question in the manifest but not in task.txt: the agents would be asked the old one.
    manifest["shards"][0]["question"] = "What is the minimum value of the cpu column?"
    (mine / "fixture.json").write_text(json.dumps(manifest, indent=2) + "\n")
    try:
        load_fixture(mine)
    except ConfigError as error:
        print("refused:", str(error).replace(str(mine.resolve()), "my-metrics"))
