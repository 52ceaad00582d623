"""Benchmarks: they print figures and write JSON reports; they are not tests (see BENCH.md)."""
