"""The results explorer: a static site (index.html + its data files) built from run folders only.

Every question, every method, side by side: an overview (the comparison table with health marks,
the judge-sensitivity matrix where one was made, Vega-Lite charts), a question table one can
filter ("GSW right, Embedding RAG wrong") and a page per question (the context each method sent
with its gold units highlighted, the answer, each judge's credit and why; two chosen methods side
by side). URLs name methods (`a=embedding_rag`), a picker chooses the methods shown (by default
the question table's columns that fit the window), runs that failed a health check are marked and
can be hidden, each page explains its marks, and every ± is the report's bootstrap std. No server and no CDN:
the charting library is bundled into the output, so the site opens from file:// as it is.
`memeval explore RUN_DIR... --out DIR` (cli/explore.py).
"""

from .site import ExploreError, build_site

__all__ = ["ExploreError", "build_site"]
