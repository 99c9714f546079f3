// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Test workload: holds N MiB of memory filled from a seed and re-checks every byte on SIGUSR1.
 * With a RATE-FILE it also measures its own throughput: SIGUSR2 starts (and the next one pauses) a
 * thread that reads one word of every page in a scattered order, and appends "SECONDS MIB/S" lines
 * (CLOCK_BOOTTIME, the clock of /proc/uptime) to RATE-FILE about every 200 ms.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024u * 1024u)
#define MAX_MIB 65536u
#define WORDS_PER_MIB (MIB / sizeof(uint64_t))
/*
 * Seconds between progress lines while filling or verifying: a large fill or a verify that pages
 * everything back in takes 20 s and more under TCG, and the QEMU harness counts a guest silent
 * for 30 s as hung.
 */
#define PROGRESS_SECONDS 5.0

/* xorshift64*: cheap, and its output does not compress, so the memory really has to travel. */
static uint64_t next_word(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* Each MiB has its own stream, so it can be checked in any order. */
static uint64_t chunk_seed(uint64_t seed, size_t chunk)
{
	uint64_t s = seed ^ (0x9E3779B97F4A7C15ULL * (chunk + 1));

	return s ? s : 1;
}

static double monotonic(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* One line about every PROGRESS_SECONDS: "workload: WHAT: DONE of TOTAL MiB". */
static void progress(const char *what, size_t done, size_t total, double *next)
{
	double now = monotonic();

	if (*next == 0) {
		*next = now + PROGRESS_SECONDS;
	} else if (now >= *next) {
		printf("workload: %s: %zu of %zu MiB\n", what, done, total);
		fflush(stdout);
		*next = now + PROGRESS_SECONDS;
	}
}

static uint64_t fill(uint64_t *mem, size_t chunks, uint64_t seed)
{
	uint64_t sum = 0;
	double next = 0;

	for (size_t c = 0; c < chunks; c++) {
		progress("filling", c, chunks, &next);
		uint64_t s = chunk_seed(seed, c), *w = mem + c * WORDS_PER_MIB;

		for (size_t i = 0; i < WORDS_PER_MIB; i++) {
			w[i] = next_word(&s);
			sum ^= w[i] * (c * WORDS_PER_MIB + i + 1);
		}
	}
	return sum;
}

/*
 * Checks the last MiB first: after the fill, the first pages are the ones in swap, and a
 * front-to-back pass would push out each page just before it is needed (the whole area would
 * go through swap). Back to front, the resident pages are checked before they are evicted.
 */
static uint64_t verify(const uint64_t *mem, size_t chunks, uint64_t seed, size_t *bad, size_t *first_bad)
{
	uint64_t sum = 0;
	double next = 0;

	*bad = 0;
	*first_bad = chunks * WORDS_PER_MIB;
	for (size_t c = chunks; c-- > 0;) {
		uint64_t s = chunk_seed(seed, c);

		progress("verifying", chunks - 1 - c, chunks, &next);
		const uint64_t *w = mem + c * WORDS_PER_MIB;

		for (size_t i = 0; i < WORDS_PER_MIB; i++) {
			size_t at = c * WORDS_PER_MIB + i;

			if (w[i] != next_word(&s)) {
				if (*bad == 0 || at < *first_bad)
					*first_bad = at;
				(*bad)++;
			}
			sum ^= w[i] * (at + 1);
		}
	}
	return sum;
}

struct rate {
	const uint64_t *mem;
	size_t pages;
	int fd;
	volatile int running; /* toggled by SIGUSR2 in main() */
	volatile int quit;
	pthread_mutex_t lock;
	pthread_cond_t wake;
};

static double boottime(void)
{
	struct timespec t;

	clock_gettime(CLOCK_BOOTTIME, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A stride coprime to the page count visits every page once per round, far apart in memory. */
static size_t stride_for(size_t pages)
{
	size_t s = pages / 2 + 7919;

	for (;; s++) {
		size_t a = s, b = pages;

		while (b) {
			size_t t = a % b;

			a = b;
			b = t;
		}
		if (a == 1)
			return s % pages ? s % pages : 1;
	}
}

static void *rate_main(void *arg)
{
	struct rate *r = arg;
	size_t words_per_page = 4096 / sizeof(uint64_t), stride = stride_for(r->pages), at = 0;
	volatile uint64_t sink = 0;

	for (;;) {
		double t0;
		size_t n = 0;
		char line[64];
		int len;

		pthread_mutex_lock(&r->lock);
		while (!r->running && !r->quit)
			pthread_cond_wait(&r->wake, &r->lock);
		pthread_mutex_unlock(&r->lock);
		if (r->quit)
			return NULL;
		t0 = boottime();
		do {
			for (int i = 0; i < 256; i++, n++) {
				sink += r->mem[at * words_per_page];
				at += stride;
				if (at >= r->pages)
					at -= r->pages;
			}
		} while (boottime() - t0 < 0.2);
		len = snprintf(line, sizeof(line), "%.3f %.1f\n", boottime(),
			       (double)n * 4096 / (1024.0 * 1024.0) / (boottime() - t0));
		if (write(r->fd, line, (size_t)len) < 0)
			return NULL;
	}
}

static int usage(void)
{
	fprintf(stderr, "usage: workload MIB SEED [READY-FILE [RATE-FILE]]\n"
			"  fills MIB MiB with a pattern from SEED, prints 'workload: ready', creates READY-FILE,\n"
			"  waits for SIGUSR1, then checks every byte; a progress line every 5 s of either.\n"
			"  SIGUSR2 starts and pauses the throughput measurement written to RATE-FILE.\n");
	return 2;
}

int main(int argc, char **argv)
{
	unsigned long mib;
	uint64_t seed, sum, again;
	size_t words, bad, first_bad;
	uint64_t *mem;
	sigset_t set;
	int sig;

	struct rate rate = { .fd = -1 };
	pthread_t rate_thread;

	if (argc < 3 || argc > 5)
		return usage();
	mib = strtoul(argv[1], NULL, 10);
	seed = strtoull(argv[2], NULL, 0);
	if (mib == 0 || mib > MAX_MIB)
		return usage();

	/* Block SIGUSR1 before announcing readiness so an early signal is not lost. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0) {
		perror("workload: sigprocmask");
		return 1;
	}

	words = (size_t)mib * MIB / sizeof(uint64_t);
	mem = mmap(NULL, (size_t)mib * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "workload: cannot map %lu MiB: %s\n", mib, strerror(errno));
		return 1;
	}
	sum = fill(mem, mib, seed);
	printf("workload: ready (%lu MiB, checksum %016" PRIx64 ")\n", mib, sum);
	fflush(stdout);
	if (argc >= 4) {
		int fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0) {
			fprintf(stderr, "workload: cannot create %s: %s\n", argv[3], strerror(errno));
			return 1;
		}
		close(fd);
	}

	if (argc == 5) {
		rate.fd = open(argv[4], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		rate.mem = mem;
		rate.pages = (size_t)mib * 256;
		pthread_mutex_init(&rate.lock, NULL);
		pthread_cond_init(&rate.wake, NULL);
		if (rate.fd < 0 || pthread_create(&rate_thread, NULL, rate_main, &rate) != 0) {
			fprintf(stderr, "workload: cannot measure into %s\n", argv[4]);
			return 1;
		}
	}
	for (;;) {
		if (sigwait(&set, &sig) != 0) {
			fprintf(stderr, "workload: sigwait failed\n");
			return 1;
		}
		if (sig == SIGUSR1)
			break;
		if (rate.fd >= 0) {
			pthread_mutex_lock(&rate.lock);
			rate.running = !rate.running;
			pthread_cond_signal(&rate.wake);
			pthread_mutex_unlock(&rate.lock);
		}
	}
	if (rate.fd >= 0) {
		pthread_mutex_lock(&rate.lock);
		rate.running = 0;
		rate.quit = 1;
		pthread_cond_signal(&rate.wake);
		pthread_mutex_unlock(&rate.lock);
		pthread_join(rate_thread, NULL);
	}

	again = verify(mem, mib, seed, &bad, &first_bad);
	if (bad == 0 && again == sum) {
		printf("workload: nothing lost (%lu MiB verified, checksum %016" PRIx64 ")\n", mib, again);
		return 0;
	}
	printf("workload: MISMATCH: %zu of %zu words differ, first at byte %zu (checksum %016" PRIx64
	       ", expected %016" PRIx64 ")\n", bad, words, first_bad * sizeof(uint64_t), again, sum);
	return 1;
}
