"""`gharuntime predict`'s product code, apart from the reference methods it runs: a workflow
file expanded into its jobs and predicted (`workflow`), each job's timeout and range
(`timeout`), a change reviewed against its base (`review`), its renamed and moved jobs paired
(`moves`, by what their steps run: `steps`), a learned model folder (`learned`), a
repository's own history matched to a job (`history`) and picked for each job, an expression
matrix expanded from it (`history_jobs`), and how each is shown (`render` for a prediction,
`render_review` for a review: tables and lines, Markdown, JSON; the command prints them).
Prices live in `gharuntime.billing`."""

__all__: list[str] = []
