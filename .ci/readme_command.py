"""Print README command (a) or (b), the first line of the bash block after its bold heading.

.ci/run runs what this prints, so CI runs the README's commands exactly as a newcomer reads
them; a README without the heading or its block stops CI (exit 1) instead of running nothing.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def command(readme: str, label: str) -> str:
    heading = re.search(rf"^\*\*\({re.escape(label)}\) .*$", readme, flags=re.MULTILINE)
    if heading is None:
        raise SystemExit(f"README.md: no '**({label}) ...' heading")
    block = re.search(r"^```bash\n(.+?)\n```", readme[heading.end() :], flags=re.M | re.S)
    if block is None or "\n" in block.group(1).strip():
        raise SystemExit(f"README.md: command ({label}) is not one line in a ```bash block")
    return block.group(1).strip()


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    print(command((root / "README.md").read_text(encoding="utf-8"), sys.argv[1]))
