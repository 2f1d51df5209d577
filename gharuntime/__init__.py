"""GHARuntime: predict how long a GitHub Actions job will run, and what it will cost, from its
configuration. The public API: the data contract, dataset folders, and the stages over them."""

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
from gharuntime.dataset import DatasetError, Problem, load, read_manifest, validate, write_dataset
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
    "Problem",
    "Role",
    "Track",
    "__version__",
    "load",
    "read_manifest",
    "validate",
    "write_dataset",
]
