"""Turning user input into a run's settings: the declarations, config files, flag syntaxes, plugin parameters
and the bounds every numeric setting is checked against."""
