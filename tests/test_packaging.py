"""The wheel ships the grammar and the built-in rules, found as in the editable install."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from importlib.resources import files
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_editable_install_finds_package_data() -> None:
    assert files("engine.grammar").joinpath("fleetrules.lark").is_file()
    assert files("engine.rules").is_dir()


def test_wheel_installs_and_runs(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path / "dist"), str(ROOT)],
        check=True,
    )
    (wheel,) = (tmp_path / "dist").glob("fleetrules-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "engine/grammar/fleetrules.lark" in names
    assert "engine/render/templates/report.html.j2" in names  # fleetrules report's page
    assert any(n.startswith("engine/rules/") for n in names)
    assert not any(n.startswith(("tests/", "examples/")) for n in names)

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps", str(wheel)], check=True)
    # The dependencies come from this environment's site-packages (not its editable `engine`).
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    work = tmp_path / "work"
    shutil.copytree(ROOT / "examples", work / "examples")
    where = subprocess.run(
        [python, "-c", "import engine; print(engine.__file__)"], cwd=work, capture_output=True, text=True, check=True
    )
    assert where.stdout.startswith(str(env_dir))
    result = subprocess.run(
        [env_dir / "bin" / "fleetrules", "check", "examples"], cwd=work, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "0 errors, 0 warnings in 8 files" in result.stderr
    # the kubectl plugin: kubectl runs kubectl-fleetrules from the PATH for `kubectl fleetrules`
    plugin = subprocess.run(
        [env_dir / "bin" / "kubectl-fleetrules", "eval", "examples/flink-ha/policy.fr", "--facts", "-"],
        cwd=work,
        input=b"".join(p.read_bytes() + b"\n---\n" for p in sorted((work / "examples/flink-ha/facts").iterdir())),
        capture_output=True,
    )
    assert plugin.returncode == 0, plugin.stderr
    assert b"streaming/orders-a-flinkdeployment" in plugin.stdout


def test_the_public_api_imports_outside_the_repository(tmp_path: Path) -> None:
    """The installed package (wheel, or the strict editable install) is a regular package anywhere."""
    code = "import engine; from engine import evaluate, load_facts, load_rules; print(engine.__file__)"
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().endswith("engine/__init__.py")


def test_an_unsupported_python_is_named_before_durable_rules_fails() -> None:
    from engine import unsupported_python

    assert unsupported_python((3, 11, 7)) is None and unsupported_python((3, 12, 0)) is None
    for version in ((3, 13, 0), (3, 10, 14)):
        message = unsupported_python(version)
        assert message is not None and message.startswith(f"fleetrules needs Python 3.11 or 3.12, not {version[0]}.")
    # the bounds are pyproject's requires-python
    text = (ROOT / "pyproject.toml").read_text()
    assert 'requires-python = ">=3.11,<3.13"' in text


def test_the_container_image_installs_the_package_from_this_tree() -> None:
    """The Dockerfile is not built by the tests (no Docker daemon in CI): its parts are checked instead."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "FROM python:3.12-slim" in dockerfile  # within requires-python
    for path in ("pyproject.toml", "engine", "grammar", "rules"):
        assert f"COPY {path}" in dockerfile and (ROOT / path).exists()
    assert 'ENTRYPOINT ["fleetrules"]' in dockerfile
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert "engine" not in ignored and "grammar" not in ignored and "rules" not in ignored


def test_the_sdist_carries_the_sources_a_wheel_is_built_from(tmp_path: Path) -> None:
    """`python -m build --sdist` (build is a dev dependency); the archive has the grammar, the rule library (the
    engine/grammar and engine/rules links stored as the files they point to) and
    the report's template, and a wheel built from it alone has them too."""
    import tarfile

    subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (sdist,) = tmp_path.glob("fleetrules-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
        archive.extractall(tmp_path / "src", filter="data")
    for needed in ("pyproject.toml", "engine/grammar/fleetrules.lark", "engine/rules/workload_affinity.fr",
                   "engine/render/templates/report.html.j2", "engine/cli/__init__.py"):  # fmt: skip
        assert needed in names, needed
    (unpacked,) = (tmp_path / "src").iterdir()
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet", "-w",
         str(tmp_path / "dist"), str(unpacked)],
        check=True,
    )  # fmt: skip
    (wheel,) = (tmp_path / "dist").glob("fleetrules-*.whl")
    built = zipfile.ZipFile(wheel).namelist()
    assert "engine/grammar/fleetrules.lark" in built and "engine/render/templates/report.html.j2" in built


def test_pipx_installs_the_wheel_as_users_install_the_command(tmp_path: Path) -> None:
    """`pipx install fleetrules-….whl`: pipx (a dev dependency) makes its own venv, installs the wheel's
    dependencies into it from the package index, and links both commands into its bin directory."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path / "dist"), str(ROOT)],
        check=True,
    )
    (wheel,) = (tmp_path / "dist").glob("fleetrules-*.whl")
    homes = {name: str(tmp_path / name) for name in ("PIPX_HOME", "PIPX_BIN_DIR", "PIPX_MAN_DIR")}
    env = {**os.environ, **homes, "PIPX_DEFAULT_PYTHON": sys.executable}
    installed = subprocess.run(
        [sys.executable, "-m", "pipx", "install", str(wheel)], env=env, capture_output=True, text=True
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    bin_dir = Path(homes["PIPX_BIN_DIR"])
    assert {p.name for p in bin_dir.iterdir()} >= {"fleetrules", "kubectl-fleetrules"}
    result = subprocess.run(
        [bin_dir / "fleetrules", "eval", "examples/flink-ha/policy.fr", "--facts", "examples/flink-ha/facts"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "streaming/orders-a-flinkdeployment" in result.stdout
    # the command runs from pipx's venv, not from this checkout
    where = subprocess.run(
        [
            Path(homes["PIPX_HOME"]) / "venvs" / "fleetrules" / "bin" / "python",
            "-c",
            "import engine; print(engine.__file__)",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(homes["PIPX_HOME"])


def test_every_package_of_the_tree_is_listed_for_the_wheel() -> None:
    """pyproject lists the packages (engine/grammar and engine/rules are links, which discovery would not follow):
    a package added to the tree and not to the list would be missing from every install but the editable one."""
    import tomllib

    root = Path(__file__).resolve().parent.parent
    listed = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    found = sorted(
        ".".join(Path(folder).relative_to(root).parts)
        for folder, _, names in os.walk(root / "engine", followlinks=True)
        if "__init__.py" in names
    )
    assert sorted(listed) == found
