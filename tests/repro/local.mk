# The repro tools of the hlorun command (issue 34): --extract with real
# values (cli/extract.c, hlo_module_extract_around in interp/extract.c),
# --save-snapshot (cli/snapshot.c, interp/snapshot_write.c).
TESTS += tests/repro/extract.sh tests/repro/snapshot.sh
dist_noinst_SCRIPTS += tests/repro/extract.sh tests/repro/snapshot.sh
dist_noinst_DATA += tests/repro/loop.hlo tests/repro/twice.hlo tests/repro/branch.hlo \
	tests/repro/layout.hlo
