"""EpBench: protocol, LLM judge, scoring policies, grounding, deterministic matcher, label check."""
