"""Tests a plugin author might write, using the fixtures swarm-eval gives pytest.

swarm-eval registers its pytest plugin through the `pytest11` entry point, so `swarm_plugins`,
`swarm_log_dir` and `scripted` are available to any test once swarm-eval is installed.
"""

from inspect_ai.agent import react

from swarm import RESULT_KEY, PluginCatalog, member, swarm
from swarm.testing import pause, reply, run_eval, submit


def test_leaderless_is_installed(swarm_plugins: PluginCatalog) -> None:
    assert "leaderless" in swarm_plugins.names("controller")
    assert swarm_plugins.lookup("controller", "leaderless").distribution == "swarm-eval"


def test_first_submission_stops_the_swarm(swarm_plugins, swarm_log_dir, scripted) -> None:
    model = scripted(
        {
            "fast": [submit("42")],
            "slow": [reply("warming up"), pause(30, submit("41"))],
        }
    )
    log = run_eval(
        swarm(
            members=[member(react, name="fast"), member(react, name="slow")],
            budget={"grace": 0},
            plugins=swarm_plugins,
        ),
        model=model,
        log_dir=swarm_log_dir,
    )
    result = log.samples[0].store[RESULT_KEY]
    assert result["stop_reason"] == "submitted"
    assert [m["status"] for m in result["members"]] == ["submitted", "cancelled"]
    assert result["final"]["member"] == "fast"
    assert log.samples[0].scores["includes"].value == "C"
