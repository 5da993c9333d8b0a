"""python -m train [--preset dry-run|cpu|full] [flags]: see train/config.py, or --help."""

from train.config import parse_args
from train.trainer import Trainer

if __name__ == "__main__":
    Trainer(parse_args()).run()
