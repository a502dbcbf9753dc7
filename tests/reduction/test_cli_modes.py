"""``flexmb modes`` command (flexmb/cli.py cmd_modes)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from flexmb.cli import main
from flexmb.fem.materials import Material
from flexmb.fem.mesh import read_mesh
from flexmb.fem.model import FEModel
from flexmb.fem.sections import BeamSection
from flexmb.reduction import ModeSet, normal_modes


def run(capsys, *argv):
    code = main(["modes", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_frequencies_of_the_cantilever(capsys):
    """Defaults: steel, 0.02 m x 0.02 m section; the library's frequencies (1e-10: the CLI reports
    the mode set's reduced eigenvalues, recomputed from its M and K)."""
    code, out, _ = run(capsys, "meshes/beam_line.msh", "--fix", "root", "-n", "4", "--json")
    assert code == 0
    report = json.loads(out)
    model = FEModel(read_mesh("meshes/beam_line.msh"), Material(210e9, 0.3, 7850.0),
                    sections=BeamSection.rectangle(0.02, 0.02))
    ref = normal_modes(model, 4, fixed="root").frequencies_hz
    np.testing.assert_allclose(report["frequencies_hz"], ref, rtol=1e-10)
    assert (report["dofs"], report["fixed"], report["n_modes"], report["rigid_body_modes"]) == (126, "root", 4, 0)
    assert (report["interface_modes"], report["mode_set_size"]) == (0, 4)


def test_text_output_and_mode_set_file(capsys, tmp_path):
    path = tmp_path / "solid.npz"
    code, out, _ = run(capsys, "meshes/beam_solid.msh", "--interface", "root", "--interface", "tip",
                       "--reference", "root", "--connection", "average", "-n", "3", "-o", str(path))
    assert code == 0 and "mode   frequency [Hz]" in out and str(path) in out
    ms = ModeSet.load(path)
    assert ms.n_modes == 9 and list(ms.interfaces) == ["root", "tip"] and ms.stress_modes is not None
    assert ms.interface("tip").connection == "average"


def test_free_free(capsys):
    code, out, _ = run(capsys, "meshes/plate_quad.msh", "-n", "2", "--json")
    report = json.loads(out)
    assert code == 0 and report["rigid_body_modes"] == 6 and report["kind"] == "free-free"
    assert len(report["frequencies_hz"]) == 2 and report["frequencies_hz"][0] > 1.0


@pytest.mark.parametrize("argv, message", [
    (["meshes/beam_line.msh", "--fix", "nope"], "no node set 'nope'"),
    (["meshes/beam_line.msh", "--fix", "root", "-n", "500"], "only 120 dofs are free"),
    (["meshes/beam_line.msh", "--material", "210e9,0.3"], "--material takes 3"),
    (["meshes/beam_line.msh", "--material", "210e9,0.3,0", "--fix", "root"], "no mass"),
    (["meshes/missing.msh"], "missing.msh"),
])
def test_bad_input_exits_with_a_message(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in err and "Traceback" not in err


def test_n_modes_is_the_number_asked_for(capsys):
    """The README's command: -n 6 with the tip condensed to an interface point gives 6 fixed-interface modes
    and 6 static (constraint) modes, 12 columns of the mode set; n_modes reports the 6 asked for (it said 12)."""
    code, out, _ = run(capsys, "meshes/beam_line.msh", "--fix", "root", "--interface", "tip", "-n", "6", "--json")
    report = json.loads(out)
    assert code == 0 and report["kind"] == "craig-bampton"
    assert (report["n_modes"], report["interface_modes"], report["mode_set_size"]) == (6, 6, 12)
    assert len(report["frequencies_hz"]) == 12
    code, out, _ = run(capsys, "meshes/beam_line.msh", "--fix", "root", "--interface", "tip", "-n", "6")
    assert "craig-bampton, 6 normal modes + 6 interface (static) modes = 12 in the set" in out
