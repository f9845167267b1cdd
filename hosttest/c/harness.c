/*
 * harness.c — a C host for libcrawlcheck.so, driven by hosttest.
 *
 * A Go test process cannot load a second Go runtime, so the honest way to
 * test the C library is a C program that dlopens it, exactly as ctypes does.
 * One process runs many calls: requests come framed on stdin, and every
 * length in a frame is a little-endian uint32:
 *
 *     request:  op_len op req_len req att_len att
 *     response: resp_len resp
 *
 * att_len 0xFFFFFFFF (and no att) asks for crawlcheck_call; any other
 * att_len for crawlcheck_call_raw with those attachment bytes (ABI 2).
 *
 * Usage: harness LIB MODE [ARGS]
 *
 *   serve             answer each request frame with a response frame, until EOF
 *   threads T N       read all requests; answer each once single-threaded (the
 *                     reference, written as response frames); then T threads
 *                     make N calls each, cycling through the requests, and
 *                     every answer must equal the reference (exit 1 if not)
 *   rss N             read all requests; 1,000 calls to warm up, then N calls;
 *                     print "rss_before_kb=B rss_after_kb=A"
 *   bench             read all requests; time calls to each until 0.5 s has
 *                     passed; print "iterations ns_per_call" per request
 *   bench_cycle       read all requests; time calls cycling through them (as
 *                     threads does) until 0.5 s has passed; print one line
 *                     "iterations ns_per_call"
 *   overcap OP        call OP with a request one byte over the cap whose
 *                     memory is unreadable (PROT_NONE): a library that read
 *                     it would crash. Write the response frame.
 *   overcap_raw OP    the same through crawlcheck_call_raw: request and
 *                     attachments, both unreadable, one byte over together.
 *
 * Diagnostics go to stderr; the exit status is 0 only if all went well.
 *
 * Built for Windows (make wheels cross-builds it with Zig and runs it under
 * wine against the Windows wheel's crawlcheck.dll), it has the serve mode
 * alone: LoadLibrary for dlopen, stdin and stdout in binary mode. The other
 * modes measure or attack this machine's library (threads, memory, fork,
 * unreadable pages) and stay POSIX's.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#include <windows.h>
#else
#include <dlfcn.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#endif

#include "crawlcheck.h"

static uint32_t (*abi_version)(void);
static uint8_t *(*call)(const char *, const uint8_t *, size_t, size_t *);
static uint8_t *(*call_raw)(const char *, const uint8_t *, size_t, const uint8_t *, size_t, size_t *);
static void (*free_response)(uint8_t *);

static void die(const char *what) {
	fprintf(stderr, "harness: %s\n", what);
	exit(2);
}

#ifdef _WIN32
/* On Windows, the library is loaded as ctypes loads a DLL (LoadLibrary). */
static HMODULE lib;
static void *sym(const char *name) { return (void *)GetProcAddress(lib, name); }
#else
static void *lib;
static void *sym(const char *name) { return dlsym(lib, name); }
#endif

static void load(const char *path) {
#ifdef _WIN32
	lib = LoadLibraryA(path);
	if (!lib) {
		fprintf(stderr, "harness: LoadLibrary %s: error %lu\n", path, (unsigned long)GetLastError());
		exit(2);
	}
#else
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "harness: dlopen %s: %s\n", path, dlerror());
		exit(2);
	}
#endif
	abi_version = (uint32_t(*)(void))sym("crawlcheck_abi_version");
	call = (uint8_t * (*)(const char *, const uint8_t *, size_t, size_t *)) sym("crawlcheck_call");
	call_raw = (uint8_t * (*)(const char *, const uint8_t *, size_t, const uint8_t *, size_t, size_t *))
		sym("crawlcheck_call_raw");
	free_response = (void (*)(uint8_t *))sym("crawlcheck_free");
	if (!abi_version || !call || !call_raw || !free_response)
		die("library lacks a crawlcheck_ symbol");
	if (abi_version() != CRAWLCHECK_ABI_VERSION) {
		fprintf(stderr, "harness: library abi %u, harness %u\n", abi_version(), CRAWLCHECK_ABI_VERSION);
		exit(2);
	}
}

/* ---- frames ---- */

/* read_full returns 1 on success, 0 on EOF before the first byte. */
static int read_full(void *buf, size_t n) {
	size_t got = 0;
	while (got < n) {
		size_t r = fread((char *)buf + got, 1, n - got, stdin);
		if (r == 0) {
			if (got == 0)
				return 0;
			die("truncated frame on stdin");
		}
		got += r;
	}
	return 1;
}

static int read_u32(uint32_t *v) {
	uint8_t b[4];
	if (!read_full(b, 4))
		return 0;
	*v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
	return 1;
}

static void write_frame(const uint8_t *p, size_t n) {
	uint8_t b[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
	if (fwrite(b, 1, 4, stdout) != 4 || fwrite(p, 1, n, stdout) != n)
		die("write to stdout failed");
}

typedef struct {
	char *op; /* NUL-terminated copy */
	uint8_t *req;
	uint32_t req_len;
	uint8_t *att; /* NULL: crawlcheck_call */
	uint32_t att_len;
	uint8_t *want; /* reference response (threads mode) */
	size_t want_len;
} request;

/* read_request reads one request frame; 0 at EOF. */
static int read_request(request *r) {
	uint32_t n;
	memset(r, 0, sizeof *r);
	if (!read_u32(&n))
		return 0;
	r->op = malloc((size_t)n + 1);
	if (!r->op)
		die("out of memory");
	if (n && !read_full(r->op, n))
		die("truncated op");
	r->op[n] = 0;
	if (!read_u32(&r->req_len))
		die("truncated frame: no request length");
	r->req = malloc(r->req_len ? r->req_len : 1);
	if (!r->req)
		die("out of memory");
	if (r->req_len && !read_full(r->req, r->req_len))
		die("truncated request");
	if (!read_u32(&r->att_len))
		die("truncated frame: no attachments length");
	if (r->att_len == 0xFFFFFFFFu) {
		r->att_len = 0;
		return 1;
	}
	r->att = malloc(r->att_len ? r->att_len : 1);
	if (!r->att)
		die("out of memory");
	if (r->att_len && !read_full(r->att, r->att_len))
		die("truncated attachments");
	return 1;
}

/* do_call makes the call a request frame asks for. */
static uint8_t *do_call(const request *r, size_t *n) {
	if (r->att)
		return call_raw(r->op, r->req, r->req_len, r->att, r->att_len, n);
	return call(r->op, r->req, r->req_len, n);
}

#ifndef _WIN32
static request *read_all(size_t *count) {
	size_t n = 0, cap = 16;
	request *rs = malloc(cap * sizeof *rs);
	if (!rs)
		die("out of memory");
	for (;;) {
		if (n == cap) {
			cap *= 2;
			rs = realloc(rs, cap * sizeof *rs);
			if (!rs)
				die("out of memory");
		}
		if (!read_request(&rs[n]))
			break;
		n++;
	}
	if (n == 0)
		die("no requests on stdin");
	*count = n;
	return rs;
}

#endif

/* ---- modes ---- */

static int serve(void) {
	request r;
	while (read_request(&r)) {
		size_t n;
		uint8_t *resp = do_call(&r, &n);
		write_frame(resp, n);
		free_response(resp);
		free(r.op);
		free(r.req);
		free(r.att);
		fflush(stdout);
	}
	return 0;
}

#ifndef _WIN32
typedef struct {
	request *rs;
	size_t count;
	long calls;
	long offset;
	long mismatches;
} worker;

static void *work(void *arg) {
	worker *w = arg;
	for (long i = 0; i < w->calls; i++) {
		request *r = &w->rs[(size_t)(w->offset + i) % w->count];
		size_t n;
		uint8_t *resp = do_call(r, &n);
		if (n != r->want_len || memcmp(resp, r->want, n) != 0)
			w->mismatches++;
		free_response(resp);
	}
	return NULL;
}

static int threads(int nthreads, long calls) {
	size_t count;
	request *rs = read_all(&count);
	for (size_t i = 0; i < count; i++) {
		rs[i].want = do_call(&rs[i], &rs[i].want_len);
		write_frame(rs[i].want, rs[i].want_len);
	}
	pthread_t *ts = calloc((size_t)nthreads, sizeof *ts);
	worker *ws = calloc((size_t)nthreads, sizeof *ws);
	if (!ts || !ws)
		die("out of memory");
	for (int t = 0; t < nthreads; t++) {
		ws[t] = (worker){rs, count, calls, (long)t * 7, 0};
		if (pthread_create(&ts[t], NULL, work, &ws[t]) != 0)
			die("pthread_create failed");
	}
	long mismatches = 0;
	for (int t = 0; t < nthreads; t++) {
		pthread_join(ts[t], NULL);
		mismatches += ws[t].mismatches;
	}
	fprintf(stderr, "harness: threads=%d calls=%ld mismatches=%ld\n", nthreads, calls, mismatches);
	return mismatches == 0 ? 0 : 1;
}

static long rss_kb(void) {
	FILE *f = fopen("/proc/self/statm", "r");
	long size, resident;
	if (!f || fscanf(f, "%ld %ld", &size, &resident) != 2)
		die("cannot read /proc/self/statm");
	fclose(f);
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static void run_calls(request *rs, size_t count, long calls) {
	for (long i = 0; i < calls; i++) {
		request *r = &rs[(size_t)i % count];
		size_t n;
		free_response(do_call(r, &n));
	}
}

static int rss(long calls) {
	size_t count;
	request *rs = read_all(&count);
	run_calls(rs, count, 1000);
	long before = rss_kb();
	run_calls(rs, count, calls);
	printf("rss_before_kb=%ld rss_after_kb=%ld\n", before, rss_kb());
	return 0;
}

static double now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int bench(int cycle) {
	size_t count;
	request *rs = read_all(&count);
	size_t groups = cycle ? 1 : count, size = cycle ? count : 1;
	for (size_t i = 0; i < groups; i++) {
		request *r = &rs[i * size];
		long iters = 1;
		double elapsed;
		run_calls(r, size, (long)size); /* warm up */
		for (;;) {
			double start = now_ns();
			run_calls(r, size, iters);
			elapsed = now_ns() - start;
			if (elapsed >= 5e8 || iters >= 1L << 30)
				break;
			long next = elapsed > 0 ? (long)(iters * 6e8 / elapsed) : iters * 100;
			iters = next > iters * 100 ? iters * 100 : (next <= iters ? iters + 1 : next);
		}
		printf("%ld %.1f\n", iters, elapsed / (double)iters);
	}
	return 0;
}

static int overcap(const char *op) {
	size_t len = CRAWLCHECK_MAX_REQUEST + 1;
	void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap failed");
	size_t n;
	if (call(op, p, len, NULL) != NULL)
		die("crawlcheck_call with out_len NULL did not return NULL");
	uint8_t *resp = call(op, p, len, &n);
	write_frame(resp, n);
	free_response(resp);
	munmap(p, len);
	return 0;
}

/* sizemax OP: a request length of SIZE_MAX over unreadable memory, a NULL
 * request with a length, and call_raw with attachments of SIZE_MAX bytes:
 * each must be one envelope, never internal. */
static int sizemax(const char *op) {
	void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap failed");
	size_t n;
	uint8_t *resp = call(op, p, SIZE_MAX, &n);
	write_frame(resp, n);
	free_response(resp);
	resp = call(op, NULL, 5, &n);
	write_frame(resp, n);
	free_response(resp);
	/* call_raw: attachments of SIZE_MAX bytes (the sum overflows size_t) */
	resp = call_raw(op, p, 2, p, SIZE_MAX, &n);
	write_frame(resp, n);
	free_response(resp);
	munmap(p, 4096);
	return 0;
}

/* fork LIB 0|1: load the library (and, with 1, call it), fork, and in the
 * child call crawlcheck_abi_version and crawlcheck_call: both must answer
 * (0, and the forked_process envelope) instead of hanging in the Go runtime.
 * Frames: the child's envelope, the child's abi version as text, then the
 * parent's answer to version after the fork. */
static int forkmode(const char *path, int parent_calls) {
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		die("dlopen failed");
	abi_version = (uint32_t(*)(void))dlsym(lib, "crawlcheck_abi_version");
	call = (uint8_t * (*)(const char *, const uint8_t *, size_t, size_t *)) dlsym(lib, "crawlcheck_call");
	free_response = (void (*)(uint8_t *))dlsym(lib, "crawlcheck_free");
	if (!abi_version || !call || !free_response)
		die("library lacks a crawlcheck_ symbol");
	size_t n;
	uint8_t *resp;
	uint8_t *kept = NULL;
	if (parent_calls) {
		kept = call("version", (const uint8_t *)"{}", 2, &n);
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		die("fork failed");
	if (pid == 0) {
		alarm(10); /* a hang is a failure, not a stuck test */
		char version[16];
		uint32_t v = abi_version();
		resp = call("version", (const uint8_t *)"{}", 2, &n);
		write_frame(resp, n);
		free_response(resp);
		if (kept)
			free_response(kept); /* a response from the parent frees in the child too */
		snprintf(version, sizeof version, "%u", v);
		write_frame((const uint8_t *)version, strlen(version));
		fflush(stdout);
		_exit(0);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("the forked child did not finish: it hung or crashed in the library");
	resp = call("version", (const uint8_t *)"{}", 2, &n);
	write_frame(resp, n);
	free_response(resp);
	if (kept)
		free_response(kept);
	return 0;
}

static int overcap_raw(const char *op) {
	size_t len = CRAWLCHECK_MAX_REQUEST + 1;
	uint8_t *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap failed");
	size_t n, half = len / 2;
	if (call_raw(op, p, half, p + half, len - half, NULL) != NULL)
		die("crawlcheck_call_raw with out_len NULL did not return NULL");
	uint8_t *resp = call_raw(op, p, half, p + half, len - half, &n);
	write_frame(resp, n);
	free_response(resp);
	munmap(p, len);
	return 0;
}

#endif /* !_WIN32 */

#ifdef _WIN32
int main(int argc, char **argv) {
	if (argc != 3 || strcmp(argv[2], "serve") != 0)
		die("usage: harness.exe LIB serve");
	/* Frames are bytes: no CRLF translation, no Ctrl-Z as the end. */
	_setmode(_fileno(stdin), _O_BINARY);
	_setmode(_fileno(stdout), _O_BINARY);
	load(argv[1]);
	int status = serve();
	if (fflush(stdout) != 0)
		die("write to stdout failed");
	return status;
}
#else
int main(int argc, char **argv) {
	if (argc == 4 && strcmp(argv[2], "fork") == 0) {
		int status = forkmode(argv[1], atoi(argv[3]));
		if (fflush(stdout) != 0)
			die("write to stdout failed");
		return status;
	}
	if (argc < 3)
		die("usage: harness LIB serve|threads T N|rss N|bench|bench_cycle|overcap OP|overcap_raw OP|sizemax OP|fork 0|1");
	load(argv[1]);
	const char *mode = argv[2];
	int status;
	if (strcmp(mode, "serve") == 0 && argc == 3)
		status = serve();
	else if (strcmp(mode, "threads") == 0 && argc == 5)
		status = threads(atoi(argv[3]), atol(argv[4]));
	else if (strcmp(mode, "rss") == 0 && argc == 4)
		status = rss(atol(argv[3]));
	else if (strcmp(mode, "bench") == 0 && argc == 3)
		status = bench(0);
	else if (strcmp(mode, "bench_cycle") == 0 && argc == 3)
		status = bench(1);
	else if (strcmp(mode, "overcap") == 0 && argc == 4)
		status = overcap(argv[3]);
	else if (strcmp(mode, "overcap_raw") == 0 && argc == 4)
		status = overcap_raw(argv[3]);
	else if (strcmp(mode, "sizemax") == 0 && argc == 4)
		status = sizemax(argv[3]);
	else
		die("usage: harness LIB serve|threads T N|rss N|bench|bench_cycle|overcap OP|overcap_raw OP|sizemax OP|fork 0|1");
	if (fflush(stdout) != 0)
		die("write to stdout failed");
	return status;
}
#endif
