"""`gharuntime predict`'s product code, apart from the reference methods it runs: a workflow
file expanded into its jobs and predicted (`workflow`), each job's timeout and range
(`timeout`), a change reviewed against its base (`review`), a learned model folder
(`learned`) and a repository's own history matched to a job (`history`). Prices live in
`gharuntime.billing`."""

__all__: list[str] = []
