"""Observation consolidation: a background worker that turns new facts into observations."""
