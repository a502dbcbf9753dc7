"""Integrators, Newton iteration, static equilibrium and linear-algebra backends."""
