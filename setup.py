"""Package layout only; everything else is in pyproject.toml.

crawler/, baselines/, leaderboard/ and data_cards/ sit at the repository root so the tree shows
the data flow, but they install as gharuntime.crawler, gharuntime.baselines, ... : PyPI already
has top-level packages with those names, so a wheel of ours must hold nothing but gharuntime*.
"""

from setuptools import find_packages, setup

MAPPED = {
    "gharuntime": "gharuntime",
    "gharuntime.crawler": "crawler",
    "gharuntime.baselines": "baselines",
    "gharuntime.leaderboard": "leaderboard",
    "gharuntime.data_cards": "data_cards",
}

packages: list[str] = []
package_dir: dict[str, str] = {}
for name, folder in MAPPED.items():
    packages.append(name)
    package_dir[name] = folder
    for sub in find_packages(folder):
        if name == "gharuntime" and sub.split(".")[0] in {v for v in MAPPED.values()}:
            continue
        packages.append(f"{name}.{sub}")
        package_dir[f"{name}.{sub}"] = f"{folder}/{sub.replace('.', '/')}"

setup(packages=packages, package_dir=package_dir)
