"""Runner labels → runner kind: GitHub's documented labels map, anything else is refused with a
reason, never guessed."""

from __future__ import annotations

import pytest

from gharuntime.billing.runners import KINDS, runner_kind


@pytest.mark.parametrize(
    ("labels", "kind"),
    [
        # GitHub's standard hosted images (docs: "GitHub-hosted runners" → supported runners)
        (["ubuntu-latest"], "linux"),
        (["ubuntu-24.04"], "linux"),
        (["ubuntu-22.04"], "linux"),
        (["Ubuntu-Latest"], "linux"),  # labels are not case-sensitive
        (["ubuntu-slim"], "linux_slim"),
        (["ubuntu-24.04-arm"], "linux_arm"),
        (["windows-latest"], "windows"),
        (["windows-2022"], "windows"),
        (["windows-11-arm"], "windows_arm"),
        (["macos-latest"], "macos"),
        (["macos-14"], "macos"),
        (["macos-15-intel"], "macos"),
        (["macos-13-large"], "macos_l"),
        (["macos-latest-xlarge"], "macos_xl"),
        (["macos-15-xlarge"], "macos_xl"),
        # larger runners named with their OS and cores, as GitHub's docs name them
        (["ubuntu-22.04-16core"], "linux_16_core"),
        (["ubuntu-latest-8-cores"], "linux_8_core"),
        (["ubuntu-24.04-2core"], "linux_2_core_advanced"),
        (["windows-2022-8core"], "windows_8_core"),
        (["linux-arm64-4core"], "linux_4_core_arm"),
        (["windows-arm-16-cores"], "windows_16_core_arm"),
        (["ubuntu-gpu-4core"], "linux_4_core_gpu"),
        # self-hosted, whatever else is listed
        (["self-hosted"], "self_hosted"),
        (["self-hosted", "linux", "x64", "gpu"], "self_hosted"),
    ],
)
def test_documented_labels_map_to_their_kind(labels: list[str], kind: str) -> None:
    got = runner_kind(labels)
    assert (got.kind, got.reason) == (kind, None)
    assert kind in KINDS


@pytest.mark.parametrize(
    ("labels", "reason"),
    [
        ([], "no `runs-on:`"),
        (["${{ matrix.os }}"], "expression only known at run time"),
        (["my-build-box"], "`my-build-box` is not a GitHub-hosted runner label"),
        (["buildjet-4vcpu-ubuntu-2204"], "not a GitHub-hosted runner label"),
        (["linux"], "`linux` is not a GitHub-hosted runner label"),  # a self-hosted-style label
        (["ubuntu-22.04-12core"], "not a GitHub-hosted runner label"),  # no 12-core Linux runner
        (["gpu-t4-4-core"], "not a GitHub-hosted runner label"),  # no OS in the name
        (["ubuntu-latest", "windows-latest"], "different runner kinds"),
    ],
)
def test_other_labels_are_not_mapped_and_say_why(labels: list[str], reason: str) -> None:
    got = runner_kind(labels)
    assert got.kind is None
    assert got.reason is not None and reason in got.reason


def test_a_price_files_labels_name_an_organisations_runners() -> None:
    custom = {"Big-Box": "linux_32_core", "mac-mini-farm": "self_hosted"}
    assert runner_kind(["big-box"], custom).kind == "linux_32_core"
    assert runner_kind(["self-hosted", "mac-mini-farm"], custom).kind == "self_hosted"
    # a custom name wins over the reading of the label itself
    assert runner_kind(["ubuntu-latest"], {"ubuntu-latest": "linux_4_core"}).kind == "linux_4_core"
