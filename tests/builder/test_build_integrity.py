"""Benchmark integrity of the build, over real HTTP on 127.0.0.1:

- revision = content: two crawls of the same world (different servers, ports and shard layouts)
  and a crawl vs `build --source simulated` give the same dataset revision;
- synthetic is known: a dataset from the simulated GitHub is labelled synthetic in its manifest
  and card by every route (crawl → build --raw, --source github at the simulator; the routes
  --source simulated and simulate dump are asserted in test_build_crawled / test_build_sim);
- the crawler's default window follows the server's clock (the simulated world's fixed END);
- same parameters, same bytes, whatever was at --out before (tiny then small at one --out refused,
  and a build with the clock moved a month, against fresh builds).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from crawler_support import TOKENS, make_client

from gharuntime.cli.main import cli
from gharuntime.crawler.crawl import CrawlOptions, crawl
from gharuntime.dataset import read_manifest
from gharuntime.sim import END, ServerConfig, World, serve
from gharuntime.sim.world import DAY, iso

SEED = 5  # crawler_support's WORLD_SEED: crawl_world is World(5, "tiny")


def _data_files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((root / "data").rglob("*.parquet"))
    }


def _crawl_cli(url: str, out: Path, repos: Path, token_file: Path, *more: str) -> None:
    world = World(SEED, "tiny")
    result = CliRunner().invoke(
        cli,
        [
            *("crawl", "--api-url", url, "--repos", str(repos), "--token-file", str(token_file)),
            *("--since", iso(END - world.scale.days * DAY), "--until", iso(END)),
            *("--out", str(out), *more),
        ],
    )
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The world crawled twice by `gharuntime crawl` (each from its own server, so its own port,
    with different concurrency and shard sizes), each built with `build --raw`; and the same
    world built with `build --source simulated`."""
    root = tmp_path_factory.mktemp("integrity")
    world = World(SEED, "tiny")
    repos = root / "repos.txt"
    repos.write_text("\n".join(m.full_name for m in world.metas() if not m.private) + "\n")
    tokens = root / "tokens.txt"
    tokens.write_text("\n".join(TOKENS) + "\n")
    out: dict[str, Path] = {}
    for name, more in (
        ("a", ("--concurrency", "1", "--flush-records", "50")),
        ("b", ("--concurrency", "4")),
    ):
        with serve(world, ServerConfig(tokens=TOKENS)) as server:
            _crawl_cli(server.url, root / f"{name}.raw", repos, tokens, *more)
        result = CliRunner().invoke(
            cli, ["build", "--raw", str(root / f"{name}.raw"), "--out", str(root / name)]
        )
        assert result.exit_code == 0, result.output
        out[name] = root / name
    result = CliRunner().invoke(
        cli,
        [
            *("build", "--source", "simulated", "--seed", str(SEED), "--scale", "tiny"),
            *("--out", str(root / "sim")),
        ],
    )
    assert result.exit_code == 0, result.output
    out["sim"] = root / "sim"
    return out


@pytest.mark.slow
def test_two_crawls_of_one_world_give_the_same_revision(crawled: dict[str, Path]) -> None:
    a, b = read_manifest(crawled["a"]), read_manifest(crawled["b"])
    # The provenance differs (ports, shard layout) and is recorded...
    assert a["source"]["stores"] != b["source"]["stores"]
    assert a["source"]["stores"][0]["shards"] != b["source"]["stores"][0]["shards"]
    # ...but the content, and so the revision, is the same.
    assert _data_files(crawled["a"]) == _data_files(crawled["b"])
    assert a["revision"] == b["revision"]


@pytest.mark.slow
def test_a_crawl_and_source_simulated_give_the_same_revision(crawled: dict[str, Path]) -> None:
    a, sim = read_manifest(crawled["a"]), read_manifest(crawled["sim"])
    assert a["rows"] == sim["rows"] > 100
    assert a["revision"] == sim["revision"]


@pytest.mark.slow
def test_a_crawl_of_the_simulator_is_labelled_synthetic(crawled: dict[str, Path]) -> None:
    manifest = read_manifest(crawled["a"])
    assert manifest["source"]["synthetic"] is True
    assert manifest["source"]["stores"][0]["meta"]["synthetic"] == "1"
    card = (crawled["a"] / "README.md").read_text()
    assert "**This dataset is synthetic.**" in card
    assert "Built from raw stores of GitHub REST API responses" not in card


@pytest.mark.slow
def test_source_simulated_is_labelled_synthetic(crawled: dict[str, Path]) -> None:
    assert read_manifest(crawled["sim"])["source"]["synthetic"] is True
    assert "**This dataset is synthetic.**" in (crawled["sim"] / "README.md").read_text()


def test_a_crawl_of_github_is_not_labelled_synthetic(tmp_path: Path) -> None:
    """The flag comes from the header, not from a URL: the same simulated answers without the
    header (a proxy that strips it) give a store without synthetic=1."""
    import http.server
    import threading
    import urllib.request

    with serve(World(SEED, "tiny"), ServerConfig(tokens=TOKENS)) as server:

        class Strip(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                req = urllib.request.Request(server.url + self.path, headers=dict(self.headers))
                try:
                    resp = urllib.request.urlopen(req)
                except urllib.error.HTTPError as exc:
                    resp = exc
                body = resp.read()
                self.send_response(resp.status)
                for k, v in resp.headers.items():
                    if k.lower() not in ("x-gharuntime-simulated", "transfer-encoding", "date"):
                        self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return

        proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Strip)
        thread = threading.Thread(target=proxy.serve_forever, daemon=True)
        thread.start()
        try:
            url = f"http://127.0.0.1:{proxy.server_address[1]}"
            client = make_client(url)
            client.identify()
            name = next(m.full_name for m in World(SEED, "tiny").metas() if not m.private)
            crawl(
                tmp_path / "raw",
                CrawlOptions(repos=[name], since=iso(END - 10 * DAY), until=iso(END)),
                client,
            )
        finally:
            proxy.shutdown()
            proxy.server_close()
    assert client.simulated is False
    con = sqlite3.connect(tmp_path / "raw" / "state.sqlite")
    meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    con.close()
    assert "synthetic" not in meta and meta["source"] == "crawl"


def test_the_default_window_ends_at_the_servers_clock(tmp_path: Path) -> None:
    world = World(SEED, "tiny")
    with serve(world, ServerConfig(tokens=TOKENS)) as server:
        client = make_client(server.url)
        client.identify()
        name = next(m.full_name for m in world.metas() if not m.private)
        result = crawl(tmp_path / "raw", CrawlOptions(repos=[name]), client)
    assert client.simulated is True
    assert result.until == iso(END)  # the world's fixed now, not today's date
    assert result.since == iso(END - 90 * DAY)


@pytest.mark.slow
def test_tiny_then_small_at_one_out_is_refused_then_equals_a_fresh_small_build(
    tmp_path: Path,
) -> None:
    """The crawl store beside --out holds the tiny world: a small build there is refused (its
    store would mix two worlds) and says how to go on; once that store is gone, the small build
    at the same --out, over the tiny dataset, gives the bytes of a fresh small build."""

    def build(out: Path, scale: str) -> tuple[int, str]:
        result = CliRunner().invoke(
            cli,
            ["build", "--source", "simulated", "--seed", "11", "--scale", scale, "--out", str(out)],
        )
        return result.exit_code, result.output

    assert build(tmp_path / "d", "tiny")[0] == 0
    tiny_manifest = (tmp_path / "d" / "manifest.json").read_bytes()
    code, output = build(tmp_path / "d", "small")
    assert code == 2, output
    assert "scale tiny" in output and "scale small" in output  # said, not silent
    assert (tmp_path / "d" / "manifest.json").read_bytes() == tiny_manifest  # untouched
    shutil.rmtree(tmp_path / "d.raw")
    assert build(tmp_path / "d", "small")[0] == 0
    assert build(tmp_path / "fresh", "small")[0] == 0
    assert _data_files(tmp_path / "d") == _data_files(tmp_path / "fresh")
    assert (
        read_manifest(tmp_path / "d")["revision"] == read_manifest(tmp_path / "fresh")["revision"]
    )
    # Building the same world again continues (here: finds complete) the same store.
    assert build(tmp_path / "d", "small")[0] == 0
    assert _data_files(tmp_path / "d") == _data_files(tmp_path / "fresh")


def test_a_raw_store_of_unknown_world_is_refused_not_mixed(tmp_path: Path) -> None:
    from gharuntime.rawstore import connect_state

    crawl_dir = tmp_path / "elsewhere"
    con = connect_state(crawl_dir)  # a raw store with records but no record of its world
    con.execute("INSERT INTO shards VALUES ('shard-00000.jsonl.gz', 3, ?)", ("0" * 64,))
    con.commit()
    con.close()
    result = CliRunner().invoke(
        cli,
        [
            *("build", "--source", "simulated", "--seed", "1", "--scale", "tiny"),
            *("--out", str(tmp_path / "d"), "--crawl-dir", str(crawl_dir)),
        ],
    )
    assert result.exit_code == 2, result.output
    assert "unknown origin" in result.output
    assert (crawl_dir / "state.sqlite").is_file()  # left as it was
    assert not (tmp_path / "d").exists()


_SHIFT_CLOCK = textwrap.dedent(
    """
    # Moves this interpreter's clock forward by GHARUNTIME_TEST_CLOCK_SHIFT seconds.
    import datetime as _dt
    import os as _os
    import time as _time

    _shift = float(_os.environ["GHARUNTIME_TEST_CLOCK_SHIFT"])
    _real_time, _real_time_ns = _time.time, _time.time_ns
    _time.time = lambda: _real_time() + _shift
    _time.time_ns = lambda: _real_time_ns() + int(_shift * 1e9)


    class _ShiftedDatetime(_dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return _dt.datetime.now(tz) + _dt.timedelta(seconds=_shift)

        @classmethod
        def utcnow(cls):
            return _dt.datetime.utcnow() + _dt.timedelta(seconds=_shift)


    # Not `_dt.datetime = _ShiftedDatetime`: C extensions (pandas, under lightgbm) crash on a
    # replaced datetime type. Every module of ours that imports `datetime` gets the shifted one.
    import importlib.abc as _abc
    import sys as _sys


    class _ShiftOurs(_abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if not name.startswith("gharuntime"):
                return None
            for finder in _sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None and spec.loader is not None:
                    run = spec.loader.exec_module

                    def exec_module(module, run=run):
                        run(module)
                        if getattr(module, "datetime", None) is _dt.datetime:
                            module.datetime = _ShiftedDatetime

                    spec.loader.exec_module = exec_module
                    return spec
                if spec is not None:
                    return spec
            return None


    _sys.meta_path.insert(0, _ShiftOurs())
    """
)


@pytest.mark.slow
def test_a_build_with_the_clock_moved_a_month_gives_the_same_bytes(
    crawled: dict[str, Path], tmp_path: Path
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_SHIFT_CLOCK)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
        "GHARUNTIME_TEST_CLOCK_SHIFT": str(31 * 86400),
    }
    probe = subprocess.run(
        [sys.executable, "-c", "import time; print(time.time())"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    import time

    assert float(probe.stdout) - time.time() > 30 * 86400  # the clock really moved
    proc = subprocess.run(
        [
            *(sys.executable, "-c", "from gharuntime.cli.main import main; main()"),
            *("build", "--source", "simulated"),
            *("--seed", str(SEED), "--scale", "tiny", "--out", str(tmp_path / "later")),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    fresh = crawled["sim"]
    assert _data_files(tmp_path / "later") == _data_files(fresh)
    assert read_manifest(tmp_path / "later")["revision"] == read_manifest(fresh)["revision"]
    assert (tmp_path / "later" / "manifest.json").read_bytes() == (
        fresh / "manifest.json"
    ).read_bytes()


@pytest.mark.slow
def test_the_card_says_temporal_group_median_is_a_history_lookup(crawled: dict[str, Path]) -> None:
    import re

    text = " ".join((crawled["sim"] / "README.md").read_text().split())
    temporal = re.search(r"On `temporal`, ([0-9.]+)% of the test jobs", text)
    cross = re.search(r"On `cross_repo` ([0-9.]+%|-) of the test jobs \(0 of", text)
    assert temporal is not None and cross is not None
    assert float(temporal.group(1)) > 50  # most temporal test jobs are known identities
    # every repository sits in one cross_repo split: no test identity was seen in training
