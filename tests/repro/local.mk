# The repro tools of the hlorun command (issue 34): --extract with real
# values (cli/extract.c, hlo_module_extract_around in interp/extract.c).
TESTS += tests/repro/extract.sh
dist_noinst_SCRIPTS += tests/repro/extract.sh
dist_noinst_DATA += tests/repro/loop.hlo tests/repro/twice.hlo tests/repro/branch.hlo
