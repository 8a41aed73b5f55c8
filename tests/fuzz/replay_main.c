/* replay_main.c -- runs a fuzz target once over every file of its corpus, so the
 * ordinary test run replays what the fuzzers found. Reports one PASS line per file. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) { uint8_t *nb = realloc(buf, cap *= 2); if (!nb) { free(buf); buf = NULL; } else buf = nb; }
    }
    fclose(f);
    if (!buf) return -1;
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    int passed = 0, failed = 0;
    for (int i = 1; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        if (!d) { printf("FAIL: corpus directory %s can be opened\n", argv[i]); failed++; continue; }
        struct dirent *e;
        int n_files = 0;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            /* A crash aborts the whole binary under ASan; getting past the call means it held. */
            if (replay_file(path) == 0) n_files++;
            else { failed++; printf("FAIL: corpus file %s can be read\n", path); }
        }
        closedir(d);
        if (n_files > 0) { passed++; printf("PASS: the decoder survives all %d inputs of %s\n", n_files, argv[i]); }
        else { failed++; printf("FAIL: corpus %s holds inputs\n", argv[i]); }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
