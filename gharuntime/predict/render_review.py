"""How a review of a workflow change is shown: a table per workflow reviewed with its counts,
deltas and noise below it, the Markdown (gharuntime.predict.review's, plus where the waits come
from) and the `--json` document. Nothing here prints: the command prints the blocks."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.table import Table

from gharuntime.markdown import md
from gharuntime.predict.render import Block, wait_document
from gharuntime.predict.request import PredictOutcome
from gharuntime.predict.review import (
    ChangeReview,
    WorkflowReview,
    base_words,
    billing_words,
    deltas_line,
    noise_line,
    review_markdown,
    signed_seconds,
    signed_usd,
    unseen_steps_line,
    wait_words,
)
from gharuntime.predict.wait import WAIT_TARGET
from gharuntime.predict.workflow import FLAG_WORDS, FLAGS, human_seconds

__all__ = ["review_blocks", "review_json", "review_markdown_text"]

_human = human_seconds


def _review_table(review: WorkflowReview, base: str) -> Table:
    title = f"{review.new.path} against {base}"
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for name, justify in (
        ("job", "left"),
        ("change", "left"),
        ("basis", "left"),
        ("before", "right"),
        ("after", "right"),
        ("Δ time", "right"),
        *((("wait before", "right"), ("wait after", "right")) if review.clock else ()),
        ("Δ cost", "right"),
    ):
        table.add_column(name, justify=justify)
    for j in review.jobs:
        if j.status == "unchanged":
            continue
        before = _human(j.before.predicted.get("duration_s", 0.0)) if j.before else "—"
        after = _human(j.after.predicted.get("duration_s", 0.0)) if j.after else "—"
        usd = (j.cost_after.point.cost_usd if j.cost_after and j.cost_after.point else 0.0) - (
            j.cost_before.point.cost_usd if j.cost_before and j.cost_before.point else 0.0
        )
        table.add_row(
            j.label,
            j.status,
            f"{j.basis}, old steps" if j.unseen_steps else j.basis,
            before,
            after,
            signed_seconds(j.delta_s),
            *((wait_words(j.before), wait_words(j.after)) if review.clock else ()),
            signed_usd(usd),
        )
    return table


def _review_wait_line(outcome: PredictOutcome) -> str:
    """Where a review's waits come from and the queue at --at, or ""."""
    if not outcome.wait_from:
        return ""
    queue = outcome.queue
    return f"Each job's wait ({WAIT_TARGET}) from {outcome.wait_from}" + (
        f"; the queue at --at: {queue.words}." if queue is not None else "."
    )


def review_json(change: ChangeReview, outcome: PredictOutcome) -> dict[str, Any]:
    """The review's own JSON, with where its waits come from."""
    doc = change.to_json()
    doc["wait"] = wait_document(outcome)["wait"]
    return doc


def review_markdown_text(change: ChangeReview, outcome: PredictOutcome) -> str:
    """The review's Markdown, then where its waits come from (escaped)."""
    line = _review_wait_line(outcome)
    return review_markdown(change) + (f"\n{md(line)}\n" if line else "")


def review_blocks(change: ChangeReview, outcome: PredictOutcome) -> list[Block]:
    """What the review shows in a terminal: per workflow a table of the jobs that changed, its
    counts, deltas, noise and flags; then the billing, the waits and the verdict."""
    base = base_words(change.base)
    blocks: list[Block] = [f"{change.workflow} against {base}: {change.shown_words()}"]
    for review in change.reviews:
        blocks.append(_review_table(review, base))
        counts = review.counts()
        bases = ", ".join(f"{n} {b}" for b, n in review.bases().items())
        blocks.append(
            f"{counts['added']} added, {counts['removed']} removed, "
            + (f"{counts['moved']} moved, " if counts["moved"] else "")
            + f"{counts['changed']} changed, {counts['unchanged']} unchanged; basis: "
            f"{bases or 'no job'}"
        )
        if review.unseen_steps:
            blocks.append(unseen_steps_line(review.unseen_steps))
        blocks.append(deltas_line(review, ""))
        blocks.append(noise_line(review))
        for flag, n in review.new.flagged.items():
            blocks.append(f"{n} job(s) {FLAG_WORDS[flag]}: {FLAGS[flag]}")
    if change.billing:
        blocks.append(billing_words(change.billing))
    wait_line = _review_wait_line(outcome)
    if wait_line:
        blocks.append(wait_line)
    blocks.append(
        f"beyond the noise: {'yes' if change.beyond_noise else 'no'} "
        f"(threshold {change.threshold:g})"
    )
    return blocks
