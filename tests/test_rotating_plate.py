"""Case ``rotating-plate`` (verification/rotating_beam/plate.py) and its independent Ritz reference.

The quick case must pass; the Ritz solver behind plate_reference.json is checked on its own against
closed forms and the published rotating-beam table (a narrow nu = 0 plate is a beam), so that the
reference does not rest on flexmb in any way.
"""
import numpy as np
import pytest

from verification.rotating_beam import plate as rp

STRIP = dict(aspect=0.05, nu=0.0)     # a narrow plate with nu = 0 bends exactly like a beam


@pytest.fixture(scope="module")
def strip_ritz():
    return rp.RitzPlate(8, 4, STRIP["nu"], aspect=STRIP["aspect"])


def test_rotating_plate_quick_passes():
    r = rp.rotating_plate(quick=True)
    failed = [(c.metric, c.value, c.reference, c.tolerance) for c in r.checks if not c.passed]
    assert r.passed, failed
    metrics = {c.metric for c in r.checks}
    assert {"strip_f1_g10", "plate_yaxis_f1_g10", "plate_zaxis_f4_g10", "plate_f2_g0", "plate_yaxis_ratio_err_max",
            "plate_mesh_change_max", "ritz_below_leissa"} <= metrics
    for c in r.checks:   # every compared value carries its reference
        assert c.tolerance.split()[0] in ("rel", "abs", "max", "true")
        if c.tolerance.startswith(("rel", "abs")):
            assert c.reference is not None
    assert r.notes and r.source and r.figures


def test_ritz_beam_limit_matches_published_table(strip_ritz):
    """Flapwise (spin about the plate normal): Hamza-Cherif & Houmat (2004) Table 2 to its 5 digits."""
    table = rp.STRIP_TABLE
    lam = rp.ritz_frequencies(strip_ritz, "zaxis", list(table), beta=1e6, count=1)[:, 0]
    np.testing.assert_allclose(lam, list(table.values()), rtol=3e-5)


def test_ritz_southwell_coefficient(strip_ritz):
    """d(lambda^2)/d(gamma^2) at gamma = 0, phi^T G phi of the mass-normalized first mode, is the beam's
    Southwell coefficient 1.193336 (docs/theory-stiffening.md section 6) flapwise, and 0.193336 with the
    spin axis in the plate (the deflection is then in the plane of rotation: spin softening -1)."""
    lam, V = rp.sla.eigh(strip_ritz.Kb, strip_ritz.Mw)
    phi = V[:, 0]
    Gz = strip_ritz.geometric_stiffness(strip_ritz.prestress("zaxis"))
    Gy = strip_ritz.geometric_stiffness(strip_ritz.prestress("yaxis")) - strip_ritz.Mw
    assert np.sqrt(lam[0]) == pytest.approx(1.87510407**2, rel=1e-7)
    assert phi @ Gz @ phi == pytest.approx(1.193336, rel=1e-5)
    assert phi @ Gy @ phi == pytest.approx(0.193336, rel=5e-5)


def test_ritz_prestress_of_a_strip_is_the_beams(strip_ritz):
    """nu = 0, spin axis in the plate: N_x = (1 - x^2)/2 per unit gamma^2 (cubic u: exact), N_y = N_xy = 0."""
    Nx, Ny, Nxy = strip_ritz.prestress("yaxis")
    np.testing.assert_allclose(Nx, (1.0 - strip_ritz.X**2) / 2.0, atol=1e-10)
    assert np.abs(Ny).max() < 1e-10 and np.abs(Nxy).max() < 1e-10


def test_ritz_coriolis_solver_reduces_to_symmetric_problem():
    """With a very stiff membrane the gyroscopic coupling vanishes (shift ~ 1/beta): the first-order
    solver then returns the symmetric solver's frequencies; at the plate's beta it lowers them."""
    plate = rp.RitzPlate(6, 4, 0.3)
    gam = [0.0, 5.0, 10.0]
    sym = rp.ritz_frequencies(plate, "yaxis", gam, beta=1e12, count=4, coriolis=False)
    gyro = rp.ritz_frequencies(plate, "yaxis", gam, beta=1e12, count=4, coriolis=True)
    np.testing.assert_allclose(gyro, sym, rtol=1e-9)
    soft = rp.ritz_frequencies(plate, "yaxis", gam, beta=1.2e5, count=4, coriolis=True)
    assert np.all(soft[1:] < sym[1:]) and np.allclose(soft[0], sym[0], rtol=1e-9)


def test_reference_file_matches_its_generator():
    """plate_reference.json is what make_reference computes (its finest level, re-run for one speed)."""
    ref = rp.load_reference()
    plate = rp.RitzPlate(14, 10, rp.NU_PLATE)
    lam = rp.ritz_frequencies(plate, "zaxis", [ref["gamma"][-1]], beta=1.2e5, count=5)[0]
    np.testing.assert_allclose(lam, ref["zaxis"][-1], rtol=1e-6)
    assert max(ref["uncertainty_rel"].values()) < 1e-4
    assert ref["strip_published"]["lambda1"] == list(rp.STRIP_TABLE.values())
