"""Decision surfaces: what a run of a task class may change (TCCM `policy:`), inherited and enforced."""

from planner.policy.model import Policy, PolicyDocument, Violation

__all__ = ["Policy", "PolicyDocument", "Violation"]
