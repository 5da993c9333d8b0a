"""The model: the paper's Transformer (transformer.py, the reference, written to be read), its
hyper-parameters (config.py: the paper's by default, and what models trained elsewhere need), the
keys and values a decoder keeps between steps (kv_cache.py), dropout (dropout.py) and a faster
runner of the same weights for decoding (engine.py)."""
