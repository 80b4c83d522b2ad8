"""Third-party distributions made on the spot, for plugin-loading tests.

``write_distributions(root)`` writes four small distributions into ``root`` (a ``.dist-info``
folder with ``METADATA`` and a ``swarm`` entry point, and the module it names), each broken in
one way.  With ``root`` on ``sys.path`` (``monkeypatch.syspath_prepend``, or ``PYTHONPATH`` for a
subprocess) ``importlib.metadata`` finds them exactly as it finds installed ones: no pip, nothing
left in the environment.
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["BROKEN", "MODULES", "forget_modules", "write_distributions"]

# distribution -> (version, entry point name, module name, module source)
_DISTS: dict[str, tuple[str, str, str, str]] = {
    "noimport-dist": (
        "0.2.0",
        "noimport",
        "swarm_test_noimport",
        "import swarm_no_such_module_xyz  # noqa: F401\n",
    ),
    "typo-dist": (
        "1.0",
        "typo",
        "swarm_test_typo",
        "from swarm import hookimpl\n\n\n"
        "@hookimpl\n"
        "def swarm_regster_controllers(register):\n"
        "    register('typo_ctrl', lambda: object())\n",
    ),
    "raising-dist": (
        "0.3",
        "raising",
        "swarm_test_raising",
        "from swarm import hookimpl\n\n\n"
        "class Vote:\n"
        "    pass\n\n\n"
        "@hookimpl\n"
        "def swarm_register_controllers(register):\n"
        "    register('vote', Vote)\n"
        "    raise RuntimeError('registration exploded')\n",
    ),
    "cmd-dist": (
        "0.4",
        "cmd",
        "swarm_test_cmd",
        "from swarm import hookimpl\n\n\n"
        "@hookimpl\n"
        "def swarm_register_channels(register):\n"
        "    register('cmdchan', lambda: object())\n\n\n"
        "@hookimpl\n"
        "def swarm_register_commands(cli):\n"
        "    raise RuntimeError('no commands today')\n",
    ),
}

MODULES = [module for _, _, module, _ in _DISTS.values()]

BROKEN: dict[str, tuple[str, str, str]] = {
    "noimport": (
        "noimport-dist",
        "0.2.0",
        "entry point 'swarm_test_noimport' failed to import: "
        "ModuleNotFoundError(\"No module named 'swarm_no_such_module_xyz'\")",
    ),
    "typo": (
        "typo-dist",
        "1.0",
        "implements hooks that swarm-eval does not have: 'swarm_regster_controllers' "
        "(did you mean 'swarm_register_controllers'?)",
    ),
    "raising": (
        "raising-dist",
        "0.3",
        "hook 'swarm_register_controllers': raised RuntimeError('registration exploded')",
    ),
}
"""Plugin name -> (distribution, version, why it is broken), for the plugins broken when the
catalog is built; ``cmd`` breaks only when the ``swarm`` command asks for its commands."""


def write_distributions(root: Path, names: list[str] | None = None) -> Path:
    """Write the distributions called ``names`` (default: all four) into ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for dist in names or list(_DISTS):
        version, entry, module, source = _DISTS[dist]
        info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        (info / "entry_points.txt").write_text(f"[swarm]\n{entry} = {module}\n")
        (root / f"{module}.py").write_text(source)
    return root


def forget_modules() -> None:
    """Drop the distributions' modules from ``sys.modules`` (they live in a temp dir)."""
    for module in MODULES:
        sys.modules.pop(module, None)
