"""Small runnable examples (``python -m verification.examples.<name>``)."""
