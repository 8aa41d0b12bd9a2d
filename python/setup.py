"""The build step of the shuffledp Python package (metadata: pyproject.toml).

The package is a thin ctypes layer over the Go accountant: building it runs
``go build -buildmode=c-shared`` on ``cmd/libshuffledp`` of the repository
this directory sits in, and installs the shared library inside the package.
No bound is computed in Python. Needs Go (``go`` on PATH, /usr/local/go/bin/go,
or the SHUFFLEDP_GO environment variable) and a C compiler for cgo.
"""

import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
LIBNAME = "libshuffledp.so"


def go_binary() -> str:
    """The go command: $SHUFFLEDP_GO, go on PATH, or /usr/local/go/bin/go."""
    for cand in (os.environ.get("SHUFFLEDP_GO"), shutil.which("go"), "/usr/local/go/bin/go"):
        if cand and os.path.exists(cand):
            return cand
    raise RuntimeError("shuffledp: Go is needed to build the accountant's shared library: "
                       "install Go or set SHUFFLEDP_GO to the go binary")


class BuildWithGo(build_py):
    """build_py that also builds the Go shared library into the package."""

    def run(self) -> None:
        super().run()
        if not os.path.exists(os.path.join(REPO, "go.mod")):
            raise RuntimeError(f"shuffledp: {REPO} is not the shuffledp repository (no go.mod): "
                               "install from the python/ directory of a checkout")
        out = os.path.join(os.path.abspath(self.build_lib), "shuffledp", LIBNAME)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        env = dict(os.environ, CGO_ENABLED="1")
        # -s -w: no symbol table or DWARF (the exported symbols stay): the library
        # carries the federated roles (gRPC, SQLite, PostgreSQL), 27 MB so, 38 MB without.
        subprocess.run([go_binary(), "build", "-trimpath", "-ldflags=-s -w", "-buildmode=c-shared", "-o", out, "./cmd/libshuffledp"],
                       cwd=REPO, env=env, check=True)
        header = out[:-3] + ".h"
        if os.path.exists(header):
            os.remove(header)


class BinaryDistribution(Distribution):
    """The package carries a native library: its wheel is platform-specific."""

    def has_ext_modules(self) -> bool:
        return True


try:
    from wheel.bdist_wheel import bdist_wheel
except ImportError:  # no wheel package: pip install from source still works
    bdist_wheel = None

if bdist_wheel is not None:
    class PlatformWheel(bdist_wheel):
        """The wheel of a native library called through ctypes: bound to the
        platform (linux_x86_64, ...) but to no Python version or ABI, so one
        wheel serves every Python 3 on that platform."""

        def finalize_options(self) -> None:
            super().finalize_options()
            self.root_is_pure = False

        def get_tag(self):
            _, _, plat = super().get_tag()
            return "py3", "none", plat

# The metadata is in pyproject.toml (PEP 621); setup.py adds only the Go build step and marks the
# wheel as platform-specific.
setup(
    cmdclass={"build_py": BuildWithGo, **({"bdist_wheel": PlatformWheel} if bdist_wheel is not None else {})},
    distclass=BinaryDistribution,
)
