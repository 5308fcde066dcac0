/* fuzz_replay.c: runs a fuzz target (fuzz/fuzz_*.c, linked in) on the files
 * named on the command line, or on every file of the directories named, so
 * the inputs that once crashed it stay fixed (tests/fuzz-regressions/).
 * Built with the ordinary compiler, without libFuzzer; the target aborts on
 * a failed check, and sanitizer builds catch memory errors. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) { perror(path); return 1; }
  unsigned char *buf = NULL;
  size_t n = 0, cap = 0;
  for (;;) {
    if (n == cap && !(buf = realloc(buf, cap = cap ? 2 * cap : 4096))) { fclose(f); return 1; }
    size_t r = fread(buf + n, 1, cap - n, f);
    if (r == 0) break;
    n += r;
  }
  fclose(f);
  /* An exact-size copy, as libFuzzer passes inputs. */
  unsigned char *exact = malloc(n ? n : 1);
  if (n) memcpy(exact, buf, n);
  free(buf);
  LLVMFuzzerTestOneInput(exact, n);
  free(exact);
  printf("ok: %s\n", path);
  return 0;
}

int main(int argc, char **argv) {
  int bad = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) { perror(argv[i]); bad = 1; continue; }
    if (!S_ISDIR(st.st_mode)) { bad |= run_file(argv[i]); continue; }
    struct dirent **ents;
    int n = scandir(argv[i], &ents, NULL, alphasort);
    for (int k = 0; k < n; k++) {
      if (ents[k]->d_name[0] != '.') {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[i], ents[k]->d_name);
        bad |= run_file(path);
      }
      free(ents[k]);
    }
    if (n >= 0) free(ents);
  }
  return bad;
}
