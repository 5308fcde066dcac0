"""Shared paths for the Python package's tests (set by run-pytest.sh)."""
import os

import pytest

SRCDIR = os.environ.get("HLORUN_SRCDIR", ".")
BUILDDIR = os.environ.get("HLORUN_BUILDDIR", ".")
HLORUN = os.environ.get("HLORUN", os.path.join(BUILDDIR, "hlorun"))
PLUGINS = os.path.join(BUILDDIR, "samples", "plugins", ".libs")


def src(*parts):
    return os.path.join(SRCDIR, *parts)


def plugin_lib(name):
    """A sample plugin built by make check (check_LTLIBRARIES)."""
    path = os.path.join(PLUGINS, f"lib{name}.so")
    if not os.path.exists(path):
        pytest.skip(f"{path} is not built (make check builds it)")
    return path
