/* hlorun.h: public API of libhlorun (the core fills in the rest). */
#ifndef HLORUN_H
#define HLORUN_H
#ifdef __cplusplus
extern "C" {
#endif

/* The library version, e.g. "0.1.0". */
const char *hlo_version(void);

#ifdef __cplusplus
}
#endif
#endif
