"""python -m train [--preset dry-run|cpu|full] [flags]: see train/config.py, or --help."""

import sys

from core.errors import InputError
from core.files.checkpoint import CheckpointError
from train.checkpoints import ResumeConflict
from train.config import parse_args
from train.data import CorpusError
from train.run_folder import ForeignFolder
from train.trainer import Trainer

if __name__ == "__main__":
    try:
        Trainer(parse_args()).run()
    except (CorpusError, CheckpointError, ResumeConflict, ForeignFolder, InputError) as error:
        sys.exit(f"error: {error}")  # not bugs
