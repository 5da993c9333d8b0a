"""Decoding: from a model's next-token scores to a translation, by greedy search or by beam search
with the GNMT length penalty (search.py), on any model that offers the small interface the
searches declare (decoder.py): the readable Transformer and the fast engine both do."""
