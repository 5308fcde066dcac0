# fuzz/: libFuzzer targets, built with clang by fuzz/run.sh (never by `make
# check`): `make fuzz` runs each for FUZZ_SECONDS. Shipped in the tarball.
FUZZ_SECONDS = 60
EXTRA_DIST += fuzz/run.sh fuzz/packages.txt \
	fuzz/parse.dict fuzz/run.dict fuzz/corpus
fuzz:
	$(srcdir)/fuzz/run.sh all $(FUZZ_SECONDS)
.PHONY: fuzz
