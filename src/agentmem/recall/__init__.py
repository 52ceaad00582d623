"""Recall: strategies → fuse (RRF) → rerank → composite score → token budget."""
