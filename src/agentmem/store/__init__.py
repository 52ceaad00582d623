"""Storage adapters: DuckDB (system of record + BM25) and Chroma (vectors)."""
