"""Environments: what the world shows and how it answers (never sees the policy)."""
