"""Publish and download a dataset folder through real Hub servers on 127.0.0.1.

Figures, all measured in this run (`gharuntime` runs as its own process, as a user runs it):
1. `gharuntime publish` of the folder to the project's Hub endpoint (gharuntime.sim.hub): wall
   time, bytes the server received (request bodies) and sent.
2. the same command again on the unchanged folder: wall time, bytes, and how many data files
   went up (LFS PUTs of data files and figures; goal: none).
3. `gharuntime download` of the tag into an empty Hub cache, from the same server and from
   olah serving the same files from a git repository: wall time, bytes the server sent.
4. references: copying the folder on local disk (shutil.copytree), and the wall time of
   `gharuntime --version` (interpreter and CLI start-up, part of every figure above).

    .venv/bin/gharuntime build --source simulated --seed 1 --scale medium --out work/hub/medium
    python benchmarks/hub_roundtrip.py --dataset work/hub/medium

The last line printed is one JSON object with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gharuntime.sim.hub import serve_hub
from gharuntime.sim.hub.mirror import git_dataset_repo, hub_env, serve_olah, tag

TOKEN = "hf_" + "benchmark" + "0" * 20
REPO = "bench/gharuntime"


def _gharuntime(env: dict[str, str], *args: str) -> tuple[float, str]:
    cmd = [sys.executable, "-c", "from gharuntime.cli.main import main; main()", *args]
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, done.stdout


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", type=Path, required=True, help="A built dataset folder.")
    args = parser.parse_args()
    folder: Path = args.dataset.resolve()
    work = Path(tempfile.mkdtemp(prefix="hub-bench-"))
    figures: dict[str, Any] = {"dataset_bytes": _folder_bytes(folder)}
    figures["dataset_files"] = sum(1 for p in folder.rglob("*") if p.is_file())
    try:
        start = time.perf_counter()
        shutil.copytree(folder, work / "copy")
        figures["local_copy_s"] = round(time.perf_counter() - start, 3)

        figures["cli_startup_s"] = round(_gharuntime(dict(os.environ), "--version")[0], 2)

        with serve_hub(work / "store", tokens={TOKEN: "bench"}) as hub:
            env = hub_env(work / "hf-publisher", hub.url, HF_TOKEN=TOKEN)
            for name in ("publish_first", "publish_again"):
                received, sent = hub.traffic.bytes_received, hub.traffic.bytes_sent
                puts = hub.traffic.count("PUT", r"^/lfs/")
                wall, _ = _gharuntime(
                    env, "publish", str(folder), "--repo-id", REPO, "--tag", "v1.0"
                )
                figures[name] = {
                    "wall_s": round(wall, 2),
                    "bytes_received_by_server": hub.traffic.bytes_received - received,
                    "bytes_sent_by_server": hub.traffic.bytes_sent - sent,
                    "lfs_files_uploaded": hub.traffic.count("PUT", r"^/lfs/") - puts,
                }
                print(f"{name}: {figures[name]}", flush=True)
            sent = hub.traffic.bytes_sent
            env = hub_env(work / "hf-sim-reader", hub.url)
            wall, _ = _gharuntime(env, "download", f"{REPO}@v1.0")
            figures["download_sim_hub"] = {
                "wall_s": round(wall, 2),
                "bytes_sent_by_server": hub.traffic.bytes_sent - sent,
            }
            print(f"download from gharuntime.sim.hub: {figures['download_sim_hub']}", flush=True)

        mirrors = work / "mirrors"
        (commit,) = git_dataset_repo(mirrors, REPO, [folder])
        tag(mirrors, REPO, "v1.0", commit)
        with serve_olah(mirrors, work, REPO) as url:
            env = hub_env(work / "hf-olah-reader", url)
            wall, _ = _gharuntime(env, "download", f"{REPO}@v1.0")
            figures["download_olah"] = {"wall_s": round(wall, 2)}
            print(f"download from olah: {figures['download_olah']}", flush=True)

        base = max(figures["local_copy_s"], 1e-3)
        figures["ratio_publish_first_vs_local_copy"] = round(
            figures["publish_first"]["wall_s"] / base, 1
        )
        figures["ratio_download_sim_vs_local_copy"] = round(
            figures["download_sim_hub"]["wall_s"] / base, 1
        )
        figures["load_average"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
