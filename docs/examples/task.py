"""A one-sample arithmetic task with no solver of its own, for the swarm to solve.

From the command line (the quickstart):

    inspect eval docs/examples/task.py --solver swarm/swarm \
        -S 'members={factory: react, count: 4}' --model swarm/scripted -M answer=42

Run as a script, it does the same from Python and prints the result.
"""

from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes

from swarm import RESULT_KEY, swarm
from swarm.testing import scripted_model


@task
def arithmetic() -> Task:
    return Task(dataset=[Sample(input="What is 6 * 7?", target="42")], scorer=includes())


if __name__ == "__main__":
    log = eval(
        arithmetic(),
        solver=swarm(members={"factory": "react", "count": 4}),
        model=scripted_model(answer="42"),
        display="none",
    )[0]
    sample = log.samples[0]
    result = sample.store[RESULT_KEY]
    print("members:", ", ".join(m["name"] for m in result["members"]))
    print("stop reason:", result["stop_reason"])
    print("answer:", result["final"]["member"], f"({result['final']['mode']})")
    print("score:", sample.scores["includes"].value)
