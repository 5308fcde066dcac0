# ffi: sources of this area (included from the top Makefile.am)
