/* valio.h: reading and writing values in the file formats of the command
 * line (internal): .npy, .npz (zip of .npy) and HLO literal text.
 *
 * Everything works on memory (no files, no stdio); errors go to an HlcDiags
 * with a `what` prefix naming the input ("input 1 (in1.npy)"). Reading is
 * typed by the shape the value must have (an ENTRY parameter, a golden
 * result): raw bits are read the way that shape's element type says, and a
 * dtype or shape that does not match is an error, never a conversion. */
#ifndef HLORUN_INTERP_VALIO_H
#define HLORUN_INTERP_VALIO_H
#include "interp/interp.h"
#include "common/arena.h"
#include "common/pager.h"
#include "common/text.h"
#include "ir/print.h"

/* What the readers below return besides 0 and -1 (an error in d): the
 * value is well-formed but not of the expected type or shape, or holds an
 * element its type cannot (HLO_TYPE_MISMATCH to the API's callers). */
enum { HLI_READ_MISMATCH = -3 };

/* ---- .npy ---- */

/* The numpy descr an element type is stored with ("<f4", "<V2", "|b1"). */
const char *hli_npy_descr(HloDtype t);
/* Parse a .npy file in memory into a new value of shape want (an array
 * shape). want must outlive the value. 0 or -1 with an error in d. */
int hli_npy_read(const void *data, size_t len, const HloShape *want, const char *what,
                 HlcDiags *d, HliValue **out);
/* hli_npy_read, where data may be a file's image read on demand
 * (interp/files.c hli_file_open, pg non-NULL): the header and then each
 * 16 MiB of elements are read just before they are copied and given back
 * after, so a large array is held once, in the value (a Fortran-order one
 * twice until it is copied). */
int hli_npy_read_paged(const void *data, size_t len, const HloShape *want, const char *what,
                       HlcDiags *d, HlcPager *pg, HliValue **out);
/* The header fields of a .npy (descr, shape), for messages and for reading
 * without a known shape. */
typedef struct HliNpyInfo {
  char descr[16];
  bool fortran;
  int32_t rank;
  int64_t dims[32];
  size_t data_off;     /* offset of the first element */
} HliNpyInfo;
int hli_npy_info(const void *data, size_t len, const char *what, HlcDiags *d, HliNpyInfo *info);
/* Append the .npy encoding of array value v to b. */
int hli_npy_write(const HliValue *v, HlcText *b, HlcDiags *d);

/* ---- .npz ---- */

typedef struct HliNpzMember {
  char *name;           /* owned: file name inside the zip ("arr_0.npy") */
  unsigned char *data;  /* the member's bytes, decompressed: owned unless borrowed;
                           NULL: a deflated member not inflated yet (hli_npz_open) */
  size_t len;           /* its size, decompressed */
  bool borrowed;        /* data is the archive's own bytes (a stored member, hli_npz_open) */
  const unsigned char *src;   /* a deflated member's compressed bytes (hli_npz_open) */
  size_t csize;
  HlcPager *pager;      /* the archive is a file's image read on demand, or NULL */
} HliNpzMember;
/* List and extract the members of a zip archive in memory. */
int hli_npz_read(const void *data, size_t len, const char *what, HlcDiags *d,
                 HliNpzMember **members, int32_t *n);
/* List the members without copying: stored members borrow the archive's
 * bytes (which must outlive them), deflated ones are inflated when read
 * (hli_npz_member_npy, hli_npz_member_bytes). */
int hli_npz_open(const void *data, size_t len, const char *what, HlcDiags *d,
                 HliNpzMember **members, int32_t *n);
/* hli_npz_open of a file's image read on demand (pg: its pager): the
 * zip's directory is read now, the members' bytes when they are read. */
int hli_npz_open_paged(const void *data, size_t len, const char *what, HlcDiags *d, HlcPager *pg,
                       HliNpzMember **members, int32_t *n);
/* A member of hli_npz_open's as a value of shape want: a .npy copied from
 * the archive's bytes, or inflated straight into the value's buffer (a
 * paged archive's bytes read piece by piece, hli_npy_read_paged). -2
 * (nothing reported) if the member is not a .npy. */
int hli_npz_member_npy(const HliNpzMember *m, const HloShape *want, const char *what, HlcDiags *d,
                       HliValue **out);
/* Inflate a member of hli_npz_open's whole into m->data (owned); a stored
 * member of a paged archive is read whole in place. */
int hli_npz_member_bytes(HliNpzMember *m, const char *what, HlcDiags *d);
void hli_npz_members_free(HliNpzMember *m, int32_t n);
/* Find arr_<i>(.npy) among members; NULL if absent. */
const HliNpzMember *hli_npz_find(const HliNpzMember *m, int32_t n, const char *name);
/* Write leaves (arrays) as arr_0.npy, arr_1.npy, ... (stored, no compression). */
int hli_npz_write(HliValue *const *leaves, int32_t n, HlcText *b, HlcDiags *d);
/* The same with member names (names[i] + ".npy", at most 27 characters). */
int hli_npz_write_named(HliValue *const *leaves, const char *const *names, int32_t n, HlcText *b,
                        HlcDiags *d);

/* Array leaves of v, depth first (tuples flattened). *n set; returns a
 * malloc'd array of borrowed pointers (NULL if out of memory). */
HliValue **hli_value_leaves(HliValue *v, int32_t *n);
/* Array leaves of a shape, depth first (borrowed pointers; malloc'd array). */
const HloShape **hli_shape_leaves(const HloShape *s, int32_t *n);

/* ---- HLO literal text ---- */

/* Parse one literal (`f32[2] {1, 2}`, `(s32[] 1, pred[] true)`) into a new
 * value. If want is non-NULL the literal must have that shape (layouts
 * ignored) and the value uses want; else the shape is built in arena. */
int hli_literal_read(const char *text, size_t len, const HloShape *want, HlcArena *arena,
                     const char *what, HlcDiags *d, HliValue **out);
/* Append the literal text of v the way XLA prints it, no trailing newline.
 * -1 (nothing appended) when hli_literal_too_large(v). */
int hli_literal_write(const HliValue *v, HlcText *b);
/* An array with no elements prints one "{}" per index of its dimensions
 * before the first zero one: for [1e6,1e6,0] that is 10^12 of them, text
 * out of all proportion to the value. True when v (or a tuple member) would
 * print more than a million of them. */
bool hli_literal_too_large(const HliValue *v);

/* Deep copy of a shape into arena (layouts dropped). NULL if out of memory. */
HloShape *hli_shape_clone(HlcArena *a, const HloShape *s);
#endif
