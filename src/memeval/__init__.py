"""memeval: a reproducible comparison framework for long-narrative and long-conversation memory.

One namespace for the framework's packages (model_access, datasets, methods, evaluation, harness,
cli); plugins register through the `memeval.methods` and `memeval.datasets` entry points
(docs/PLUGINS.md).
"""

__version__ = "0.2.0"
