"""Build and install the shuffledp Python package.

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
        subprocess.run([go_binary(), "build", "-trimpath", "-buildmode=c-shared", "-o", out, "./cmd/libshuffledp"],
                       cwd=REPO, env=env, check=True)
        header = out[:-3] + ".h"
        if os.path.exists(header):
            os.remove(header)


class BinaryDistribution(Distribution):
    """The package carries a native library: its wheel is platform-specific."""

    def has_ext_modules(self) -> bool:
        return True


setup(
    name="shuffledp",
    version="0.1.0",
    description="Privacy accounting of the shuffle model (the shuffledp Go accountant, through ctypes)",
    packages=["shuffledp"],
    package_dir={"": "."},
    package_data={"shuffledp": ["py.typed"]},
    python_requires=">=3.9",
    cmdclass={"build_py": BuildWithGo},
    distclass=BinaryDistribution,
    zip_safe=False,
)
