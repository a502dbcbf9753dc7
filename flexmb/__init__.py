"""flexmb: flexible multibody dynamics."""
__version__ = "0.1.0"
