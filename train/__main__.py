"""python -m train [--preset dry-run|cpu|full] [flags]: see train/loop/config.py, or --help."""

import sys

from core.errors import InputError
from core.files.checkpoint import CheckpointError
from train.data.corpora import CorpusError
from train.loop.checkpoints import ResumeConflict
from train.loop.config import parse_args
from train.loop.run_folder import ForeignFolder
from train.loop.trainer import Trainer

if __name__ == "__main__":
    try:
        Trainer(parse_args()).run()
    except (CorpusError, CheckpointError, ResumeConflict, ForeignFolder, InputError) as error:
        sys.exit(f"error: {error}")  # not bugs
