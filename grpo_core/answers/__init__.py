"""Reading answers out of completions: exact numbers and the text inside tags, for rewards to build on."""
