#!/usr/bin/python3
"""A clone of the repository must build and test on its own: nothing in the
build, the tests, the benchmarks or the scripts may read a path outside the
checkout. This check (ctest: repo_hygiene_paths, label unit) fails when a
file under the scanned folders names one.

Forbidden (each match is reported as file:line):
  * a relative path that climbs out of the checkout (two dots, a slash)
    into the `shared` folder that sat beside it in the team's workspace.
  * `shared/kafka-protocol`: that workspace folder by name, however reached.
  * An absolute path under /work/, /root/, /home/ or /Users/: the
    workspace and home directories of one machine. A path like this works
    only where it was written.

Allowed on purpose:
  * /usr/..., /etc/..., /proc, /sys, /dev: system interfaces and the
    install paths of Debian packages (/usr/bin/python3, /usr/share/zookeeper).
  * /tmp: the system temporary directory, which every machine has. Tests
    create their scratch directories there (mkdtemp templates), comments
    quote Kafka's default /tmp/kafka-logs, config-parsing tests use /tmp
    paths as values. No test reads pre-existing data from it.

Test data lives in the repository (tests/data) and is found relative to
the repository root, where ctest runs the tests.

Usage: check_paths.py [REPO_ROOT]   (default: two levels above this file)
"""

import os
import re
import sys
from pathlib import Path

SCANNED = ["src", "tests", "bench", "scripts", "cmake", ".ci", "CMakeLists.txt", "Makefile"]
SKIPPED_DIRS = {"__pycache__", ".pytest_cache"}

RULES = [
    (re.compile(r"\.\./shared\b"), "leaves the checkout for the team workspace"),
    (re.compile(r"\bshared/kafka-protocol\b"), "names the team workspace's reference folder"),
    (re.compile(r"(?<![\w.~)}$-])/(?:work|root|home|Users)/"), "absolute path of one machine"),
]


def scanned_files(root):
    for name in SCANNED:
        top = root / name
        if top.is_file():
            yield top
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
            for filename in sorted(filenames):
                yield Path(dirpath) / filename


def text_of(path):
    """The file's text, or None for a binary file (NUL bytes or not UTF-8)."""
    data = path.read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def findings(root):
    me = Path(__file__).resolve()
    for path in scanned_files(root):
        if path.resolve() == me:
            continue  # this file names the patterns it forbids
        text = text_of(path)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            for pattern, why in RULES:
                match = pattern.search(line)
                if match:
                    yield f"{path.relative_to(root)}:{number}: '{match.group(0)}' {why}: {line.strip()[:160]}"


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]).resolve()
    missing = [name for name in SCANNED if not (root / name).exists()]
    if missing:
        print(f"check_paths: {root} is not the repository root (missing: {', '.join(missing)})")
        return 2
    found = list(findings(root))
    for line in found:
        print(line)
    if found:
        print(f"check_paths: {len(found)} reference(s) to paths outside the checkout. Put the data in the "
              f"repository (tests/data/...) and refer to it relative to the repository root.")
        return 1
    print(f"check_paths: no file under {', '.join(SCANNED)} refers to a path outside the checkout")
    return 0


if __name__ == "__main__":
    sys.exit(main())
