"""Calling rewards: the reward contract, the adapter TRL calls, and the hard per-item time limits."""
