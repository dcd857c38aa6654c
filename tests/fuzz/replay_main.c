/* Generic replay driver for libFuzzer targets: runs LLVMFuzzerTestOneInput over every regular
 * file of the directories (or files) given on the command line and prints a TAP-like summary.
 * Lets the corpus run as a plain meson test with gcc, without libFuzzer. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    return 1;
  }
  uint8_t *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len == cap) {
      cap = cap ? cap * 2 : 4096;
      uint8_t *nb = realloc(buf, cap);
      if (!nb) abort();
      buf = nb;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    if (got == 0) break;
    len += got;
  }
  fclose(f);
  LLVMFuzzerTestOneInput(buf, len);
  free(buf);
  return 0;
}

int main(int argc, char **argv) {
  size_t files = 0;
  int failed = 0;
  for (int i = 1; i < argc; i++) {
    struct stat sb;
    if (stat(argv[i], &sb) != 0) {
      fprintf(stderr, "cannot stat %s\n", argv[i]);
      return 1;
    }
    if (!S_ISDIR(sb.st_mode)) {
      failed |= run_file(argv[i]);
      files++;
      continue;
    }
    DIR *d = opendir(argv[i]);
    if (!d) return 1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
      if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
      failed |= run_file(path);
      files++;
    }
    closedir(d);
  }
  printf("replayed %zu inputs\n", files);
  return failed || files == 0;
}
