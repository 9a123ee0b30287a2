"""SEEM: Structured Episodic Event Memory (event frames, associative fusion, a graph layer,
hybrid retrieval and Reverse Provenance Expansion). See README.md in this folder."""
