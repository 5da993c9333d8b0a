"""Files: the model directory and every file in it (model_dir.py), model files (checkpoint.py),
the training log (metrics_log.py) and MarianMT checkpoints read as the lab's Transformer
(marian.py)."""
