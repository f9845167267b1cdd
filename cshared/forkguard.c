// forkguard.c: the public functions of crawlcheck.h, in C, so that a call
// in a forked child is answered before the Go runtime is entered.
//
// The library holds a Go runtime, started when the library is loaded: its
// threads (scheduler, collector, signal handling) exist in the process that
// loaded it and in no child that process forks, and a lock one of them held
// at the fork stays held forever. Entering Go in a forked child therefore
// hangs, whether or not the parent ever called the library. So each call
// first asks whether this is the process that loaded the library (the pid
// recorded at load, and a pthread_atfork child handler for good measure);
// in any other process it answers a static error envelope, code
// "forked_process", malloc-allocated like every response, and never
// touches Go. crawlcheck_free is free(3), in every process.

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "_cgo_export.h"

// On Windows a DLL exports only what is marked for export, and Go's linker
// marks its own //export functions (crawlcheck_go_*) alone: these four, the
// library's interface, are marked here. Elsewhere every global symbol of a
// shared library is exported as it is. (Windows has no fork: there the
// guard below never trips.)
#ifdef _WIN32
#define CRAWLCHECK_API __declspec(dllexport)
#else
#define CRAWLCHECK_API
#endif

static pid_t loaded_by;
static volatile int forked;

static void forkguard_child(void) { forked = 1; }

__attribute__((constructor)) static void forkguard_init(void) {
	loaded_by = getpid();
	pthread_atfork(NULL, NULL, forkguard_child);
}

static int in_fork_child(void) { return forked || getpid() != loaded_by; }

static const char fork_envelope[] =
	"{\"error\":{\"code\":\"forked_process\",\"message\":\"libcrawlcheck cannot run in a process "
	"forked from the one that loaded it: the Go runtime inside it does not survive fork. Load the "
	"library after the fork (in the child), or start the child with spawn or exec.\"},\"ok\":false}";

CRAWLCHECK_API uint32_t crawlcheck_abi_version(void) {
	if (in_fork_child())
		return 0;
	return crawlcheck_go_abi_version();
}

CRAWLCHECK_API uint8_t *crawlcheck_call(const char *op, const uint8_t *req, size_t req_len, size_t *out_len) {
	if (out_len == NULL)
		return NULL;
	if (in_fork_child()) {
		size_t n = sizeof fork_envelope - 1;
		uint8_t *out = malloc(n + 1);
		if (out == NULL)
			abort(); /* as the Go side does: a response is never NULL */
		memcpy(out, fork_envelope, n + 1);
		*out_len = n;
		return out;
	}
	return crawlcheck_go_call((char *)op, (uint8_t *)req, req_len, out_len);
}

CRAWLCHECK_API void crawlcheck_free(uint8_t *p) { free(p); }

CRAWLCHECK_API uint8_t *crawlcheck_call_raw(const char *op, const uint8_t *req, size_t req_len, const uint8_t *att,
                             size_t att_len, size_t *out_len) {
	if (out_len == NULL)
		return NULL;
	if (in_fork_child())
		return crawlcheck_call(op, req, req_len, out_len); /* the same static envelope */
	return crawlcheck_go_call_raw((char *)op, (uint8_t *)req, req_len, (uint8_t *)att, att_len, out_len);
}
