"""LASER: a language model reads a job's serialized configuration and writes its targets.

Import-light on purpose: importing this package (or `encoding`, `serialize`) pulls in no torch or
transformers; the modules that need them (`decoding`, `bench`, models and training) import them
themselves, so the core keeps working without the `laser` extra.
"""

__all__: list[str] = []
