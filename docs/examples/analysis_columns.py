"""SwarmColumns: each sample's realized cost and ledger data as columns of Inspect's samples_df().

Two evals write their logs: one on the scripted model priced with `set_model_info`, with a
token cap; one after the price is removed, so its calls are unpriced.  `samples_df()` reads
both logs with `SampleSummary + SwarmColumns`.  It needs pandas and pyarrow
(`pip install "swarm-eval[analysis]"`); `require_dataframes()` says so clearly when they are
missing, so the script checks before it imports pandas, and exits with that message.
"""

import sys

from inspect_ai.analysis import SampleSummary, samples_df
from inspect_ai.model import ModelCost, ModelInfo, set_model_info

from swarm import Budget, controller, member, swarm
from swarm.analysis import SwarmColumns, require_dataframes
from swarm.demo import calculator_worker
from swarm.testing import call, run_eval, scripted_model, submit

try:
    require_dataframes()
except ImportError as missing:
    sys.exit(str(missing))

import pandas as pd  # only once the check above has passed

pd.set_option("display.width", 200)

SCRIPTS = {"*": [call("multiply", x=6, y=7), submit("42")]}
solver = swarm(
    members=member(calculator_worker, count=2),
    controller=controller("leaderless", stop_on_submission=False),
    budget=Budget(tokens=50_000),
)

set_model_info(
    "swarm/scripted",
    ModelInfo(cost=ModelCost(input=1.0, output=2.0, input_cache_write=0.0, input_cache_read=0.0)),
)
priced = run_eval(solver, model=scripted_model(SCRIPTS), samples=2)
set_model_info("swarm/scripted", ModelInfo())
unpriced = run_eval(solver, model=scripted_model(SCRIPTS))

df = samples_df([priced.location, unpriced.location], columns=SampleSummary + SwarmColumns)
df["run"] = df["eval_id"].map({priced.eval.eval_id: "priced", unpriced.eval.eval_id: "unpriced"})
df = df.sort_values(["run", "id"])
print("columns:", ", ".join(c for c in df.columns if c.startswith("swarm_")))
print(
    df[["run", "id", "swarm_cost", "swarm_complete", "swarm_members", "swarm_token_cap"]].to_string(
        index=False
    )
)
print(df[["run", "id", "swarm_unpriced", "swarm_unpriced_models"]].to_string(index=False))
print(df.groupby("run")["swarm_cost"].mean().round(6).to_dict())
