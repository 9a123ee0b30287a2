"""The results explorer: a static site (index.html + its data files) built from run folders only.

Every question, every method, side by side: an overview (the comparison table with health marks,
the judge-sensitivity matrix where one was made, Vega-Lite charts), a question table one can
filter ("GSW right, Embedding RAG wrong") and a page per question (the context each method sent
with its gold units highlighted, the answer, each judge's credit and why). No server and no CDN:
the charting library is bundled into the output, so the site opens from file:// as it is.
`memeval explore RUN_DIR... --out DIR` (cli/explore.py) or `python -m evaluation.explore`.
"""

from .site import ExploreError, build_site

__all__ = ["ExploreError", "build_site"]
