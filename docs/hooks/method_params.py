"""MkDocs hook: the parameter tables of docs/researcher/baselines.md, written from the methods'
own declarations.

Each method class declares its parameters once, as a `ParamTable` (`Method.param_specs`,
gharuntime.baselines.params); `gharuntime baseline --help` lists them from it and so does this
hook, which imports the method registry (no torch: LASER's module imports it on first use) and
writes one table per method that takes parameters where `MARKER` stands. A method whose table
extends an earlier one's (the tuned trees) names that method and lists only what it adds.
"""

from __future__ import annotations

from typing import Any

PAGE = "researcher/baselines.md"
MARKER = "<!-- the methods' parameters: written here by docs/hooks/method_params.py -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def tables() -> str:
    """One Markdown table per registered method with parameters, in the registry's order."""
    from gharuntime.baselines.methods import REGISTERED

    blocks: list[str] = []
    shown: list[tuple[str, list[str]]] = []  # (method, its parameter names) already written
    for entry in REGISTERED:
        specs = entry.method.param_specs
        if not specs:
            continue
        names = list(specs)
        base = next(
            (m for m, seen in reversed(shown) if names[: len(seen)] == seen and seen != names),
            None,
        )
        skip = len(next(seen for m, seen in shown if m == base)) if base else 0
        heading = f"**`{entry.name}`**" + (f": the parameters of `{base}`, and" if base else "")
        lines = [heading, "", "| parameter | default | takes | what |", "| --- | --- | --- | --- |"]
        for name in names[skip:]:
            spec = specs[name]
            cells = (
                f"`{name}`",
                f"`{spec.shown_default()}`",
                _cell(spec.takes()),
                _cell(spec.help),
            )
            lines.append("| " + " | ".join(cells) + " |")
        blocks.append("\n".join(lines))
        shown.append((entry.name, names))
    return "\n\n".join(blocks)


def render(markdown: str) -> str:
    """The page with the parameter tables where MARKER stands."""
    if MARKER not in markdown:
        raise RuntimeError(f"docs/{PAGE} lost its line {MARKER}")
    return markdown.replace(MARKER, tables())


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    return render(markdown) if page.file.src_uri == PAGE else markdown
