"""Base class of force elements.

A force element contributes ``-Q`` to the residual ``M a - Q + Phi_q^T lambda``
together with ``dr/dq`` and ``dr/dv``; conservative parts report their
potential energy, dissipative and external parts their power (for the energy
balance of Huston & Liu 2005).
"""
from __future__ import annotations

import itertools

from .. import checks

_counter = itertools.count()


class ForceElement:
    """Base class of force elements (loads, springs, motors, crash elements, contacts): a name and the
    bodies it acts on; its group evaluates all instances of one kind together (DESIGN §6)."""

    kind = "force"

    def __init__(self, name: str | None = None):
        self.name = checks.name(name, self.kind) if name is not None else f"{self.kind}{next(_counter)}"

    @property
    def owner(self) -> str:
        """``'<kind> <name>'``, the element as named in error messages."""
        return f"{self.kind} {self.name!r}"

    @property
    def bodies(self) -> tuple:
        """The bodies this element acts on (membership checks of ``System``)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
