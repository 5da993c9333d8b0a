"""Decoding: from a model's next-token scores to a translation, by greedy search or by beam search
with the GNMT length penalty (search.py)."""
