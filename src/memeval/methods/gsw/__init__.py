"""GSW, the Generative Semantic Workspace (Operator + Reconciler + entity-summary QA)."""
