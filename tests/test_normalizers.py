"""Normalisers are named, never imported: a topology file or ``-S`` value names a registered
normaliser (``swarm_register_normalizers``), and ``module:function`` runs nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import answer_plugins
import attrs
import pytest

from swarm import ConfigError, controller, load_normalizer, load_topology, member, swarm
from swarm.plugins.normalizers import exact, number
from swarm.testing import Step, reply, run_eval, scripted_model, submit

from helpers import catalog, members_in_turn, only_sample, result, worker

KNOWN = "default, exact, number, swarm-fixture-plugin/last_word"
REFUSED = (
    "leaderless.normalize: {value!r} names Python code; a topology file or -S value can only "
    "name a registered normaliser ({known}). Register yours in a plugin (@hookimpl def "
    "swarm_register_normalizers(register): register('mine', mine), under the 'swarm' entry "
    "point group) or pass the function itself from Python: see docs/answers.md"
)


def used(step: Step) -> Step:
    return attrs.evolve(step, usage=(100, 10))


@pytest.fixture(autouse=True)
def _no_marks() -> Any:
    answer_plugins.CALLED.clear()
    yield
    answer_plugins.CALLED.clear()


def topology(tmp_path: Path, normalize: str) -> Path:
    path = tmp_path / "vote.yaml"
    path.write_text(
        "members: [{factory: react, name: m1}, {factory: react, name: m2}]\n"
        f"controller: {{name: leaderless, final: vote, normalize: '{normalize}'}}\n"
    )
    return path


def test_swarm_topology_check_refuses_a_file_naming_python(tmp_path: Path) -> None:
    path = topology(tmp_path, "os:system")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    done = subprocess.run(
        [str(Path(sys.executable).parent / "swarm"), "topology", "check", str(path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1
    refused = REFUSED.format(value="os:system", known=KNOWN)
    assert (done.stdout, done.stderr) == ("", f"error: {path}: controller: {refused}\n")


@pytest.mark.parametrize("value", ["os:system", "answer_plugins:leaves_a_mark", "os.path:join"])
def test_a_topology_file_naming_python_is_refused_and_runs_nothing(
    tmp_path: Path, value: str
) -> None:
    path = topology(tmp_path, value)
    with pytest.raises(ConfigError) as info:
        swarm(**load_topology(path))
    assert str(info.value) == f"controller: {REFUSED.format(value=value, known=KNOWN)}"
    assert answer_plugins.CALLED == []


def test_an_s_value_naming_python_is_refused(tmp_path: Path) -> None:
    # what `-S 'controller={name: leaderless, final: vote, normalize: ...}'` hands swarm()
    known = KNOWN
    value = "answer_plugins:leaves_a_mark"
    with pytest.raises(ConfigError) as info:
        swarm(
            members=member(worker, count=2),
            controller={"name": "leaderless", "final": "vote", "normalize": value},
        )
    assert str(info.value) == f"controller: {REFUSED.format(value=value, known=known)}"
    assert answer_plugins.CALLED == []


def test_python_callers_still_pass_a_function(log_dir: Path) -> None:
    names = ["m1", "m2", "m3"]
    solver = swarm(
        members=members_in_turn(names),
        controller=controller("leaderless", final="vote", normalize=answer_plugins.leaves_a_mark),
    )
    scripts = {
        n: [used(reply("warming up")), used(submit(a))] for n, a in zip(names, "aba", strict=True)
    }
    sample = only_sample(run_eval(solver, model=scripted_model(scripts), log_dir=log_dir))
    assert result(sample)["final"]["member"] == "m1"
    assert sorted(answer_plugins.CALLED) == ["a", "a", "b"]  # each answer once


def test_a_registered_third_party_normaliser_is_named_in_a_file(
    tmp_path: Path, log_dir: Path
) -> None:
    # swarm-fixture-plugin registers last_word; a bare name finds it (one distribution has it)
    path = tmp_path / "vote.yaml"
    path.write_text(
        "members: [{factory: react, name: m1}, {factory: react, name: m2}, "
        "{factory: react, name: m3}]\n"
        "controller: {name: leaderless, final: vote, normalize: last_word}\n"
    )
    solver = swarm(**load_topology(path))
    scripts = {
        "m1": [used(reply("warming up")), used(submit("I think Rome"))],
        "m2": [used(reply("warming up")), used(submit("It is Paris."))],
        "m3": [used(reply("warming up")), used(submit("PARIS"))],
    }
    sample = only_sample(run_eval(solver, model=scripted_model(scripts), log_dir=log_dir))
    final = result(sample)["final"]
    assert (final["mode"], final["answer"]) == ("vote", sample.output.completion)
    assert final["member"] in ("m2", "m3")  # paris: 2 votes against rome's 1
    assert sample.output.completion in ("It is Paris.", "PARIS")


def test_a_normaliser_of_a_broken_plugin_names_the_field_and_the_plugin() -> None:
    class Broken:
        @staticmethod
        def swarm_register_normalizers(register: Any) -> None:
            register("digits", answer_plugins.digits)
            raise RuntimeError("cannot import mypkg.answers")

    from swarm import hookimpl

    hookimpl(Broken.swarm_register_normalizers)
    with pytest.raises(ConfigError) as info:
        swarm(
            members=member(worker, count=2),
            controller=controller("leaderless", final="vote", normalize="digits"),
            plugins=catalog(Broken()),
        )
    assert str(info.value) == (
        "controller: leaderless.normalize: normalizer 'digits' is not available: it comes from "
        "plugin 'test-plugin-0', which is broken: hook 'swarm_register_normalizers': raised "
        "RuntimeError('cannot import mypkg.answers')"
    )


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("The total is 1,200.50.", "1200.5"),
        ("42", "42"),
        ("-0.0", "0"),
        ("+3.000", "3"),
        ("007", "7"),
        ("x = -12.5", "-12.5"),
        ("pages 3-5", "5"),  # a range: its last number, not -5
        ("1,2,3", "3"),  # commas not between groups of three are no thousands commas
        ("٤٢", "42"),  # Arabic-Indic digits read as the digits they are
        ("\uff14\uff12", "42"),  # fullwidth
        ("1" * 5000 + ".0", "1" * 5000),  # text only: no int conversion limit
        ("no number here", ""),
        ("", ""),
    ],
)
def test_the_number_normaliser(text: str, key: str) -> None:
    assert number(text) == key


def test_the_exact_normaliser_keeps_case_and_inner_spacing() -> None:
    assert exact("  Forty  Two \n") == "Forty  Two"


def test_a_normaliser_name_resolves_to_the_registered_function() -> None:
    from swarm import normalize_answer

    assert load_normalizer("number", "f") is number
    assert load_normalizer("default", "f") is normalize_answer
    assert load_normalizer(exact, "f") is exact
