/* version.c: the library's version string. */
#include "config.h"
#include "hlorun.h"

const char *hlo_version(void) { return PACKAGE_VERSION; }
