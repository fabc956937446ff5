"""Readers for every input kind: each returns canonical rows plus quarantined records."""
