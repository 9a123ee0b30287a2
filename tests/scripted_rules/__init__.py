"""Prompt rules for the scripted server, one module per method or protocol (each defines RULES)."""
