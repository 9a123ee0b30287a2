"""Result bundles: run folders, the model calls behind them, a manifest and the report, re-derivable
at zero cost (`memeval bundle export|verify|import`; format in docs/RESULT_BUNDLES.md).

`export.py` and `verify.py` replay runs through the harness (`rerun.py`: harness.pipeline inside
harness.replay), so they are commands above it; the bundle's file formats (manifest, README)
live in evaluation/bundle/. `command.py` is the argument parser; verify's progress lines, environment
announcement and Ctrl-C are in `watch.py`, its `--run` selection and resume record in `verify_state.py`.
"""
