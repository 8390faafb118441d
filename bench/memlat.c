/* What a cache miss costs on this machine (bench/README.md, "What a miss costs here"): reads
 * that each depend on the one before (a pointer chase through one pointer per 64-byte line, the
 * lines in random order) over SIZE MiB, in CHAINS independent chases interleaved, and prints the
 * nanoseconds per read. One chase shows the latency the event loop pays for each miss it cannot
 * overlap; several show how many misses the core keeps in flight when they are independent.
 * HUGE = 1 asks for transparent huge pages (madvise), 0 forbids them.
 *
 *   gcc -O2 -o target/memlat bench/memlat.c && target/memlat SIZE_MIB CHAINS HUGE
 *   e.g. for s in 1 16 1024; do target/memlat $s 1 0; done; target/memlat 1024 8 0
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static uint64_t state = 88172645463325252ull;
static uint64_t xorshift(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: memlat SIZE_MIB CHAINS HUGE (e.g. memlat 1024 1 0)\n");
        return 2;
    }
    size_t mib = strtoul(argv[1], NULL, 10), chains = strtoul(argv[2], NULL, 10);
    int huge = atoi(argv[3]);
    size_t lines = (mib << 20) / 64;
    if (mib == 0 || chains == 0 || chains > 64 || lines < 2 * chains) {
        fprintf(stderr, "memlat: SIZE_MIB must be at least 1 and CHAINS between 1 and 64\n");
        return 2;
    }
    char *buf = mmap(NULL, lines * 64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (buf == MAP_FAILED) {
        perror("memlat: mmap");
        return 2;
    }
    madvise(buf, lines * 64, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    uint32_t *order = malloc(lines * sizeof *order);
    if (!order) {
        perror("memlat: malloc");
        return 2;
    }
    for (size_t i = 0; i < lines; i++) order[i] = (uint32_t)i;
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j = xorshift() % (i + 1);
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    /* CHAINS disjoint cycles, each through its share of the lines in random order. */
    size_t per = lines / chains;
    char *at[64];
    for (size_t c = 0; c < chains; c++) {
        for (size_t i = 0; i < per; i++) {
            size_t from = order[c * per + i], to = order[c * per + (i + 1) % per];
            *(char **)(buf + from * 64) = buf + to * 64;
        }
        at[c] = buf + (size_t)order[c * per] * 64;
    }
    size_t rounds = 20000000 / chains;
    for (size_t i = 0; i < rounds / 10; i++)
        for (size_t c = 0; c < chains; c++) at[c] = *(char **)at[c];
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t i = 0; i < rounds; i++)
        for (size_t c = 0; c < chains; c++) at[c] = *(char **)at[c];
    clock_gettime(CLOCK_MONOTONIC, &t1);
    uintptr_t sink = 0;
    for (size_t c = 0; c < chains; c++) sink ^= (uintptr_t)at[c];
    double ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (double)(rounds * chains);
    printf("%zu MiB, %zu chain%s, huge pages %s: %.1f ns per read (%lx)\n", mib, chains, chains == 1 ? "" : "s",
           huge ? "asked" : "off", ns, (unsigned long)(sink & 0xf));
    return 0;
}
