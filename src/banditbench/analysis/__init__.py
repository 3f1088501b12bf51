"""Aggregation of per-job results into tables, and plots."""
