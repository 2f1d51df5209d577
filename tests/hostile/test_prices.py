"""Hostile price files through `predict --prices`: every value is read from its text, so no YAML
tag, merge key, number quirk or impossible date reaches a traceback or a wrong rate; each is
refused with exit 2, the file's line and a fix; and `--json` is strict JSON."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from fuzz_support import check, invoke

BASE = "rates:\n  linux: 0.008\n"
HOSTILE = {
    "digits": "rates:\n  linux: " + "9" * 401 + "\n",
    "fraction_digits": "rates:\n  linux: 0." + "1" * 401 + "\n",
    "huge": "rates:\n  linux: 1.7e308\n",
    "exponent": "rates:\n  linux: 6e-3\n",
    "over_max": "rates:\n  linux: 1000000\n",
    "hex": "rates:\n  linux: 0x10\n",
    "octal": "rates:\n  linux: 0o17\n",
    "sexagesimal": "rates:\n  linux: 1:30\n",
    "underscore": "rates:\n  linux: 1_000\n",
    "python_tag": "rates:\n  linux: !!python/object/apply:os.system ['true']\n",
    "binary_tag": "rates:\n  linux: !!binary aGVsbG8=\n",
    "float_tag": "rates:\n  linux: !!float 0x10\n",
    "custom_tag": "rates:\n  linux: !mine 0.1\n",
    "tagged_kind": "rates:\n  !!python/name:os.system : 0.1\n",
    "merge_key": "base: &b {linux: 0.008}\nrates:\n  <<: *b\n",
    "merge_in_rates": "rates:\n  <<: {linux: 0.008}\n",
    "impossible_date": BASE + "read_on: 2026-02-30\n",
    "impossible_date_tagged": BASE + "rates_from: !!timestamp 2026-13-01\n",
    "date_with_time": BASE + "read_on: 2026-01-01 10:00:00\n",
    "year_99999": BASE + "read_on: 99999-01-01\n",
    "tagged_source": BASE + "source: !!python/str x\n",
    "quoted_rate": "rates:\n  linux: '0.008'\n",
    "set_tag": "rates:\n  linux: !!set {a}\n",
}


@pytest.fixture(scope="module")
def model_root(tmp_path_factory: pytest.TempPathFactory, fixture_dataset_master: Path) -> Path:
    root = tmp_path_factory.mktemp("prices")
    shutil.copytree(fixture_dataset_master, root / "ds")
    out = invoke(["baseline", "median", "--dataset", "ds", "--out", "m.jsonl"], root)
    assert out.code == 0, out.output
    (root / "wf.yml").write_text(
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps: [{run: pytest}]\n"
    )
    return root


def _predict(root: Path, prices: str, *extra: str) -> tuple[int, str]:
    (root / "p.yml").write_text(prices)
    out = invoke(["predict", "wf.yml", "--model", "m.model", "--prices", "p.yml", *extra], root)
    check(out, prices[:80])
    return out.code, out.output


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_price_file_is_refused_with_its_line(model_root: Path, case: str) -> None:
    code, output = _predict(model_root, HOSTILE[case], "--json")
    assert code == 2, output[-2000:]
    assert "p.yml:" in output, output[-2000:]


@pytest.mark.parametrize("rate", ["0", "0.008", "1000", "12.5", "0.25"])
def test_plain_decimals_are_rates_and_json_is_strict(model_root: Path, rate: str) -> None:
    code, output = _predict(model_root, f"rates:\n  linux: {rate}\nread_on: 2026-01-31\n", "--json")
    assert code == 0, output[-2000:]
    doc = json.loads(output, parse_constant=lambda c: pytest.fail(f"{c} in --json"))
    job = doc["jobs"][0]
    assert job["cost_usd"] == pytest.approx(job["billed_minutes"] * float(rate))
