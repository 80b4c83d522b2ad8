"""The ``inspect_ai`` entry point costs Inspect no more than it must (issue 42).

Inspect loads every installed package's ``inspect_ai`` entry point at its first registry
lookup: every ``inspect`` command and every eval in a process.  Ours imported
``swarm.analysis`` and ``swarm.diagnosis`` whole, and with them Inspect's dataframes
(``inspect_ai.analysis``) for the ``samples_df`` columns: a third of a second of imports
in every Inspect command of an environment with swarm-eval installed.  The columns are now
imported when first asked for."""

from __future__ import annotations

import subprocess
import sys

import pytest

LOADED = (
    "import sys, swarm._entry_point\n"
    "print(sorted(m for m in ('inspect_ai.analysis', 'pandas', 'pyarrow') if m in sys.modules))\n"
)


def test_loading_the_entry_point_imports_no_dataframes() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LOADED], capture_output=True, text=True, timeout=120
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "[]\n", "")


def test_the_columns_are_there_when_asked_for() -> None:
    import swarm.analysis
    import swarm.diagnosis
    from swarm.analysis._columns import SwarmColumns, require_dataframes
    from swarm.diagnosis._columns import DiagnosisColumns

    assert swarm.analysis.SwarmColumns is SwarmColumns
    assert swarm.analysis.require_dataframes is require_dataframes
    assert swarm.diagnosis.DiagnosisColumns is DiagnosisColumns
    assert {"SwarmColumns", "require_dataframes"} <= set(swarm.analysis.__all__)
    assert "DiagnosisColumns" in swarm.diagnosis.__all__


def test_a_name_neither_package_has_is_an_attribute_error() -> None:
    import swarm.analysis
    import swarm.diagnosis

    for package in (swarm.analysis, swarm.diagnosis):
        with pytest.raises(AttributeError, match="has no attribute 'Columns'"):
            package.Columns  # noqa: B018
