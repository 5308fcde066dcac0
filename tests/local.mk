# tests/: Check suites are added by each area's fragment; shared harness here.
include tests/golden.mk
