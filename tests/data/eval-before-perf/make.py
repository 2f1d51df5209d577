"""Write the golden scores that tests/eval/test_equivalence.py compares the eval code against.

Run with the eval code as it was before issue #31's speed-ups (commit e3b17ec), from that
checkout, from a folder outside the project (else the project on the current folder shadows it):
`PYTHONPATH=CHECKOUT python /path/to/tests/data/eval-before-perf/make.py OUT.json`. The
scenarios are built by tests/eval_scenarios.py, so the test rebuilds the very same inputs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/ for eval_scenarios

from eval_scenarios import SCENARIOS, scores_json

if __name__ == "__main__":
    out = {name: scores_json(*build()) for name, build in SCENARIOS.items()}
    Path(sys.argv[1]).write_text(json.dumps(out, sort_keys=True) + "\n", encoding="utf-8")
