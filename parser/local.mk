# parser/: re2c lexer, lemon grammar, IR, canonical printer, verifier.
libhlorun_core_la_SOURCES += \
	parser/opcodes.def parser/ir.h parser/ir.c parser/parser.h
