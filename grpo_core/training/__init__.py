"""A training run: from resolved settings to TRL's GRPOTrainer, with stages, schedules, launchers and sampling."""
