# proto/: XLA's protocol-buffer dumps (HloModuleProto, HloProto, HloSnapshot,
# LiteralProto) read into the same IR as HLO text. Depends only on parser/
# (the IR) and common/.
libhlorun_core_la_SOURCES += \
	proto/proto.h proto/wire.h proto/wire.c proto/lower.h proto/to_text.c proto/literal.c proto/read.c
libhlorun_core_la_LIBADD += $(PROTOBUF_C_LIBS)
AM_CPPFLAGS += $(PROTOBUF_C_CFLAGS)

# protoc-c writes the message code into the build tree (the source tree may
# be read-only, as in distcheck); it ships in the tarball like the lexer and
# grammar outputs, so a tarball builds without protoc-c.
PROTO_GEN = proto/hlo.pb-c.c proto/hlo.pb-c.h
nodist_libhlorun_core_la_SOURCES += $(PROTO_GEN)
BUILT_SOURCES += $(PROTO_GEN)
CLEANFILES += $(PROTO_GEN)
EXTRA_DIST += proto/hlo.proto $(PROTO_GEN)

proto/hlo.pb-c.c: $(srcdir)/proto/hlo.proto
	$(AM_V_GEN)$(MKDIR_P) proto && \
	$(PROTOC_C) --c_out=$(builddir)/proto -I$(srcdir)/proto $(srcdir)/proto/hlo.proto
# One protoc-c run makes both files.
proto/hlo.pb-c.h: proto/hlo.pb-c.c
	@test -f $@ || { rm -f proto/hlo.pb-c.c; $(MAKE) $(AM_MAKEFLAGS) proto/hlo.pb-c.c; }

# End-to-end tests of proto inputs: files written by tools/gen_proto_tests.py
# (listed: automake has no wildcards).
TESTS += tests/proto/run.sh
dist_noinst_SCRIPTS += tests/proto/run.sh
EXTRA_DIST += tools/gen_proto_tests.py tests/proto/bad-cases.txt tests/proto/zoo.hlo \
	tests/proto/zoo.module.pb tests/proto/zoo.hloproto.pb tests/proto/zoo.snapshot.pb \
	tests/proto/zoo.arg0.literal.pb tests/proto/zoo.arg1.literal.pb \
	tests/proto/bad-cycle.pb tests/proto/bad-literal-size.pb tests/proto/bad-opcode.pb \
	tests/proto/bad-operand.pb tests/proto/bad-root.pb tests/proto/bad-truncated.pb \
	tests/proto/bad-wire-type.pb
