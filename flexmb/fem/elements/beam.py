"""Two-node 3D Timoshenko / Euler-Bernoulli beam (docs/theory-elements.md §4).

Local frame (rows of ``R``, global components): ``x`` from node 0 to node 1, ``z``
the part of the section orientation vector perpendicular to ``x``, ``y = z x x``.
Local dofs per node: ``(u, v, w, theta_x, theta_y, theta_z)``; element dofs are
node-major and in global axes outside this module (``u_local = R u_global``).

Bending in the x-y plane (``v, theta_z``, with ``theta_z = v'`` in the
Euler-Bernoulli limit) uses ``E Iz`` and the shear factor ``ky``; bending in the
x-z plane (``w, theta_y``, ``theta_y = -w'``) uses ``E Iy`` and ``kz``. Both planes
share one "standard plane" implementation, the x-z plane through the sign change
``S = diag(1, -1, 1, -1)`` on ``(w1, theta_y1, w2, theta_y2)`` (theory eq. 4.4).
The shape functions are those of the exact two-node Timoshenko element, so an
infinite shear factor (``Phi = 0``) gives the Euler-Bernoulli element.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from flexmb.errors import MeshError, ModelError
from flexmb.fem.elements.base import ElementKernel, ElementProperties, register_kernel

SECTION_FORCES = ("N", "Vy", "Vz", "T", "My", "Mz")
"""Order of the beam section forces (N, N, N, N m, N m, N m)."""

_PLANE_XY = np.array([1, 5, 7, 11])        # v1, theta_z1, v2, theta_z2
_PLANE_XZ = np.array([2, 4, 8, 10])        # w1, theta_y1, w2, theta_y2
_XZ_SIGN = np.array([1.0, -1.0, 1.0, -1.0])
_AXIAL = np.array([0, 6])
_TORSION = np.array([3, 9])
_BAR = np.array([[1.0, -1.0], [-1.0, 1.0]])
_BAR_MASS = np.array([[2.0, 1.0], [1.0, 2.0]]) / 6.0
_GAUSS_X, _GAUSS_W = np.polynomial.legendre.leggauss(4)   # exact to degree 7 on [-1, 1]


def beam_frames(X: np.ndarray, orientation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lengths (ne,) in m and local frames (ne, 3, 3), rows ``x, y, z`` (theory eq. 4.1).

    Raises MeshError for zero-length elements and for elements parallel to their orientation.
    """
    d = X[:, 1] - X[:, 0]
    L = np.linalg.norm(d, axis=1)
    scale = max(float(np.ptp(X.reshape(-1, 3), axis=0).max()), np.finfo(float).tiny)
    bad = np.flatnonzero(L <= 1e-12 * scale)
    if bad.size:
        raise MeshError(f"line elements {bad[:10].tolist()} have zero length")
    ex = d / L[:, None]
    o = orientation / np.linalg.norm(orientation, axis=1)[:, None]
    ez = o - np.sum(o * ex, axis=1)[:, None] * ex
    nz = np.linalg.norm(ez, axis=1)
    bad = np.flatnonzero(nz <= 1e-8)
    if bad.size:
        raise MeshError(f"line elements {bad[:10].tolist()} are parallel to their section orientation "
                        f"vector {orientation[bad[0]].tolist()}; give BeamSection(orientation=...) a vector "
                        f"that is not along the beam axis")
    ez /= nz[:, None]
    return L, np.stack([ex, np.cross(ez, ex), ez], axis=1)


def plane_stiffness(EI: np.ndarray, L: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """Bending stiffness (ne, 4, 4) of the exact Timoshenko element, dofs ``(v1, th1, v2, th2)``.

    ``EI / ((1 + Phi) L^3) [[12, 6L, -12, 6L], [6L, (4+Phi)L^2, -6L, (2-Phi)L^2], ...]``
    (Przemieniecki 1968, *Theory of Matrix Structural Analysis*, ch. 5; theory eq. 4.6).
    """
    c = EI / ((1.0 + phi) * L**3)
    a, b = (4.0 + phi) * L**2, (2.0 - phi) * L**2
    s = 6.0 * L
    one = np.ones_like(L)
    K = np.stack([np.stack([12 * one, s, -12 * one, s], -1),
                  np.stack([s, a, -s, b], -1),
                  np.stack([-12 * one, -s, 12 * one, -s], -1),
                  np.stack([s, b, -s, a], -1)], axis=1)
    return K * c[:, None, None]


def plane_shape_functions(L: np.ndarray, phi: np.ndarray, xi: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact Timoshenko interpolation at ``xi = x / L`` (theory eq. 4.3).

    Returns ``N_v``, ``dN_v/dx`` and ``N_theta``, each (ne, q, 4) for dofs ``(v1, th1, v2, th2)``
    (Friedman & Kosmatka 1993, Comput. Struct. 47:473-481).
    """
    x = xi[None, :]
    Lq = L[:, None]
    p = phi[:, None]
    c = 1.0 / (1.0 + p)
    Nv = np.stack([1 - 3 * x**2 + 2 * x**3 + p * (1 - x),
                   Lq * (x - 2 * x**2 + x**3 + 0.5 * p * (x - x**2)),
                   3 * x**2 - 2 * x**3 + p * x,
                   Lq * (-x**2 + x**3 + 0.5 * p * (x**2 - x))], axis=-1) * c[..., None]
    dNv = np.stack([(-6 * x + 6 * x**2 - p) / Lq,
                    1 - 4 * x + 3 * x**2 + 0.5 * p * (1 - 2 * x),
                    (6 * x - 6 * x**2 + p) / Lq,
                    -2 * x + 3 * x**2 + 0.5 * p * (2 * x - 1)], axis=-1) * c[..., None]
    Nt = np.stack([6 * (x**2 - x) / Lq,
                   1 - 4 * x + 3 * x**2 + p * (1 - x),
                   -6 * (x**2 - x) / Lq,
                   -2 * x + 3 * x**2 + p * x], axis=-1) * c[..., None]
    return Nv, dNv, Nt


def _integrate(A: np.ndarray, B: np.ndarray, L: np.ndarray) -> np.ndarray:
    """``int_0^L A^T B dx`` for (ne, q, 4) fields sampled at the 4-point Gauss abscissae."""
    return np.einsum("eqi,eqj,q->eij", A, B, 0.5 * _GAUSS_W) * L[:, None, None]


def plane_mass(rhoA: np.ndarray, rhoI: np.ndarray, L: np.ndarray, phi: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Translational and rotary consistent mass (ne, 4, 4) of one bending plane (theory eq. 4.7).

    ``rho A int N_v^T N_v dx`` and ``rho I int N_theta^T N_theta dx`` by 4-point Gauss quadrature
    (exact: the integrands are polynomials of degree 6).
    """
    Nv, _, Nt = plane_shape_functions(L, phi, 0.5 * (_GAUSS_X + 1.0))
    return _integrate(Nv, Nv, L) * rhoA[:, None, None], _integrate(Nt, Nt, L) * rhoI[:, None, None]


def plane_geometric(N: np.ndarray, L: np.ndarray, phi: np.ndarray) -> np.ndarray:
    """Geometric stiffness ``N int N_v'^T N_v' dx`` (ne, 4, 4) of one bending plane (theory eq. 4.9).

    For ``Phi = 0``: ``N / (30 L) [[36, 3L, -36, 3L], [3L, 4L^2, -3L, -L^2], ...]``
    (Przemieniecki 1968; Cook et al. 2002, *Concepts and Applications of FEA*, 4th ed., ch. 18).
    """
    _, dNv, _ = plane_shape_functions(L, phi, 0.5 * (_GAUSS_X + 1.0))
    return _integrate(dNv, dNv, L) * N[:, None, None]


def _place(out: np.ndarray, idx: np.ndarray, block: np.ndarray, sign: np.ndarray | None = None) -> None:
    """Add ``block`` (ne, k, k) into ``out`` (ne, 12, 12) at dofs ``idx``, optionally as ``S block S``."""
    if sign is not None:
        block = block * sign[None, :, None] * sign[None, None, :]
    out[:, idx[:, None], idx[None, :]] += block


def _bar(value: np.ndarray, pattern: np.ndarray) -> np.ndarray:
    """Two-node bar matrices ``value[e] * pattern`` (ne, 2, 2)."""
    return value[:, None, None] * pattern[None]


@register_kernel
class Beam2(ElementKernel):
    """Two-node 3D beam, Timoshenko (``Phi = 12 EI / (k G A L^2)``) or Euler-Bernoulli (k = inf).

    The properties must carry a :class:`~flexmb.fem.sections.SectionArrays`. Per-element
    data: ``L`` (ne,) in m, ``R`` (ne, 3, 3) local frames, ``phi_y`` / ``phi_z`` the shear
    parameters of the x-y / x-z bending planes.
    """

    cell_type = "line"
    kind = "beam"
    nodes_per_element = 2
    components = (0, 1, 2, 3, 4, 5)

    def __init__(self, X: np.ndarray, props: ElementProperties, **options: Any) -> None:
        super().__init__(X, props, **options)
        sec = props.section
        if sec is None:
            raise ModelError("line (beam) elements need a BeamSection")
        if len(sec) != self.n_elements:
            raise ModelError(f"line: {len(sec)} sections for {self.n_elements} elements")
        self.L, self.R = beam_frames(self.X, sec.orientation)
        GA = props.G * sec.A
        self.phi_y = 12.0 * props.E * sec.Iz / (sec.ky * GA * self.L**2)
        self.phi_z = 12.0 * props.E * sec.Iy / (sec.kz * GA * self.L**2)

    # -- local matrices -------------------------------------------------------------------------
    def local_stiffness(self) -> np.ndarray:
        """Stiffness (ne, 12, 12) in local axes (theory eqs. 4.5-4.6)."""
        p, s, L = self.props, self.props.section, self.L
        K = np.zeros((self.n_elements, 12, 12))
        _place(K, _AXIAL, _bar(p.E * s.A / L, _BAR))
        _place(K, _TORSION, _bar(p.G * s.J / L, _BAR))
        _place(K, _PLANE_XY, plane_stiffness(p.E * s.Iz, L, self.phi_y))
        _place(K, _PLANE_XZ, plane_stiffness(p.E * s.Iy, L, self.phi_z), _XZ_SIGN)
        return K

    def local_mass(self, lumped: bool = False) -> np.ndarray:
        """Mass (ne, 12, 12) in local axes: translational + rotary inertia (theory eqs. 4.7-4.8)."""
        p, s, L = self.props, self.props.section, self.L
        rho = p.rho
        Iy, Iz = s.rotary * s.Iy, s.rotary * s.Iz          # bending rotary inertia (theory eq. 4.7)
        Ty, Ry = plane_mass(rho * s.A, rho * Iz, L, self.phi_y)
        Tz, Rz = plane_mass(rho * s.A, rho * Iy, L, self.phi_z)
        if lumped:
            return self._lumped_mass(Ty, Tz, rho * Iy * L, rho * Iz * L)
        M = np.zeros((self.n_elements, 12, 12))
        _place(M, _AXIAL, _bar(rho * s.A * L, _BAR_MASS))
        _place(M, _TORSION, _bar(rho * (s.Iy + s.Iz) * L, _BAR_MASS))
        _place(M, _PLANE_XY, Ty + Ry)
        _place(M, _PLANE_XZ, Tz + Rz, _XZ_SIGN)
        return M

    def _lumped_mass(self, Ty: np.ndarray, Tz: np.ndarray, rotary_y: np.ndarray, rotary_z: np.ndarray
                     ) -> np.ndarray:
        """Diagonal local mass (theory eq. 4.8): m/2 per translation, HRZ on the bending rotations.

        ``Ty``, ``Tz``: translational consistent plane matrices; ``rotary_y/z``: total rotary
        inertia ``rho I L`` of bending about y and z (0 for Euler-Bernoulli).
        """
        s, L = self.props.section, self.L
        m = self.props.rho * s.A * L
        diag = np.empty((self.n_elements, 6))
        diag[:, :3] = 0.5 * m[:, None]
        diag[:, 3] = 0.5 * self.props.rho * (s.Iy + s.Iz) * L
        diag[:, 4] = 0.5 * m * Tz[:, 1, 1] / Tz[:, 0, 0] + 0.5 * rotary_y
        diag[:, 5] = 0.5 * m * Ty[:, 1, 1] / Ty[:, 0, 0] + 0.5 * rotary_z
        M = np.zeros((self.n_elements, 12, 12))
        idx = np.arange(12)
        M[:, idx, idx] = np.tile(diag, 2)
        return M

    def local_geometric_stiffness(self, N: np.ndarray) -> np.ndarray:
        """Geometric stiffness (ne, 12, 12) in local axes for axial forces ``N`` (ne,), tension > 0.

        Bending planes ``N int N_v'^T N_v' dx`` and the torsional term ``N Ip / (A L) B``
        (theory eq. 4.9); end moments and shear forces are not included.
        """
        s, L = self.props.section, self.L
        K = np.zeros((self.n_elements, 12, 12))
        _place(K, _TORSION, _bar(N * (s.Iy + s.Iz) / (s.A * L), _BAR))
        _place(K, _PLANE_XY, plane_geometric(N, L, self.phi_y))
        _place(K, _PLANE_XZ, plane_geometric(N, L, self.phi_z), _XZ_SIGN)
        return K

    # -- global interface -----------------------------------------------------------------------
    def _to_global(self, A: np.ndarray) -> np.ndarray:
        """``T^T A T`` with ``T = diag(R, R, R, R)`` (theory eq. 4.10)."""
        A4 = A.reshape(-1, 4, 3, 4, 3)
        return np.einsum("eki,eakbl,elj->eaibj", self.R, A4, self.R, optimize=True).reshape(-1, 12, 12)

    def _to_local(self, u_e: np.ndarray) -> np.ndarray:
        """Element dofs (ne, 12) from global to local components."""
        u_e = np.asarray(u_e, dtype=float)
        if u_e.shape != (self.n_elements, 12):
            raise ModelError(f"line displacements must have shape {(self.n_elements, 12)}, got {u_e.shape}")
        return np.einsum("eij,eaj->eai", self.R, u_e.reshape(-1, 4, 3)).reshape(-1, 12)

    def stiffness(self) -> np.ndarray:
        """Stiffness (ne, 12, 12) in global axes, N/m, N, N m."""
        return self._to_global(self.local_stiffness())

    def mass(self, lumped: bool = False) -> np.ndarray:
        """Consistent (or lumped, theory eq. 4.8) mass (ne, 12, 12) in global axes, kg, kg m^2."""
        return self._to_global(self.local_mass(lumped))

    def translational_mass(self) -> np.ndarray:
        """``int rho A N_i^T N_j dx`` (ne, 3, 3, 12, 12) for global components i, j of the
        interpolated displacement field ``N d`` (axial linear, bending by the exact Timoshenko
        functions; theory eq. 4.3), kg. The inertia invariants' second-order terms need these
        component products; their sum over i = j is the consistent translational mass."""
        xi = 0.5 * (_GAUSS_X + 1.0)
        w = 0.5 * _GAUSS_W
        ne, q = self.n_elements, xi.size
        N = np.zeros((ne, q, 3, 12))
        N[:, :, 0, _AXIAL[0]] = 1.0 - xi
        N[:, :, 0, _AXIAL[1]] = xi
        N[:, :, 1, _PLANE_XY] = plane_shape_functions(self.L, self.phi_y, xi)[0]
        N[:, :, 2, _PLANE_XZ] = plane_shape_functions(self.L, self.phi_z, xi)[0] * _XZ_SIGN
        Ng = np.einsum("eri,eqrc->eqic", self.R, N)                                    # rows: global components
        Ng = np.einsum("eqiak,ekj->eqiaj", Ng.reshape(ne, q, 3, 4, 3), self.R).reshape(ne, q, 3, 12)
        line_mass = self.props.rho * self.props.section.A * self.L
        return np.einsum("e,q,eqic,eqjd->eijcd", line_mass, w, Ng, Ng)

    def stress(self, u_e: np.ndarray) -> np.ndarray:
        """Section forces (ne, 2, 6) ``(N, Vy, Vz, T, My, Mz)`` at node 0 and node 1, local axes.

        Forces on the cut face whose outward normal is +x: ``-f_0`` at node 0 and ``f_1`` at
        node 1, with ``f = K_local u_local`` the element end forces (theory eq. 4.11).
        """
        f = np.einsum("eij,ej->ei", self.local_stiffness(), self._to_local(u_e)).reshape(-1, 2, 6)
        f[:, 0] *= -1.0
        return f

    def nodal_stress(self, u_e: np.ndarray) -> np.ndarray:
        """Section forces (ne, 2, 6) at the element nodes (same as :meth:`stress`)."""
        return self.stress(u_e)

    def geometric_stiffness(self, state: np.ndarray) -> np.ndarray:
        """Geometric stiffness (ne, 12, 12) in global axes from section forces.

        ``state``: (ne, 2, 6) section forces as from :meth:`stress` (the axial force is the mean
        of the two ends) or (ne,) axial forces, N, tension positive.
        """
        s = np.asarray(state, dtype=float)
        if s.shape == (self.n_elements, 2, 6):
            N = s[:, :, 0].mean(axis=1)
        elif s.shape == (self.n_elements,):
            N = s
        else:
            raise ModelError(f"line stress state must have shape {(self.n_elements, 2, 6)} or "
                             f"{(self.n_elements,)}, got {s.shape}")
        return self._to_global(self.local_geometric_stiffness(N))
