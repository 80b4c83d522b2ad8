"""What a bad topology says: the message of each ``ConfigError``, starting with the field's path.

``python docs/examples/config_errors.py GROUP`` prints the message for each bad input of a group:

- ``topology``: members, controller, channels and budget, checked when ``swarm()`` is called;
- ``budget``: the budget's fields, also checked when ``swarm()`` is called;
- ``channels``: the ``shared_memory`` channel's parameters;
- ``files``: topology files that cannot be read, each as ``swarm(config=FILE)`` reads it (and so
  do ``-S config=FILE`` and ``swarm topology check FILE``);
- ``split`` and ``prices``: what can only be checked when a sample starts (it needs the
  sample's limits or the models' prices), so the sample fails with the error (shown as the log
  shows it).
"""

import sys
import tempfile
from contextlib import chdir
from pathlib import Path
from typing import Any

from inspect_ai.agent import react

from swarm import ConfigError, member, swarm
from swarm.testing import run_eval, scripted_model

REACT = {"factory": "react"}
NAN, INF = float("nan"), float("inf")

CHECKED_BY_SWARM: dict[str, list[dict[str, Any]]] = {
    "topology": [
        {"members": {"factory": "react", "count": 0}},
        {"members": {"factory": "react", "colour": "red"}},
        {"members": {"factory": "react", "limits": {"turns": 3}}},
        {"members": {"factory": "react", "limits": 5}},
        {"members": {"factory": "react", "limits": {"time": NAN}}},
        {"members": {"factory": "react", "limits": {"turn": 1.5}}},
        {"members": {"factory": "react", "role": 5}},
        {"members": {"factory": "react", "delivery": "push"}},
        {"members": REACT, "controller": []},
        {"members": REACT, "controller": {"name": "leaderless", "final": "lastt"}},
        {"members": REACT, "controller": "nosuch"},
        {"members": REACT, "channels": ["nosuch"]},
        {"members": REACT, "channels": [{"name": "shared_memory", "rate": [1, INF]}]},
        {"members": REACT, "budget": {"grace": INF}},
        {"members": REACT, "budget": {"tokenz": 5}},
        {"config": {"members": REACT, "colour": "red"}},
    ],
    "budget": [
        {"members": REACT, "budget": {"cost": 0}},
        {"members": REACT, "budget": {"tokens": 1.5}},
        {"members": REACT, "budget": {"reserve": 1}},
        {"members": REACT, "budget": {"split": "half"}},
        {"members": {"factory": "react", "count": 2}, "budget": {"split": [1, 0]}},
        {"members": {"factory": "react", "count": 2}, "budget": {"split": [1, 1, 1]}},
        {"members": REACT, "budget": {"grace": -1}},
        {"members": REACT, "budget": {"grace": INF}},
        {"members": REACT, "budget": {"tokenz": 5}},
    ],
    "channels": [
        {"members": REACT, "channels": [{"name": "shared_memory", "max_files": 0}]},
        {"members": REACT, "channels": [{"name": "shared_memory", "max_board_bytes": 50}]},
        {"members": REACT, "channels": [{"name": "shared_memory", "rate": [0, 60]}]},
        {"members": REACT, "channels": [{"name": "shared_memory", "max_wait": 0}]},
    ],
}

# valid for swarm(), refused when the sample starts: splitting needs a cap, and a cost cap or
# limit needs prices (the scripted model has none)
AT_START: dict[str, list[dict[str, Any]]] = {
    "split": [
        {"members": {"factory": "react", "count": 2}, "budget": {"split": "equal"}},
        {
            "members": [member(react, name="a"), member(react, name="b")],
            "budget": {"tokens": 10, "split": [1, 100]},
        },
    ],
    "prices": [
        {"members": REACT, "budget": {"cost": 1.0}},
        {"members": [member(react, name="a"), member(react, name="b", limits={"cost": 0.5})]},
    ],
}


# (file name, its bytes; None: no such file), each written alone in an empty directory
ALIAS_BOMB = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 6)
)
FILES: list[tuple[str, bytes | None]] = [
    ("topology.yaml", b"members:\n  - factory: react\ncontroller: [\n"),
    ("topology.toml", b"[budget]\ncost = 1.0\ngrace = ten\n"),
    ("topology.yaml", None),
    ("topology.yaml", b"controler: leaderless\n"),
    ("topology.yaml", b"\xffmembers: []\n"),
    ("topology.yaml", b"members: " + b"[" * 101 + b"]" * 101 + b"\n"),
    ("topology.yaml", ALIAS_BOMB.encode()),
]


def bad_files() -> None:
    with tempfile.TemporaryDirectory() as tmp, chdir(tmp):
        for name, data in FILES:
            for old in Path().iterdir():
                old.unlink()
            if data is not None:
                Path(name).write_bytes(data)
            try:
                swarm(config=name)
            except ConfigError as error:
                print(error)
            else:
                raise SystemExit(f"no error for {name}: {data!r}")


def checked_by_swarm(group: str) -> None:
    for kwargs in CHECKED_BY_SWARM[group]:
        try:
            swarm(**kwargs)
        except ConfigError as error:
            print(error)
        else:
            raise SystemExit(f"no error for {kwargs}")


def at_start(group: str) -> None:
    for kwargs in AT_START[group]:
        log = run_eval(swarm(**kwargs), model=scripted_model())
        error = log.samples[0].error if log.samples else None
        if error is None:
            raise SystemExit(f"no error for {kwargs}")
        print(error.message)  # the sample's error, as the log and Inspect's viewer show it


if __name__ == "__main__":
    group = sys.argv[1] if len(sys.argv) > 1 else ""
    if group in AT_START:
        at_start(group)
    elif group in CHECKED_BY_SWARM:
        checked_by_swarm(group)
    elif group == "files":
        bad_files()
    else:
        groups = [*CHECKED_BY_SWARM, "files", *AT_START]
        sys.exit(f"usage: config_errors.py {{{', '.join(groups)}}}")
