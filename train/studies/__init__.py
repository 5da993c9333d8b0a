"""Studies of trained models, each recorded in its card (the section: shipping/card_sections/)."""
