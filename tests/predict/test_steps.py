"""What a job's steps run, as one digest (how a review tells a moved job from a new one): step
names, action refs, expressions and spacing aside; another command or another `with:` is
another job; a call not followed has no steps to compare."""

from __future__ import annotations

from gharuntime.predict.steps import step_fingerprint
from gharuntime.workflow import expand_jobs, parse_workflow


def _fingerprints(text: str) -> dict[str, str]:
    return {j.name: step_fingerprint(j) for j in expand_jobs(parse_workflow(text, "ci.yml"))}


def test_same_steps_ignore_names_refs_expressions_and_spacing_but_not_what_runs() -> None:
    one = """on: push
jobs:
  a:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: |
          make  ${{ matrix.target }}
          make test
  b:
    runs-on: windows-latest
    steps:
      - name: Check out
        uses: actions/checkout@v5
      - name: Build
        run: |

          make  ${{ inputs.target }}
            make test
  c:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: make docs
  d:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0
      - run: |
          make  ${{ matrix.target }}
          make test
  e:
    uses: octo-org/other/.github/workflows/ci.yml@main
"""
    found = _fingerprints(one)
    assert found["a"] == found["b"]
    assert found["a"] != found["c"]  # another command
    assert found["a"] != found["d"]  # another `with:`
    assert found["e / "] == ""  # a call not followed: its steps are unknown, never paired
