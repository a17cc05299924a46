"""The wheel's layout: one import package, `informer_lab`, and nothing else in site-packages.

The repository keeps its top-level folders (analysis/, model/, ui/, study/, cli_commands/, sample_data/ beside
informer_lab/); the wheel maps each into the package (`informer_lab.analysis` is analysis/, and so on), as a
checkout's `informer_lab` spans them at run time (informer_lab/__init__.py). pyproject.toml holds the rest.
Known trap: setuptools' editable installs of remapped packages have broken before (setuptools issues 2662, 4248);
tests/launcher/test_install.py installs both ways and compares what they import.
"""
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
CODE = ("analysis", "model", "ui", "study", "cli_commands")  # informer_lab.<folder>
DATA = "sample_data"  # the sample series and model: data only (its scripts make them in a checkout)


def packages() -> tuple[list[str], dict[str, str]]:
    names = ["informer_lab", *(f"informer_lab.{p}" for p in find_packages(str(HERE / "informer_lab")))]
    folders = {"informer_lab": "informer_lab", f"informer_lab.{DATA}": DATA}
    for folder in CODE:
        names += [f"informer_lab.{folder}", *(f"informer_lab.{folder}.{p}" for p in find_packages(str(HERE / folder)))]
        folders[f"informer_lab.{folder}"] = folder
    return [*names, f"informer_lab.{DATA}"], folders


class BuildPy(build_py):
    """sample_data/ goes in as data: its scripts (generate.py, make_checkpoint.py) are not modules of the lab."""

    def find_package_modules(self, package, package_dir):
        return [] if package == f"informer_lab.{DATA}" else super().find_package_modules(package, package_dir)


PACKAGES, PACKAGE_DIR = packages()
setup(packages=PACKAGES, package_dir=PACKAGE_DIR, cmdclass={"build_py": BuildPy},
      package_data={f"informer_lab.{DATA}": ["sample.csv", "README.md", "checkpoint/*.json",
                                             "checkpoint/*.safetensors"],
                    # the instruments' measured scores against planted answers, shown beside each instrument
                    "informer_lab.analysis.planted": ["measured/*.csv"]})
