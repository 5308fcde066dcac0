# parser/: the HLO text front end: re2c lexer, lemon grammar, lowering to
# the IR (ir/).
libhlorun_core_la_SOURCES += \
	parser/parser.h parser/syntax.h \
	parser/text.c parser/parse.c parser/names.c parser/lower.c parser/attrs.c parser/literal.c \
	parser/sdy_edges.c \
	parser/shape.c

# Generated sources are written into the build tree only (the source tree may
# be read-only, as in distcheck): lemon writes hlo.c and hlo.h into the
# directory given by -d, re2c writes lexer.c. They also ship in the tarball
# (EXTRA_DIST finds them in the build tree), so a tarball builds without the
# generators.
PARSER_GEN = parser/hlo.c parser/hlo.h parser/lexer.c
nodist_libhlorun_core_la_SOURCES += $(PARSER_GEN)
BUILT_SOURCES += $(PARSER_GEN)
CLEANFILES += $(PARSER_GEN)
EXTRA_DIST += parser/hlo.y parser/lexer.re $(PARSER_GEN)

# lemon leaves hlo.h alone when the token codes did not change; the touch
# keeps it at least as new as hlo.c, otherwise make would remake lexer.c on
# every run (and, from a tarball, into a build tree without hlo.h).
parser/hlo.c: $(srcdir)/parser/hlo.y
	$(AM_V_GEN)$(MKDIR_P) parser && \
	$(LEMON) -q -T$(LEMPAR) -d$(builddir)/parser $(srcdir)/parser/hlo.y && \
	touch $(builddir)/parser/hlo.h
# One lemon run makes both files.
parser/hlo.h: parser/hlo.c
	@test -f $@ || { rm -f parser/hlo.c; $(MAKE) $(AM_MAKEFLAGS) parser/hlo.c; }

parser/lexer.c: $(srcdir)/parser/lexer.re parser/hlo.h
	$(AM_V_GEN)$(MKDIR_P) parser && \
	$(RE2C) -W --no-generation-date --no-version -o $@ $(srcdir)/parser/lexer.re

# Parser tests: a Check suite, and a program that parses and round-trips
# every module of the shared corpora (skipped when they are absent).
check_PROGRAMS += tests/check_parser
TESTS += tests/check_parser
tests_check_parser_SOURCES = tests/check_parser.c
tests_check_parser_CFLAGS = $(TEST_CFLAGS)
# hlo.h (token codes) is in the build tree, or in the source tree when
# building from a tarball that ships it.
tests_check_parser_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/parser
tests_check_parser_LDADD = $(TEST_LIBS)

check_PROGRAMS += tests/check_parser_corpus
TESTS += tests/check_parser_corpus
tests_check_parser_corpus_SOURCES = tests/check_parser_corpus.c
tests_check_parser_corpus_CFLAGS = $(TEST_CFLAGS) -DHLP_SRCDIR='"$(abs_srcdir)"'
tests_check_parser_corpus_LDADD = $(TEST_LIBS)
# Realistic test modules (listed one by one: automake has no wildcards).
EXTRA_DIST += tests/parser/cpu_after_optimizations.hlo tests/parser/gpu_after_optimizations.hlo \
	tests/parser/all_to_all_tuple_form.hlo \
	tests/parser/jax_before_optimizations.hlo tests/parser/hand_written.hlo \
	tests/parser/attributes_zoo.hlo tests/parser/legacy_operand_forms.hlo \
	tests/parser/async_sugar_attributes.hlo tests/parser/literal_and_aliasing.hlo \
	tests/parser/bad-alias-kind.hlo tests/parser/bad-alias-output-index.hlo \
	tests/parser/bad-alias-twice.hlo tests/parser/bad-async-done-mismatch.hlo \
	tests/parser/bad-buffer-donor.hlo tests/parser/bad-infeed-not-tuple.hlo \
	tests/parser/bad-permute-slice-sizes.hlo tests/parser/bad-window-pad-interior.hlo \
	tests/parser/bad-parameter-replication.hlo tests/parser/inferred_shapes.hlo \
	tests/parser/sparse_layouts.hlo tests/parser/bad-dense-physical-shape.hlo \
	tests/parser/bad-async-shared-computation.hlo
