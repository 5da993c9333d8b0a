"""Imported by Python at start-up when this folder is on the path (train/loop/environment.py): the
packages named in $ATTENTION_LAB_BLOCKED_IMPORTS cannot be imported, as on a machine that lacks
them."""

import importlib.abc
import os
import sys


class Blocked(importlib.abc.MetaPathFinder):
    def __init__(self, names: set[str]) -> None:
        self.names = names

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None


_names = set(filter(None, os.environ.get("ATTENTION_LAB_BLOCKED_IMPORTS", "").split(",")))
if _names:
    sys.meta_path.insert(0, Blocked(_names))
