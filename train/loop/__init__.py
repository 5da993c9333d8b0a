"""The training run: its configuration, its folder, the loop and its parts, the final model."""
