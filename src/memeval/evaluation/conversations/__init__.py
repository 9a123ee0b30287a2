"""The conversation benchmarks: LoCoMo, LongMemEval, their text overlap and grounding, label check."""
