"""The example crash study (verification/occupant) runs one case end to end: the sled pulse, the
belted torso and neck, the head striking the padded bulkhead, and the head's HIC15 and HIC36."""
import numpy as np

from flexmb.studies import Study
from verification import occupant


def test_occupant_case_runs_and_reports_hic(tmp_path):
    st = Study(occupant.build, [{"v": 9.0, "setback": 0.15}], occupant.METRICS, name="occupant-one")
    res = st.run(tmp_path / "study", progress=False)
    assert list(res["status"]) == ["ok"]
    hic15, hic36 = float(res["hic15"][0]), float(res["hic36"][0])
    assert 0.0 < hic15 <= hic36                      # HIC36 maximises over a longer window
    t1, t2 = float(res["hic15_t1"][0]), float(res["hic15_t2"][0])
    assert 0.0 < t2 - t1 <= 0.015 + 1e-12
    assert np.isfinite(float(res["peak_head_g"][0]))
    assert float(res["peak_bulkhead_force"][0]) > 0.0           # the head reached the bulkhead
    assert (tmp_path / "study" / "results.csv").exists()
