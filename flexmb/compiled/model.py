"""The compiled model: every array the compiled step, the energies and the sparse compiled evaluation read, by name.

One :class:`Model` holds one part per element family (a named tuple of arrays); each family packs its own part
once, from its groups, through the group protocol (``pack_compiled`` of the family's group class, collected by
:func:`flexmb.compiled_model.pack_model`). A part is None when the model lacks the family: numba then leaves that
family's code out of the compile (flexmb/compiled/specialization.py). numba passes a named tuple as all its arrays'
fields and compiles ``part.field`` to the same load as a positional index, so names cost nothing at run time.

Tables that describe groups of a family (one entry per group: sizes and offsets into the family's flat,
concatenated arrays) are named tuples of int64 arrays too (:class:`JointTable`, :class:`MeasureTable`,
:class:`FlexTable`, :class:`MotorTable`): ``table.n[g]`` is the number of instances of group g.

The *block positions* (``pos*`` fields) address the Newton matrix: a dense row-major matrix in the step's
elimination order, or the CSR value array of the model's pattern (flexmb/sparsity.py); they are empty in a model
packed for the energies alone.
"""
from __future__ import annotations

from typing import NamedTuple, Optional

import numpy as np

__all__ = ["Model", "Bodies", "JointTable", "JointKinds", "Joints", "FlexTable", "Flexible", "Normalization",
           "MeasureTable", "Springs", "Contacts", "Loads", "MotorTable", "Motors", "Particles", "Ropes",
           "NonlinearSprings", "BlockSettings", "BlockStart", "BlockInputs", "BlockOutputs", "int_table", "concat", "pack_measures",
           "EMPTY_POSITIONS"]


def int_table(table_type, rows: list) -> NamedTuple:
    """A table of ``table_type`` (a named tuple of int64 arrays) from ``rows``, one tuple of its fields per group."""
    cols = np.array(rows, dtype=np.int64).reshape(-1, len(table_type._fields))
    return table_type(*(np.ascontiguousarray(cols[:, j]) for j in range(cols.shape[1])))


def concat(parts: list, dtype) -> np.ndarray:
    """The arrays concatenated (an empty array of ``dtype`` for none)."""
    return np.ascontiguousarray(np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype))


EMPTY_POSITIONS = np.zeros(0, dtype=np.int64)
"""The block positions of a group in a model packed for its energies alone."""


def pack_measures(groups: list) -> tuple:
    """The measure part that springs and contact pairs share (flexmb/compiled/measures.py): for ``(group, measure
    group, block positions)`` triples, ``(MeasureTable, gather, scatter, vectors, shapes, sides, positions)``,
    all groups concatenated."""
    rows = []
    og = ov = osh = op = opos = 0
    for g, m, _ in groups:
        n, nx = g.gather.shape
        sm = m.shps.shape[3]
        rows.append((g.code, n, nx, m.n_modes[0], m.n_modes[1], sm, og, ov, osh, op, opos))
        og, ov, osh, op, opos = og + n * nx, ov + 12 * n, osh + 12 * n * sm, op + n, opos + n * nx * nx
    return (int_table(MeasureTable, rows), concat([g.gather.reshape(-1) for g, _, _ in groups], np.int64),
            concat([g.scatter.reshape(-1) for g, _, _ in groups], np.int64),
            concat([m.vecs.reshape(-1) for _, m, _ in groups], float),
            concat([m.shps.reshape(-1) for _, m, _ in groups], float),
            np.array([m.sides for _, m, _ in groups], dtype=np.int64).reshape(-1, 4),
            concat([p for _, _, p in groups], np.int64))


class Bodies(NamedTuple):
    """Rigid bodies (flexmb/compiled/rigid.py): coordinate indices (n, 7), mass (kg, n), body-frame inertia
    (kg m^2, n x 3 x 3), gravity (m/s^2, 3) and the positions of their 7 x 7 blocks."""
    idx: np.ndarray
    mass: np.ndarray
    J: np.ndarray
    gravity: np.ndarray
    pos: np.ndarray


class JointTable(NamedTuple):
    """One entry per joint primitive group: its kind (the order of ``flexmb.joints.kernels.ROWS``), instances,
    rows per instance, gathered coordinates per instance, modes of body i, modes of the attachment shapes, its
    offsets in the joints' ``gather``/``scatter``, ``u0``, ``S``, its first instance (its drive block in
    ``drive[3 first:3 (first + n)]``), its first constraint row and its offsets in the flat Jacobian and Hessian."""
    kind: np.ndarray
    n: np.ndarray
    rows: np.ndarray
    nx: np.ndarray
    m_i: np.ndarray
    modes: np.ndarray
    at_gather: np.ndarray
    at_u0: np.ndarray
    at_S: np.ndarray
    first: np.ndarray
    row0: np.ndarray
    at_jac: np.ndarray
    at_hess: np.ndarray


class JointKinds(NamedTuple):
    """Which joint kinds the compiled code holds: 1, or None for a kind no group has in a specialized model (its
    kernels are then not compiled)."""
    point: Optional[int]
    dot1: Optional[int]
    dot2: Optional[int]
    distance: Optional[int]
    angle: Optional[int]
    coordinate: Optional[int]


class Joints(NamedTuple):
    """Joint primitive groups (flexmb/compiled/joints.py), their arrays flat and concatenated group by group:
    gathered and scattered coordinates, attachment vectors ``u0`` (n, 3, 3) and shapes ``S`` (n, 3, 3, modes), the
    drivers' f, f'' and constant (3 n), the positions of the Jacobian, its transpose and the Hessian."""
    table: JointTable
    gather: np.ndarray
    scatter: np.ndarray
    u0: np.ndarray
    S: np.ndarray
    drive: np.ndarray
    pos_jac: np.ndarray
    pos_jacT: np.ndarray
    pos_hess: np.ndarray
    kinds: JointKinds


class FlexTable(NamedTuple):
    """One entry per flexible-body group (flexmb/compiled/flexible.py ``pack``): offset and length of its float,
    int and work buffers and of its rows in the table ``tabs``, its bodies ``n`` and modes ``m``, its offsets in
    ``idx`` and ``pos``."""
    at_f: np.ndarray
    n_f: np.ndarray
    at_i: np.ndarray
    n_i: np.ndarray
    at_w: np.ndarray
    n_w: np.ndarray
    at_tab: np.ndarray
    n_tab: np.ndarray
    n: np.ndarray
    m: np.ndarray
    at_idx: np.ndarray
    at_pos: np.ndarray


class Flexible(NamedTuple):
    """Flexible-body groups: float, int and work buffers, the buffers' table, coordinate indices and block
    positions, all groups concatenated."""
    table: FlexTable
    fdata: np.ndarray
    idata: np.ndarray
    wdata: np.ndarray
    tabs: np.ndarray
    idx: np.ndarray
    pos: np.ndarray


class Normalization(NamedTuple):
    """The Euler-parameter columns of every body (its normalization row follows the joint rows), the positions
    of the rows' Jacobian, its transpose, their Hessian and the diagonal of switched-off rows, and the elimination
    order of the dense Newton matrix (position k holds unknown ``order[k]`` of ``[q, lambda]``; flexible bodies'
    elastic coordinates first, flexmb/solvers/compiled_step.py ``elimination_order``)."""
    cols: np.ndarray
    pos_jac: np.ndarray
    pos_jacT: np.ndarray
    pos_hess: np.ndarray
    pos_D: np.ndarray
    order: np.ndarray


class MeasureTable(NamedTuple):
    """One entry per measure group (springs, contact pairs; flexmb/compiled/measures.py): measure code, instances,
    gathered coordinates per instance, modes of bodies i and j and of the shapes, offsets in ``gather``, ``vec``,
    ``shape``, the first instance (the per-instance arrays) and the offset in ``pos``."""
    code: np.ndarray
    n: np.ndarray
    nx: np.ndarray
    m_i: np.ndarray
    m_j: np.ndarray
    modes: np.ndarray
    at_gather: np.ndarray
    at_vec: np.ndarray
    at_shape: np.ndarray
    first: np.ndarray
    at_pos: np.ndarray


class Springs(NamedTuple):
    """Scalar spring-damper and bushing groups (flexmb/forces/springs.py): measures, per instance stiffness ``k``,
    damping ``c``, free value ``x0`` and the unwrapping reference ``ref`` of angle measures (element history),
    sides (groups x 4) and block positions."""
    table: MeasureTable
    gather: np.ndarray
    scatter: np.ndarray
    vec: np.ndarray
    shape: np.ndarray
    k: np.ndarray
    c: np.ndarray
    x0: np.ndarray
    ref: np.ndarray
    sides: np.ndarray
    pos: np.ndarray


class Contacts(NamedTuple):
    """Contact-pair groups (flexmb/contact/pairs.py): measures and sides, per group the sign, per pair the
    measure offset, the normal law (flexmb/contact/laws.py ``LawTable``: kind, K, n, h, v_min, c;
    user laws through flexmb/compiled/hook.py), block positions; per group whether a pair has friction and the
    friction geometry, per pair the radii (n, 2) and the built-in friction law's kind (-1: none) and parameters
    (n, 3) (flexmb/contact/friction.py ``FrictionTable``). Their approach-speed history is the separate ``dyn``
    argument of the step."""
    table: MeasureTable
    gather: np.ndarray
    scatter: np.ndarray
    vec: np.ndarray
    shape: np.ndarray
    sides: np.ndarray
    sign: np.ndarray
    offset: np.ndarray
    law: np.ndarray
    K: np.ndarray
    n: np.ndarray
    h: np.ndarray
    v_min: np.ndarray
    c: np.ndarray
    pos: np.ndarray
    has_friction: np.ndarray
    geometry: np.ndarray
    radii: np.ndarray
    friction: np.ndarray
    friction_par: np.ndarray


class Loads(NamedTuple):
    """Applied forces and torques (flexmb/forces/applied.py): body coordinates (n, 7), force or torque, body-fixed
    or global, application point (n, 3), the vectors at the current time (n, 3; set before each step) and block
    positions."""
    idx: np.ndarray
    is_force: np.ndarray
    body_fixed: np.ndarray
    s: np.ndarray
    vec: np.ndarray
    pos: np.ndarray


class MotorTable(NamedTuple):
    """One entry per DC-motor group: instances, gathered coordinates per instance, modes of bodies i and j and of
    the shapes, offsets in ``gather``, ``vec``, ``shape``, the first instance and the offset in ``pos`` (the
    scatter of instance-first ``first`` starts at ``at_gather + first``: it has the charge as a last column)."""
    n: np.ndarray
    nx: np.ndarray
    m_i: np.ndarray
    m_j: np.ndarray
    modes: np.ndarray
    at_gather: np.ndarray
    at_vec: np.ndarray
    at_shape: np.ndarray
    first: np.ndarray
    at_pos: np.ndarray


class Motors(NamedTuple):
    """DC motors (flexmb/forces/motor.py): measures and sides, per motor the charge's coordinate, the angle's
    unwrapping reference, torque constant ``K_p`` (N m/A), armature resistance ``r_a`` (ohm), inductance ``L_a``
    (H), damping ``D`` (N m s), the supply voltage at the current time ``V`` (set before each step), block
    positions."""
    table: MotorTable
    gather: np.ndarray
    scatter: np.ndarray
    vec: np.ndarray
    shape: np.ndarray
    sides: np.ndarray
    charge: np.ndarray
    ref: np.ndarray
    K_p: np.ndarray
    r_a: np.ndarray
    L_a: np.ndarray
    D: np.ndarray
    V: np.ndarray
    pos: np.ndarray


class Particles(NamedTuple):
    """Particles, particle links and anchors (flexmb/forces/particles.py): gathers (equal to the scatters),
    masses, gravity and block positions of the particles; gathers, k, c, L0 and positions of the links; gathers,
    points, k, c and positions of the anchors (empty arrays for what a model lacks)."""
    gather: np.ndarray
    mass: np.ndarray
    gravity: np.ndarray
    pos: np.ndarray
    link_gather: np.ndarray
    link_k: np.ndarray
    link_c: np.ndarray
    link_L0: np.ndarray
    link_pos: np.ndarray
    anchor_gather: np.ndarray
    anchor_point: np.ndarray
    anchor_k: np.ndarray
    anchor_c: np.ndarray
    anchor_pos: np.ndarray


class Ropes(NamedTuple):
    """Rope-pulley pairs (flexmb/contact/rope.py ``RopePulleyGroup``): gather and scatter (n, 10), pulley axes (n, 3),
    the second derivatives of A(p) (4, 4, 3, 3), per pair radius, law K, c, exponent, axial k and c, the built-in
    friction law's kind and parameters, block positions."""
    gather: np.ndarray
    scatter: np.ndarray
    axis: np.ndarray
    S: np.ndarray
    R: np.ndarray
    K: np.ndarray
    c: np.ndarray
    n: np.ndarray
    k_a: np.ndarray
    c_a: np.ndarray
    friction: np.ndarray
    friction_par: np.ndarray
    pos: np.ndarray


class NonlinearSprings(NamedTuple):
    """Nonlinear spring-dampers (flexmb/forces/nonlinear_spring.py): their ``length`` measures and sides, per
    instance the free length ``x0`` (m), damping ``c`` (N s/m) and its law's table: ``xs[at:at + size]``
    elongations (m) and ``Fs[at:at + size]`` forces (N), all groups concatenated; block positions."""
    table: MeasureTable
    gather: np.ndarray
    scatter: np.ndarray
    vec: np.ndarray
    shape: np.ndarray
    sides: np.ndarray
    x0: np.ndarray
    c: np.ndarray
    at: np.ndarray
    size: np.ndarray
    xs: np.ndarray
    Fs: np.ndarray
    pos: np.ndarray


class Model(NamedTuple):
    """A compiled model: one part per family (None when a specialized model lacks it) and the rows of driver
    constraints."""
    bodies: Optional[Bodies]
    joints: Optional[Joints]
    flexible: Optional[Flexible]
    norm: Normalization
    springs: Optional[Springs]
    contacts: Optional[Contacts]
    loads: Optional[Loads]
    driver_rows: Optional[np.ndarray]
    motors: Optional[Motors]
    particles: Optional[Particles]
    ropes: Optional[Ropes]
    nonlinear_springs: Optional[NonlinearSprings]


# -- the arguments of a block of steps (flexmb/compiled/blocks.py ``run_block``) --------------------------------
class BlockSettings(NamedTuple):
    """The scalars of a block: at most ``n_steps`` steps of size ``h_b`` (s) (contact blocks: a block ends before
    a step that asks another size); the integrator's nominal and largest step and the contact step (s, used when
    ``use_h_contact``); whether contact onsets are located (``locate``), the contact tolerance (m) and the
    earliest onset worth cutting to (``aim_min``, s); the generalized-alpha parameters ``am``, ``af``, ``beta``,
    ``gamma``; the Newton tolerance, whether the coordinates' absolute tolerances ``q_tol`` apply, the iteration
    limit; whether the energy balance's powers are booked (``energy``) and whether the block takes the
    contact-step decisions (``contact_steps``). Every field has one type (float, int or bool): another type would
    compile the step again."""
    n_steps: int
    h_b: float
    h_nominal: float
    h_max: float
    h_contact: float
    use_h_contact: bool
    locate: bool
    contact_tol: float
    aim_min: float
    am: float
    af: float
    beta: float
    gamma: float
    tol: float
    use_q_tol: bool
    max_iter: int
    energy: bool
    contact_steps: bool


class BlockStart(NamedTuple):
    """The state a block starts from: coordinates, velocities, accelerations, algorithmic accelerations (nq) and
    multipliers (m)."""
    q: np.ndarray
    v: np.ndarray
    vd: np.ndarray
    a: np.ndarray
    lam: np.ndarray


class BlockInputs(NamedTuple):
    """The time inputs of a block's steps, sampled beforehand: end times and sizes of the steps (s), the driven
    instances' places in the joints' ``drive`` (2, d) and their f, f'' at each step (steps, 2, d), the applied
    loads' vectors (steps, loads, 3) and the motors' supply voltages (steps, motors) (empty arrays leave the
    model's own values: a single step sets them in the model)."""
    times: np.ndarray
    sizes: np.ndarray
    driven: np.ndarray
    drive_values: np.ndarray
    load_values: np.ndarray
    voltage_values: np.ndarray


class BlockOutputs(NamedTuple):
    """What a block writes, row k after step k: time, q, v, vd, lambda, non-conservative and driver powers (W),
    the largest |Phi| of rows switched off as redundant, the springs' unwrapping references (rows only for
    models with angle springs or contact pairs) and the contacts' history ``(speed, in_contact, last_rate)``
    (rows only for contact blocks); the last algorithmic acceleration and ``[iterations, factorizations]``."""
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    vd: np.ndarray
    lam: np.ndarray
    p_nc: np.ndarray
    p_drv: np.ndarray
    off: np.ndarray
    sref: np.ndarray
    dyn: np.ndarray
    last_a: np.ndarray
    stats: np.ndarray
