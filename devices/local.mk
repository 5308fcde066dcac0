# devices/: the multi-device runtime above interp/ (devices.h): one executor
# per device, the communicator (threads of one process, MPI between
# processes), shardings of inputs and results, and the public hlo_compile
# and hlo_execute_devices.
libhlorun_core_la_SOURCES += devices/devices.h devices/comm.c devices/chain.c devices/run.c devices/mpi.h \
	devices/sharding.c
# The MPI transport is compiled alone with MPI's flags (configure: --with-mpi).
if HAVE_MPI
noinst_LTLIBRARIES += libhld_mpi.la
libhld_mpi_la_SOURCES = devices/mpi.c
libhld_mpi_la_CFLAGS = $(AM_CFLAGS) $(MPI_CFLAGS)
libhld_mpi_la_LIBADD = $(MPI_LIBS)
libhlorun_core_la_LIBADD += libhld_mpi.la
else
libhlorun_core_la_SOURCES += devices/mpi_none.c
endif
EXTRA_DIST += devices/mpi.c devices/mpi_none.c
# The executor's collective interface (included by interp/), shipped in the
# tarball (make distcheck failed without it).
noinst_HEADERS += interp/comm.h
