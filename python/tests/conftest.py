"""Fixtures: the Go command line, built once per session from the
repository the package was installed from (or $SHUFFLEDP_CLI)."""

import json
import os
import shutil
import subprocess
import tempfile
from typing import Any, Dict, List, Tuple

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _go() -> str:
    for cand in (os.environ.get("SHUFFLEDP_GO"), shutil.which("go"), "/usr/local/go/bin/go"):
        if cand and os.path.exists(cand):
            return cand
    pytest.skip("no Go toolchain to build the shuffledp command")


@pytest.fixture(scope="session")
def cli():
    """Run `shuffledp ARGS`: returns (returncode, stdout, stderr)."""
    path = os.environ.get("SHUFFLEDP_CLI")
    tmp = None
    if not path:
        tmp = tempfile.mkdtemp(prefix="shuffledp-cli-")
        path = os.path.join(tmp, "shuffledp")
        subprocess.run([_go(), "build", "-o", path, "./cmd/shuffledp"], cwd=REPO, check=True)

    def run(*args: str) -> Tuple[int, str, str]:
        p = subprocess.run([path, *args], capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    yield run
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def cli_json(cli):
    """Run `shuffledp ARGS --json` and decode its output (failing on an error)."""
    def run(*args: str) -> Dict[str, Any]:
        rc, out, err = cli(*args, "--json")
        assert rc == 0, err
        return json.loads(out)
    return run


def flags(**kw: Any) -> List[str]:
    """The command-line flags of keyword parameters (client_sigma -> --client-sigma)."""
    out: List[str] = []
    for k, v in kw.items():
        if isinstance(v, (list, tuple)):
            v = ",".join(str(x) for x in v)
        out += ["--" + k.replace("_", "-"), str(v)]
    return out
