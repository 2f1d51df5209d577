"""GHARuntime: predict how long a GitHub Actions job will run, and what it will cost, from its
configuration. The public API: the data contract, dataset folders, and the stages over them."""

import importlib
import importlib.util
import os
import sys
from typing import TYPE_CHECKING

# The Hub client registers itself as the opener of Hub ids (ORG/NAME[@REVISION]) when imported;
# the dataset layer below it cannot import it (gharuntime.dataset_ref says why).
from gharuntime import hub  # noqa: F401
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
from gharuntime.dataset import (
    DatasetError,
    LocalDataset,
    Problem,
    load,
    open_dataset,
    read_manifest,
    validate,
    write_dataset,
)
from gharuntime.errors import GharuntimeError
from gharuntime.version import __version__

# The error tree: every exception a library caller may catch, by the module that defines it. Each
# is imported on first use (PEP 562), so `import gharuntime` stays as light as it was; the
# command line's and the simulator's own signals are not part of it. This is the one list: the
# TYPE_CHECKING block below spells it for type checkers (tests/test_public_api.py fails when
# they differ, or when a public exception of the package is missing here), and the table of
# docs/api/public.md is written from it by docs/hooks/error_tree.py.
ERRORS: dict[str, str] = {
    "ArchiveError": "gharuntime.logarchive",
    "BadCredentials": "gharuntime.crawler.client",
    "BenchError": "gharuntime.baselines.laser.bench",
    "BuildError": "gharuntime.builder.build",
    "Cancelled": "gharuntime.crawler.client",
    "CheckoutError": "gharuntime.predict.checkout",
    "CrawlDirError": "gharuntime.builder.crawl_dir",
    "CrawlError": "gharuntime.crawler.client",
    "CrawlSetupError": "gharuntime.crawler.assembly",
    "DecodingError": "gharuntime.baselines.laser.decoding",
    "EmptySplit": "gharuntime.eval.provenance",
    "EncodingError": "gharuntime.baselines.laser.encoding",
    "FolderInUse": "gharuntime.folderlock",
    "FolderLockError": "gharuntime.folderlock",
    "ForbiddenInputError": "gharuntime.baselines.method",
    "GitError": "gharuntime.sources.gitstore",
    "HistoryError": "gharuntime.predict.history",
    "HubError": "gharuntime.hub.spec",
    "InputFileError": "gharuntime.readfile",
    "InvalidSubmission": "gharuntime.eval.evaluate",
    "LeaderboardError": "gharuntime.leaderboard.registry",
    "LearnError": "gharuntime.learn",
    "LearnedError": "gharuntime.predict.learned",
    "MatrixTooLarge": "gharuntime.workflow",
    "MethodError": "gharuntime.baselines.method",
    "OptionError": "gharuntime.errors",
    "PredictError": "gharuntime.predict.request",
    "PriceError": "gharuntime.billing.prices",
    "PromptTooLong": "gharuntime.baselines.laser.serialize",
    "RawStoreError": "gharuntime.rawstore",
    "ReproduceError": "gharuntime.leaderboard.reproduce",
    "ResultRefused": "gharuntime.leaderboard.reproduce",
    "RequestFailed": "gharuntime.crawler.client",
    "SourceError": "gharuntime.sources._columns",
    "SourceOptionError": "gharuntime.source_kinds.base",
    "UnknownExpression": "gharuntime.expressions",
    "WorkflowError": "gharuntime.workflow",
}

if TYPE_CHECKING:  # for type checkers; at run time __getattr__ below imports them
    from gharuntime.baselines.laser.bench import BenchError as BenchError
    from gharuntime.baselines.laser.decoding import DecodingError as DecodingError
    from gharuntime.baselines.laser.encoding import EncodingError as EncodingError
    from gharuntime.baselines.laser.serialize import PromptTooLong as PromptTooLong
    from gharuntime.baselines.method import ForbiddenInputError as ForbiddenInputError
    from gharuntime.baselines.method import MethodError as MethodError
    from gharuntime.billing.prices import PriceError as PriceError
    from gharuntime.builder.build import BuildError as BuildError
    from gharuntime.builder.crawl_dir import CrawlDirError as CrawlDirError
    from gharuntime.crawler.assembly import CrawlSetupError as CrawlSetupError
    from gharuntime.crawler.client import BadCredentials as BadCredentials
    from gharuntime.crawler.client import Cancelled as Cancelled
    from gharuntime.crawler.client import CrawlError as CrawlError
    from gharuntime.crawler.client import RequestFailed as RequestFailed
    from gharuntime.errors import OptionError as OptionError
    from gharuntime.eval.evaluate import InvalidSubmission as InvalidSubmission
    from gharuntime.eval.provenance import EmptySplit as EmptySplit
    from gharuntime.expressions import UnknownExpression as UnknownExpression
    from gharuntime.folderlock import FolderInUse as FolderInUse
    from gharuntime.folderlock import FolderLockError as FolderLockError
    from gharuntime.hub.spec import HubError as HubError
    from gharuntime.leaderboard.registry import LeaderboardError as LeaderboardError
    from gharuntime.leaderboard.reproduce import ReproduceError as ReproduceError
    from gharuntime.leaderboard.reproduce import ResultRefused as ResultRefused
    from gharuntime.learn import LearnError as LearnError
    from gharuntime.logarchive import ArchiveError as ArchiveError
    from gharuntime.predict.checkout import CheckoutError as CheckoutError
    from gharuntime.predict.history import HistoryError as HistoryError
    from gharuntime.predict.learned import LearnedError as LearnedError
    from gharuntime.predict.request import PredictError as PredictError
    from gharuntime.rawstore import RawStoreError as RawStoreError
    from gharuntime.readfile import InputFileError as InputFileError
    from gharuntime.source_kinds.base import SourceOptionError as SourceOptionError
    from gharuntime.sources._columns import SourceError as SourceError
    from gharuntime.sources.gitstore import GitError as GitError
    from gharuntime.workflow import MatrixTooLarge as MatrixTooLarge
    from gharuntime.workflow import WorkflowError as WorkflowError

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
    "LocalDataset",
    "Problem",
    "Role",
    "Track",
    "__version__",
    "load",
    "open_dataset",
    "read_manifest",
    "validate",
    "write_dataset",
    *ERRORS,
]


def __getattr__(name: str) -> object:
    """An error class of ERRORS, imported from its module on first use."""
    module = ERRORS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *ERRORS})


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
