"""What tests/train/test_distributed.py runs under torchrun: `python -m train`, then every rank
saves the weights it ended with, so that the test can compare the ranks. Not a test itself."""

import os
import sys

import torch

from train.loop.config import parse_args
from train.loop.trainer import Trainer

if __name__ == "__main__":
    trainer = Trainer(parse_args(sys.argv[1:]))
    trainer.run()
    weights = trainer.config.run_dir / f"weights_rank{os.environ['RANK']}.pt"
    torch.save(trainer.model.state_dict(), weights)
