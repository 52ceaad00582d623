"""Offline models, loaded lazily from installed packages: embedder, tokenizer, spaCy."""
