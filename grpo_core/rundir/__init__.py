"""The run folder: what a run owns and writes there, what it records about itself, and what --resume continues."""
