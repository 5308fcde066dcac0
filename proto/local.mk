# proto/: XLA's protocol-buffer dumps (HloModuleProto, HloProto, HloSnapshot,
# LiteralProto) read into the same IR as HLO text. Depends only on parser/
# (the IR) and common/.
libhlorun_core_la_SOURCES += \
	proto/proto.h proto/wire.h proto/wire.c proto/lower.h proto/to_text.c proto/literal.c proto/read.c proto/write.c
libhlorun_core_la_LIBADD += $(PROTOBUF_C_LIBS)
AM_CPPFLAGS += $(PROTOBUF_C_CFLAGS)

# protoc-c writes the message code into the build tree (the source tree may
# be read-only, as in distcheck); it ships in the tarball like the lexer and
# grammar outputs, so a tarball builds without protoc-c.
PROTO_GEN = proto/hlo.pb-c.c proto/hlo.pb-c.h proto/textfmt.c
nodist_libhlorun_core_la_SOURCES += $(PROTO_GEN)
BUILT_SOURCES += $(PROTO_GEN)
CLEANFILES += $(PROTO_GEN)
EXTRA_DIST += proto/hlo.proto proto/textfmt.re $(PROTO_GEN)

proto/hlo.pb-c.c: $(srcdir)/proto/hlo.proto
	$(AM_V_GEN)$(MKDIR_P) proto && \
	$(PROTOC_C) --c_out=$(builddir)/proto -I$(srcdir)/proto $(srcdir)/proto/hlo.proto
# re2c scans the text format (textfmt.re); it needs the message code.
proto/textfmt.c: $(srcdir)/proto/textfmt.re proto/hlo.pb-c.h
	$(AM_V_GEN)$(MKDIR_P) proto && \
	$(RE2C) -W --no-generation-date --no-version -o $@ $(srcdir)/proto/textfmt.re
# One protoc-c run makes both files.
proto/hlo.pb-c.h: proto/hlo.pb-c.c
	@test -f $@ || { rm -f proto/hlo.pb-c.c; $(MAKE) $(AM_MAKEFLAGS) proto/hlo.pb-c.c; }

# End-to-end tests of proto inputs: files written by tools/gen_proto_tests.py
# (listed: automake has no wildcards).
TESTS += tests/proto/run.sh tests/proto/roundtrip.sh tests/proto/stream.sh
dist_noinst_SCRIPTS += tests/proto/run.sh tests/proto/roundtrip.sh tests/proto/stream.sh
EXTRA_DIST += tools/gen_proto_tests.py tools/pbwire.py tests/proto/check_written.py tests/proto/big_literal.py \
	tests/proto/stream_cases.py \
	tests/proto/bad-cases.txt \
	tests/proto/bad-cycle.pb \
	tests/proto/bad-enum.pbtxt \
	tests/proto/bad-list.pbtxt \
	tests/proto/bad-literal-size.pb \
	tests/proto/bad-opcode.pb \
	tests/proto/bad-operand.pb \
	tests/proto/bad-root.pb \
	tests/proto/bad-truncated.pb \
	tests/proto/bad-unclosed.pbtxt \
	tests/proto/bad-wire-type.pb \
	tests/proto/lit_bf16.hlo \
	tests/proto/lit_bf16.pb \
	tests/proto/lit_bf16.txt \
	tests/proto/lit_c128.hlo \
	tests/proto/lit_c128.pb \
	tests/proto/lit_c128.txt \
	tests/proto/lit_c64.hlo \
	tests/proto/lit_c64.pb \
	tests/proto/lit_c64.txt \
	tests/proto/lit_f16.hlo \
	tests/proto/lit_f16.pb \
	tests/proto/lit_f16.txt \
	tests/proto/lit_f32.hlo \
	tests/proto/lit_f32.pb \
	tests/proto/lit_f32.txt \
	tests/proto/lit_f32_colmajor.hlo \
	tests/proto/lit_f32_colmajor.pb \
	tests/proto/lit_f32_colmajor.txt \
	tests/proto/lit_f4e2m1fn.hlo \
	tests/proto/lit_f4e2m1fn.pb \
	tests/proto/lit_f4e2m1fn.txt \
	tests/proto/lit_f64.hlo \
	tests/proto/lit_f64.pb \
	tests/proto/lit_f64.txt \
	tests/proto/lit_f8e3m4.hlo \
	tests/proto/lit_f8e3m4.pb \
	tests/proto/lit_f8e3m4.txt \
	tests/proto/lit_f8e4m3.hlo \
	tests/proto/lit_f8e4m3.pb \
	tests/proto/lit_f8e4m3.txt \
	tests/proto/lit_f8e4m3b11fnuz.hlo \
	tests/proto/lit_f8e4m3b11fnuz.pb \
	tests/proto/lit_f8e4m3b11fnuz.txt \
	tests/proto/lit_f8e4m3fn.hlo \
	tests/proto/lit_f8e4m3fn.pb \
	tests/proto/lit_f8e4m3fn.txt \
	tests/proto/lit_f8e4m3fnuz.hlo \
	tests/proto/lit_f8e4m3fnuz.pb \
	tests/proto/lit_f8e4m3fnuz.txt \
	tests/proto/lit_f8e5m2.hlo \
	tests/proto/lit_f8e5m2.pb \
	tests/proto/lit_f8e5m2.txt \
	tests/proto/lit_f8e5m2fnuz.hlo \
	tests/proto/lit_f8e5m2fnuz.pb \
	tests/proto/lit_f8e5m2fnuz.txt \
	tests/proto/lit_f8e8m0fnu.hlo \
	tests/proto/lit_f8e8m0fnu.pb \
	tests/proto/lit_f8e8m0fnu.txt \
	tests/proto/lit_pred.hlo \
	tests/proto/lit_pred.pb \
	tests/proto/lit_pred.txt \
	tests/proto/lit_s16.hlo \
	tests/proto/lit_s16.pb \
	tests/proto/lit_s16.txt \
	tests/proto/lit_s2.hlo \
	tests/proto/lit_s2.pb \
	tests/proto/lit_s2.txt \
	tests/proto/lit_s32.hlo \
	tests/proto/lit_s32.pb \
	tests/proto/lit_s32.txt \
	tests/proto/lit_s4.hlo \
	tests/proto/lit_s4.pb \
	tests/proto/lit_s4.txt \
	tests/proto/lit_s64.hlo \
	tests/proto/lit_s64.pb \
	tests/proto/lit_s64.txt \
	tests/proto/lit_s8.hlo \
	tests/proto/lit_s8.pb \
	tests/proto/lit_s8.txt \
	tests/proto/lit_tuple.hlo \
	tests/proto/lit_tuple.pb \
	tests/proto/lit_tuple.txt \
	tests/proto/lit_u16.hlo \
	tests/proto/lit_u16.pb \
	tests/proto/lit_u16.txt \
	tests/proto/lit_u2.hlo \
	tests/proto/lit_u2.pb \
	tests/proto/lit_u2.txt \
	tests/proto/lit_u32.hlo \
	tests/proto/lit_u32.pb \
	tests/proto/lit_u32.txt \
	tests/proto/lit_u4.hlo \
	tests/proto/lit_u4.pb \
	tests/proto/lit_u4.txt \
	tests/proto/lit_u64.hlo \
	tests/proto/lit_u64.pb \
	tests/proto/lit_u64.txt \
	tests/proto/lit_u8.hlo \
	tests/proto/lit_u8.pb \
	tests/proto/lit_u8.txt \
	tests/proto/literal-cases.txt \
	tests/proto/xla_nonconsecutive_ids.pbtxt \
	tests/proto/xla/README \
	tests/proto/xla/hlo_opt_hlo_protobinary.pb \
	tests/proto/xla/input_literal_f32_2_2.pbtxt \
	tests/proto/xla/sharded_unoptimized_hlo_snapshot.pbtxt \
	tests/proto/xla/snapshot.mlir.pb \
	tests/proto/zoo.arg0.literal.pb \
	tests/proto/zoo.arg1.literal.pb \
	tests/proto/zoo.hlo \
	tests/proto/zoo.hloproto.pb \
	tests/proto/zoo.literals.pb \
	tests/proto/zoo.literals.pbtxt \
	tests/proto/zoo.module.pb \
	tests/proto/zoo.snapshot.pb \
	tests/proto/zoo2.hlo \
	tests/proto/zoo2.module.pb

# XLA's parser tests (must parse / must fail) and the parser leniency XLA has.
TESTS += tests/xla-parser/run.sh
dist_noinst_SCRIPTS += tests/xla-parser/run.sh
EXTRA_DIST += tests/xla-parser/must-parse.hlo tests/xla-parser/must-fail.hlo

# The proto fuzz target (fuzz/fuzz_proto.c, run by fuzz/run.sh proto) linked
# with the replay driver: tests/harden/fuzz-regressions.sh replays
# tests/fuzz-regressions/proto/ through it, and this test replays the seed
# corpus (every reader on real and broken files) under the sanitizers.
check_PROGRAMS += tests/fuzz_replay_proto
tests_fuzz_replay_proto_SOURCES = tests/harden/fuzz_replay.c fuzz/fuzz_proto.c
tests_fuzz_replay_proto_LDADD = libhlorun_core.la
TESTS += tests/proto/fuzz-corpus.sh
dist_noinst_SCRIPTS += tests/proto/fuzz-corpus.sh
