"""The error a person can fix: what they typed, or the folder they pointed the lab at."""


class InputError(ValueError):
    """Text that cannot be translated, decoding settings that cannot be used, or a folder that is
    not a model directory; the message is meant for the person who gave them."""
