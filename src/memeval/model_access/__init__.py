"""One client layer for every model call: chat, embeddings, cache, retries, usage and cost."""
