"""Messages name a run's outputs as the user typed them: relative to the current folder when inside it."""

from pathlib import Path

from grpo_core.rundir.names import shown


def test_a_path_inside_the_current_folder_is_shown_relative(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert shown(tmp_path / "runs" / "demo" / "final") == str(Path("runs/demo/final"))
    assert shown("runs/demo/final") == str(Path("runs/demo/final"))


def test_a_path_outside_the_current_folder_is_shown_absolute(tmp_path, monkeypatch):
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    assert shown(tmp_path / "elsewhere" / "final") == str(tmp_path / "elsewhere" / "final")
    assert shown("../elsewhere") == str(tmp_path / "elsewhere")
