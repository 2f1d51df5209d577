"""GHARuntime: predict how long a GitHub Actions job will run, and what it will cost, from its
configuration. The public API: the data contract, dataset folders, and the stages over them."""

import importlib.util
import os
import sys

from gharuntime.contract import (
    COLUMNS,
    CONFIGS,
    PRIMARY_TARGET,
    SCHEMA_VERSION,
    SPLITS,
    TARGETS,
    TRACKS,
    Column,
    Role,
    Track,
)
from gharuntime.dataset import DatasetError, Problem, read_manifest, validate, write_dataset
from gharuntime.errors import GharuntimeError
from gharuntime.hub import load
from gharuntime.version import __version__

__all__ = [
    "COLUMNS",
    "CONFIGS",
    "PRIMARY_TARGET",
    "SCHEMA_VERSION",
    "SPLITS",
    "TARGETS",
    "TRACKS",
    "Column",
    "DatasetError",
    "GharuntimeError",
    "Problem",
    "Role",
    "Track",
    "__version__",
    "load",
    "read_manifest",
    "validate",
    "write_dataset",
]


def _checkout_packages() -> None:
    """Run from a source checkout's root (`python -m pytest`, `python -c`), Python finds this
    folder before the installed tree, and the folders setup.py maps into gharuntime (baselines/,
    crawler/, ...) sit beside it, not in it: register them under their gharuntime.* names."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    if not os.path.isfile(os.path.join(root, "setup.py")):
        return
    for name in ("crawler", "baselines", "leaderboard", "data_cards"):
        full, folder = f"{__name__}.{name}", os.path.join(root, name)
        init = os.path.join(folder, "__init__.py")
        if (
            full in sys.modules
            or os.path.isdir(os.path.join(here, name))
            or not os.path.isfile(init)
        ):
            continue
        spec = importlib.util.spec_from_file_location(
            full, init, submodule_search_locations=[folder]
        )
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        sys.modules[full] = module
        spec.loader.exec_module(module)
        globals()[name] = module


_checkout_packages()
