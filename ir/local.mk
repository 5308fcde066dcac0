# ir/: the typed IR every front end lowers into (ir.h, opcodes.def), its
# canonical printer, the verifier, and collectives' participant groups.
# Depends only on common/.
libhlorun_core_la_SOURCES += \
	ir/opcodes.def ir/ir.h ir/ir.c ir/print.h ir/print.c \
	ir/verify.h ir/verify.c ir/verify_elem.c ir/verify_data.c ir/verify_index.c \
	ir/verify_reduce.c ir/verify_linalg.c ir/verify_control.c \
	ir/collective.h ir/collective.c ir/sharding.h ir/sharding.c ir/sdy.h ir/sdy.c

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

# Shardings as typed values: the parser, printer and tile arithmetic.
check_PROGRAMS += tests/check_sharding
TESTS += tests/check_sharding
tests_check_sharding_SOURCES = tests/check_sharding.c
tests_check_sharding_CFLAGS = $(TEST_CFLAGS)
tests_check_sharding_LDADD = $(TEST_LIBS)
