"""The data: corpora read and cleaned, their sources, each epoch's examples, encoded and batched."""
