# cli/: the hlorun command. It uses only the public API, so it links with the
# installed library's interface (libhlorun.la re-exports hlo_* only).
bin_PROGRAMS += hlorun
hlorun_SOURCES = cli/hlorun.c
hlorun_LDADD = libhlorun.la
dist_man_MANS += doc/hlorun.1
