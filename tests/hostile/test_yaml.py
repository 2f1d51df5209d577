"""Workflow YAML caps: alias bombs, deep nesting, recursive aliases and huge files are refused
with the limit named, before anything walks the data (build, predict and the simulated GitHub
all parse through gharuntime.workflow.parse_workflow)."""

from __future__ import annotations

import pytest

from gharuntime.workflow import (
    MAX_YAML_BYTES,
    MAX_YAML_DEPTH,
    MAX_YAML_NODES,
    WorkflowError,
    parse_workflow,
)


def bomb(levels: int, fan: int = 9) -> str:
    rows = "\n".join(
        f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * fan) + "]" for i in range(1, levels + 1)
    )
    return (
        "on: push\nx:\n  l0: &l0 [a]\n"
        + rows
        + f"\njobs:\n  a:\n    runs-on: ubuntu-latest\n    env: {{V: *l{levels}}}\n"
        "    steps: [{run: x}]\n"
    )


def test_an_alias_bomb_is_refused_naming_the_limit() -> None:
    assert MAX_YAML_NODES < 9**7  # the document below expands past the cap
    with pytest.raises(WorkflowError, match=f"{MAX_YAML_NODES:,} nodes"):
        parse_workflow(bomb(7))


def test_shared_aliases_under_the_cap_still_parse() -> None:
    assert MAX_YAML_NODES > 9**3 * 4
    wf = parse_workflow(bomb(3))
    assert "a" in wf.jobs


def test_a_recursive_alias_is_refused() -> None:
    with pytest.raises(WorkflowError, match="itself"):
        parse_workflow("on: push\njobs: &a\n  a: *a\n")


@pytest.mark.parametrize("style", ["flow", "block"])
def test_deep_nesting_is_refused(style: str) -> None:
    depth = MAX_YAML_DEPTH + 50
    if style == "flow":
        value = "[" * depth + "]" * depth
    else:
        value = (
            "\n"
            + "".join("  " * (i + 3) + f"k{i}:\n" for i in range(depth))
            + "  " * (depth + 3)
            + "x"
        )
    with pytest.raises(WorkflowError):
        parse_workflow(f"on: push\njobs:\n  a:\n    runs-on: {value}\n")


def test_a_file_above_the_size_cap_is_refused_before_parsing() -> None:
    text = "on: push\njobs:\n  a: {runs-on: x}\n#" + "x" * MAX_YAML_BYTES
    with pytest.raises(WorkflowError, match="MB"):
        parse_workflow(text)


@pytest.mark.slow
def test_a_large_workflow_without_aliases_is_told_so() -> None:
    """Over MAX_YAML_NODES nodes written out (under the byte cap): the message names the limit
    and says no alias is involved, not `aliases repeating aliases?`."""
    items = ",".join("1" for _ in range(MAX_YAML_NODES + 10))
    text = f"on: push\njobs:\n  a:\n    runs-on: x\n    env: {{V: [{items}]}}\n"
    assert len(text) < MAX_YAML_BYTES
    with pytest.raises(WorkflowError, match=r"1,000,000 nodes \(it uses no aliases\)") as err:
        parse_workflow(text)
    assert "aliases?" not in str(err.value)


def test_an_alias_bomb_says_its_aliases_expand() -> None:
    with pytest.raises(WorkflowError, match="once its aliases are expanded"):
        parse_workflow(bomb(7))
