"""Suite ``manipulator``: the robotic manipulator of He 1992, §9.5 (Table 9-1; issue 13, item 3). Rigid
links: joint torques of the planar and the 3-D spin-up manoeuvres from the drivers' reactions, against an
independent minimal-coordinate Lagrange computation; flexible links (modal, stiffened, Craig-Bampton with a tip
interface): the payload's deviation from the rigid path and the joint torques of both manoeuvres; the rigid-arm
torques applied open loop to the rigid and the flexible arm; geometrically exact beam links as the modal links'
reference (models.py states the geometry, the settled final joint angles and the reference; cases.py the error
measures and tolerances).
"""
from .cases import CASES

__all__ = ["CASES"]
