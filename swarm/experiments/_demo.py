"""The keyless experiment: sums whose answers the ``swarm/noisy`` model gets right by chance.

``swarm arms swarm/arms_demo --model swarm/noisy --budget 600 --k 1,2,4`` runs it; each
sample asks for a sum and its target is the sum, so any model can be tried on it too.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes

__all__ = ["arms_demo"]


@task
def arms_demo(samples: int = 12) -> Task:
    """``samples`` questions "What is a + b?", scored by whether the answer includes the sum."""
    dataset = []
    for i in range(1, samples + 1):
        a, b = 17 * i % 89 + 10, 31 * i % 97 + 10
        dataset.append(Sample(id=f"sum-{i}", input=f"What is {a} + {b}?", target=str(a + b)))
    return Task(dataset=dataset, scorer=includes())
