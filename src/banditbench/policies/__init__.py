"""Policies: one module per algorithm family, plus shared building blocks."""
