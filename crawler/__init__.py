"""gharuntime.crawler: collect GitHub Actions runs, jobs, workflow YAML and logs into a raw store."""

__all__: list[str] = []
