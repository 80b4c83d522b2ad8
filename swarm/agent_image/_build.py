"""Building the agent CLIs' image: fetch (cached), unpack, ``docker build``."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from swarm._faces.agent_clis import AGENT_COMPOSE
from swarm.errors import ConfigError

__all__ = [
    "AGENT_IMAGE",
    "BASE_IMAGE",
    "CLAUDE_CODE_VERSION",
    "CODEX_VERSION",
    "COMPOSE",
    "DOCKERFILE",
    "build_agent_image",
    "default_cache",
    "image_present",
    "integrity",
    "npm_packages",
    "tarball_name",
]

CODEX_VERSION = "0.171.0"
"""Codex CLI's version in the image (npm ``@openai/codex``, its static Linux build)."""
CLAUDE_CODE_VERSION = "2.1.337"
"""Claude Code's version in the image (npm ``@anthropic-ai/claude-code``, its Linux build)."""
AGENT_IMAGE = f"swarm-eval-agents:codex-{CODEX_VERSION}-claude-{CLAUDE_CODE_VERSION}"
"""The image's tag: the versions it holds."""
BASE_IMAGE = "swarm-eval-base:bookworm"
"""The default base: the Debian image with python3 that ``start-engine.sh`` builds."""
DOCKERFILE = Path(__file__).with_name("Dockerfile")
COMPOSE = AGENT_COMPOSE
"""A task's compose file on the image (no network; a container per member)."""

_ARCH = {"amd64": "x64", "x86_64": "x64", "arm64": "arm64", "aarch64": "arm64"}

Say = Callable[[str], None]


INTEGRITY = {
    "@openai/codex@0.171.0-linux-x64": "sha512-l66NZkQgdk2C3pbcfULDz42yEUB581MVA6I+Y43Wp4OIqEy73H"
    "CdmZ0GTjeAHY2ycuH4N00d9VsLrwT1jxshTw==",
    "@openai/codex@0.171.0-linux-arm64": "sha512-9z17t4bbUJ9UCIb49O4PoA+ki+45q3rd8nZ8PeH6sYnlKkBl"
    "d/Xpo/OS3h3Ti954+foshX4o7k5TCU8N7zzqQA==",
    "@anthropic-ai/claude-code-linux-x64@2.1.337": "sha512-Wce/AADPVSsX4txVsbtajQ8dHgqUZo5JP6Dsk"
    "T91BUHEMsnzlO4oodZMXpc8skllMfIdj6s3sd6ClGQ6ebnOAg==",
    "@anthropic-ai/claude-code-linux-arm64@2.1.337": "sha512-qsDicYqT3y0KDVh2mIJ0fqRDC/We1cHG9dP"
    "AEcL4lf0VqnETKIQT1BBePi0VzP75EbcROI0sZckPNVsDKIn2Mg==",
}
"""npm's published integrity (``dist.integrity``) of each pinned package: a tarball, fetched or
cached, is built into the image only if its SHA-512 is this."""


def integrity(path: Path) -> str:
    """``path``'s SHA-512 in npm's ``dist.integrity`` form (``sha512-<base64>``)."""
    digest = hashlib.sha512()
    with path.open("rb") as data:
        for chunk in iter(lambda: data.read(1 << 20), b""):
            digest.update(chunk)
    return "sha512-" + base64.b64encode(digest.digest()).decode()


def npm_packages(arch: str) -> dict[str, str]:
    """The npm packages of the CLIs' builds for ``arch`` (``x64`` or ``arm64``)."""
    return {
        "codex": f"@openai/codex@{CODEX_VERSION}-linux-{arch}",
        "claude": f"@anthropic-ai/claude-code-linux-{arch}@{CLAUDE_CODE_VERSION}",
    }


def tarball_name(spec: str) -> str:
    """The file ``npm pack <spec>`` writes: ``@scope/name@version`` as
    ``scope-name-version.tgz``."""
    name, _, version = spec.lstrip("@").rpartition("@")
    return f"{name.replace('/', '-')}-{version}.tgz"


def _run(argv: Sequence[str], what: str, **kwargs: object) -> str:
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload]
    except FileNotFoundError:
        raise ConfigError(
            f"agent image: {what} needs `{argv[0]}`, which is not installed"
        ) from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-1500:]
        raise ConfigError(f"agent image: {what} failed (`{' '.join(argv)}`): {tail}")
    out: str = done.stdout
    return out


def image_present(tag: str = AGENT_IMAGE) -> bool:
    """Whether the engine has image ``tag``."""
    try:
        done = subprocess.run(["docker", "image", "inspect", tag], capture_output=True, check=False)
    except FileNotFoundError:
        return False
    return done.returncode == 0


def default_cache() -> Path:
    """Where the fetched packages are kept: ``$SWARM_AGENT_IMAGE_CACHE``, or
    ``~/.cache/swarm-eval/agent-image``."""
    found = os.environ.get("SWARM_AGENT_IMAGE_CACHE")
    if found:
        return Path(found)
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "swarm-eval" / "agent-image"


def _engine_arch() -> str:
    found = _run(["docker", "version", "--format", "{{.Server.Arch}}"], "asking the engine").strip()
    if found not in _ARCH:
        raise ConfigError(
            f"agent image: the Docker engine's architecture is {found!r}; the CLIs' builds "
            f"exist for {', '.join(sorted(_ARCH))}"
        )
    return _ARCH[found]


def _fetched(spec: str, cache: Path, say: Say) -> Path:
    path = cache / tarball_name(spec)
    if path.is_file():
        say(f"{spec}: cached ({path.name})")
    else:
        say(f"{spec}: npm pack (from the npm registry)")
        cache.mkdir(parents=True, exist_ok=True)
        _run(["npm", "pack", spec, "--pack-destination", str(cache)], f"fetching {spec}")
        if not path.is_file():
            raise ConfigError(f"agent image: npm pack {spec} wrote no {path.name} in {cache}")
    _verified(spec, path)
    return path


def _verified(spec: str, path: Path) -> None:
    """Refuse ``path`` unless its digest is npm's published one for ``spec``."""
    found = integrity(path)
    if found != INTEGRITY[spec]:
        raise ConfigError(
            f"agent image: {path} is not {spec} as npm publishes it (its SHA-512 is {found}, "
            f"npm's {INTEGRITY[spec]}); delete it and run the command again to fetch it anew"
        )


def _unpacked(tarball: Path, into: Path) -> Path:
    if not hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
        raise ConfigError(
            "agent image: unpacking the npm packages safely needs Python 3.11.4 or later "
            "(tarfile's data filter: no link or path out of the build folder)"
        )
    with tarfile.open(tarball) as archive:
        archive.extractall(into, filter="data")  # no link or path out of `into`
    return into / "package"


def _release(text: str) -> str | None:
    """``VERSION_CODENAME`` of an ``/etc/os-release``."""
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key == "VERSION_CODENAME":
            return value.strip().strip('"') or None
    return None


def _curl_debs(base: str, cache: Path, say: Say) -> list[Path]:
    """The Debian packages curl needs that ``base`` lacks, fetched on this Debian host; none
    when ``base`` has curl, or the host has no apt or another Debian release than ``base``
    (the build then installs curl with apt, which needs network)."""
    probe = ["docker", "run", "--rm", "--network", "none", base, "sh", "-c"]
    has = subprocess.run([*probe, "command -v curl"], capture_output=True, check=False)
    if has.returncode == 0 or shutil.which("apt-get") is None:
        return []
    theirs = _release(_run([*probe, "cat /etc/os-release"], "reading the base's release"))
    ours = _release(Path("/etc/os-release").read_text(encoding="utf-8"))
    if theirs is None or theirs != ours:
        say(f"curl: the base is Debian {theirs}, this host {ours}: the build installs it (apt)")
        return []
    installed = set(_run([*probe, "dpkg-query -W -f '${Package}\\n'"], "listing the base").split())
    tree = _run(
        [
            "apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests",
            "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", "curl",
        ],
        "resolving curl's packages",
    )  # fmt: skip
    wanted = sorted(
        {line.split(":")[0] for line in tree.splitlines() if line[:1].isalnum()} - installed
    )
    debs = cache / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    listing = _run(["apt-get", "download", "--print-uris", *wanted], "listing curl's packages")
    files = deb_files(listing)
    missing = sorted(
        {name.split("_")[0] for name, sha in files.items() if not _holds(debs / name, sha)}
    )
    if missing:
        say(f"curl for the base: apt-get download {' '.join(missing)}")
        _run(["apt-get", "download", *missing], "fetching curl's Debian packages", cwd=debs)
    for name, sha in files.items():
        if not _holds(debs / name, sha):
            raise ConfigError(
                f"agent image: {debs / name} is not the package apt lists (SHA-256 {sha}); "
                "remove it and build again"
            )
    return [debs / name for name in sorted(files)]


def deb_files(listing: str) -> dict[str, str]:
    """``apt-get download --print-uris``'s listing as each package file's name -> its SHA-256:
    exactly the versions apt would fetch now, so an older file in the cache is never used."""
    found: dict[str, str] = {}
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[3].startswith("SHA256:") and parts[1].endswith(".deb"):
            found[parts[1]] = parts[3].removeprefix("SHA256:")
    return found


def _holds(path: Path, sha256: str) -> bool:
    """Whether ``path`` is a file whose SHA-256 is ``sha256`` (hex)."""
    return path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == sha256


def build_agent_image(
    tag: str = AGENT_IMAGE,
    base: str = BASE_IMAGE,
    cache: Path | None = None,
    say: Say = print,
) -> str:
    """Build the agent CLIs' image ``tag`` from ``base`` (a Debian image with python3); the
    fetched packages are kept in ``cache`` (``default_cache()``) and not fetched again."""
    cache = default_cache() if cache is None else cache
    arch = _engine_arch()
    tarballs = {cli: _fetched(spec, cache, say) for cli, spec in npm_packages(arch).items()}
    debs = _curl_debs(base, cache, say)
    with tempfile.TemporaryDirectory(prefix="swarm-agent-image-") as tmp:
        work = Path(tmp)
        context = work / "context"
        (context / "debs").mkdir(parents=True)
        codex = _unpacked(tarballs["codex"], work / "codex") / "vendor"
        [triple] = [p for p in codex.iterdir() if p.is_dir()]
        shutil.move(str(triple), context / "codex")
        claude = _unpacked(tarballs["claude"], work / "claude")
        shutil.move(str(claude / "claude"), context / "claude")
        (context / "claude").chmod(0o755)
        for deb in debs:
            shutil.copy(deb, context / "debs" / deb.name)
        shutil.copy(DOCKERFILE, context / "Dockerfile")
        network = ["--network", "none"] if debs else []
        say(f"docker build -t {tag} (base {base})")
        _run(
            ["docker", "build", *network, "--build-arg", f"BASE={base}", "-t", tag, str(context)],
            "building the image",
        )
    return tag
