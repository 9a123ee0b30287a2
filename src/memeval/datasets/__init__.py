"""Benchmark loaders that turn official files into canonical corpora and questions.

Note: this top-level package shadows the HuggingFace `datasets` library; the framework's own
environment never installs that library (tests/test_no_hf_datasets.py checks it).
"""
