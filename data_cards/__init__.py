"""gharuntime.data_cards: templates for the dataset card the build renders into README.md."""

__all__: list[str] = []
