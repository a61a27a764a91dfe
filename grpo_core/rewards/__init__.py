"""Calling rewards: the reward contract, the Reward callable TRL calls, and the hard per-item time limits."""
