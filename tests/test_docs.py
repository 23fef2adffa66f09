"""Every code block of the documentation runs, and the site builds with warnings as errors."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]


def _blocks(path: Path, lang: str) -> list[str]:
    return [code for kind, code in BLOCK.findall(path.read_text()) if kind == lang]


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_python_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for code in _blocks(page, "python"):
        exec(compile(code, f"{page.name}", "exec"), namespace)


@pytest.mark.parametrize("page", [p for p in PAGES if _blocks(p, "sh")], ids=lambda p: p.name)
def test_shell_blocks_run(page, tmp_path):
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env["PYTHONPATH"] = str(ROOT)
    for code in _blocks(page, "sh"):
        done = subprocess.run(["bash", "-e", "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


def test_every_block_is_python_sh_or_text():
    for page in PAGES:
        kinds = {kind for kind, _ in BLOCK.findall(page.read_text())}
        assert kinds <= {"python", "sh", "text"}, (page.name, kinds)


def test_site_builds_strictly(tmp_path):
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    if mkdocs is None:
        pytest.skip("mkdocs is not installed")
    done = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "plots" / "index.html").exists()
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    import streameval as se

    for name in se.__all__:  # every public name has its entry, rendered from its docstring
        assert f'id="streameval.{name}"' in api, name
    for module in ("river", "dask", "spark", "plot", "prometheus", "html"):
        assert f'id="streameval.{module}"' in api, module
