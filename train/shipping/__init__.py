"""Shipping a trained model: its scores, its card, its head survey, a blend, an export."""
