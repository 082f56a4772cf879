"""Metrics that run a local model or fit a model on the run: BERTScore, LSA, local sentence embeddings."""
