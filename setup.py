"""Maps the top-level folders into the ``odradek`` namespace (see ARCHITECTURE.md)."""

from setuptools import find_packages, setup

PACKAGE_DIRS = {
    "odradek": "odradek",
    "odradek.broker": "broker",
    "odradek.operator": "operator",
    "odradek.spark": "spark",
    "odradek.mirror": "mirror",
}

packages = []
for package, folder in PACKAGE_DIRS.items():
    packages.append(package)
    packages.extend(f"{package}.{sub}" for sub in find_packages(folder))

setup(packages=packages, package_dir=PACKAGE_DIRS, package_data={"": ["py.typed"]})
