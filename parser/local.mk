# parser/: re2c lexer, lemon grammar, lowering to the IR, canonical printer,
# verifier.
libhlorun_core_la_SOURCES += \
	parser/opcodes.def parser/ir.h parser/ir.c parser/parser.h parser/syntax.h \
	parser/parse.c parser/lower.c parser/attrs.c parser/literal.c parser/shape.c \
	parser/print.c parser/verify.h parser/verify.c parser/verify_elem.c parser/verify_data.c \
	parser/verify_index.c parser/verify_reduce.c parser/verify_linalg.c parser/verify_control.c \
	parser/collective.h parser/collective.c

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

# Verifier tests: the corpora verify clean, and one broken module per check in
# tests/verify/ fails with the exact positioned message of its .err file.
check_PROGRAMS += tests/check_verify
TESTS += tests/check_verify
tests_check_verify_SOURCES = tests/check_verify.c
tests_check_verify_CFLAGS = $(TEST_CFLAGS) -DHLV_SRCDIR='"$(abs_srcdir)"'
tests_check_verify_LDADD = $(TEST_LIBS)
# The broken modules and their expected errors (listed: automake has no wildcards).
EXTRA_DIST += \
	tests/verify/bitcast_convert_width.hlo tests/verify/bitcast_convert_width.err \
	tests/verify/collective_gather_size.hlo tests/verify/collective_gather_size.err \
	tests/verify/collective_permute_pairs.hlo tests/verify/collective_permute_pairs.err \
	tests/verify/collective_group_device.hlo tests/verify/collective_group_device.err \
	tests/verify/collective_groups_partition.hlo tests/verify/collective_groups_partition.err \
	tests/verify/collective_huge_grid.hlo tests/verify/collective_huge_grid.err \
	tests/verify/bitcast_convert_complex.hlo tests/verify/bitcast_convert_complex.err \
	tests/verify/convert_complex_real.hlo tests/verify/convert_complex_real.err \
	tests/verify/broadcast_dims_range.hlo tests/verify/broadcast_dims_range.err \
	tests/verify/broadcast_size.hlo tests/verify/broadcast_size.err \
	tests/verify/call_signature.hlo tests/verify/call_signature.err \
	tests/verify/compare_pred.hlo tests/verify/compare_pred.err \
	tests/verify/complex_type.hlo tests/verify/complex_type.err \
	tests/verify/concatenate_mismatch.hlo tests/verify/concatenate_mismatch.err \
	tests/verify/concatenate_shape.hlo tests/verify/concatenate_shape.err \
	tests/verify/conditional_branch_param.hlo tests/verify/conditional_branch_param.err \
	tests/verify/conditional_result.hlo tests/verify/conditional_result.err \
	tests/verify/convolution_groups.hlo tests/verify/convolution_groups.err \
	tests/verify/convolution_shape.hlo tests/verify/convolution_shape.err \
	tests/verify/dot_contracting_size.hlo tests/verify/dot_contracting_size.err \
	tests/verify/dot_dims_range.hlo tests/verify/dot_dims_range.err \
	tests/verify/dot_shape.hlo tests/verify/dot_shape.err \
	tests/verify/dynamic_slice_sizes.hlo tests/verify/dynamic_slice_sizes.err \
	tests/verify/dynamic_update_slice_shape.hlo tests/verify/dynamic_update_slice_shape.err \
	tests/verify/elementwise_operands.hlo tests/verify/elementwise_operands.err \
	tests/verify/elementwise_shape.hlo tests/verify/elementwise_shape.err \
	tests/verify/entry_layout.hlo tests/verify/entry_layout.err \
	tests/verify/extra_comma.hlo tests/verify/extra_comma.err \
	tests/verify/gather_dims_range.hlo tests/verify/gather_dims_range.err \
	tests/verify/gather_shape.hlo tests/verify/gather_shape.err \
	tests/verify/iota_dimension.hlo tests/verify/iota_dimension.err \
	tests/verify/mixed_precision_operands.hlo tests/verify/mixed_precision_operands.err \
	tests/verify/mixed_precision_result.hlo tests/verify/mixed_precision_result.err \
	tests/verify/operand_count.hlo tests/verify/operand_count.err \
	tests/verify/pad_shape.hlo tests/verify/pad_shape.err \
	tests/verify/param_gap.hlo tests/verify/param_gap.err \
	tests/verify/reduce_dims_repeated.hlo tests/verify/reduce_dims_repeated.err \
	tests/verify/reduce_reducer_arity.hlo tests/verify/reduce_reducer_arity.err \
	tests/verify/reduce_reducer_type.hlo tests/verify/reduce_reducer_type.err \
	tests/verify/reduce_shape.hlo tests/verify/reduce_shape.err \
	tests/verify/reduce_variadic_result.hlo tests/verify/reduce_variadic_result.err \
	tests/verify/reduce_window_shape.hlo tests/verify/reduce_window_shape.err \
	tests/verify/reshape_count.hlo tests/verify/reshape_count.err \
	tests/verify/reverse_range.hlo tests/verify/reverse_range.err \
	tests/verify/scan_shape.hlo tests/verify/scan_shape.err \
	tests/verify/scatter_shape.hlo tests/verify/scatter_shape.err \
	tests/verify/scatter_window_dims.hlo tests/verify/scatter_window_dims.err \
	tests/verify/select_and_scatter_source.hlo tests/verify/select_and_scatter_source.err \
	tests/verify/select_pred.hlo tests/verify/select_pred.err \
	tests/verify/slice_bounds.hlo tests/verify/slice_bounds.err \
	tests/verify/slice_shape.hlo tests/verify/slice_shape.err \
	tests/verify/sort_comparator_arity.hlo tests/verify/sort_comparator_arity.err \
	tests/verify/sort_comparator_result.hlo tests/verify/sort_comparator_result.err \
	tests/verify/subtract_pred.hlo tests/verify/subtract_pred.err \
	tests/verify/topk_k.hlo tests/verify/topk_k.err \
	tests/verify/transpose_repeated.hlo tests/verify/transpose_repeated.err \
	tests/verify/transpose_shape.hlo tests/verify/transpose_shape.err \
	tests/verify/tuple_index.hlo tests/verify/tuple_index.err \
	tests/verify/while_body.hlo tests/verify/while_body.err \
	tests/verify/while_condition.hlo tests/verify/while_condition.err \
	tests/verify/while_shape.hlo tests/verify/while_shape.err

# The command verifies before --print and before running (exit 2, positioned
# message).
TESTS += tests/verify/run-cli.sh
dist_noinst_SCRIPTS += tests/verify/run-cli.sh
