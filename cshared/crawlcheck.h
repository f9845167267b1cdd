/*
 * crawlcheck.h — the CrawlCheck verifier core as a C library (libcrawlcheck.so).
 *
 * One function does all the work: crawlcheck_call(op, request) -> response,
 * or, since ABI 2, crawlcheck_call_raw(op, request, attachments) -> response,
 * where the documents of the request (pages, lockfile, ...) travel as raw
 * bytes beside it instead of as escaped JSON strings inside it.
 * The request is a UTF-8 JSON document, the response a canonical (RFC 8785)
 * JSON envelope, byte-identical to what native Go, the wasm module and every
 * binding produce for the same input:
 *
 *     {"ok":true,"result":<result>}
 *     {"error":{"code":"<code>","message":"<text>"},"ok":false}
 *
 * The ops, their request shapes and the closed list of error codes are in
 * docs/abi.md. This header is the stable interface; the header cgo generates
 * while building the library is an implementation detail and is not shipped.
 *
 * Threads: every function may be called from any thread, concurrently.
 * The library holds no state between calls. It contains a Go runtime, so a
 * process can load it once; do not fork after the first call.
 */
#ifndef CRAWLCHECK_H
#define CRAWLCHECK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI version this library implements (docs/abi.md). Check it equals
 * CRAWLCHECK_ABI_VERSION before the first call. */
#define CRAWLCHECK_ABI_VERSION 2u

/* Requests larger than this many bytes (for crawlcheck_call_raw, request and
 * attachments together) are refused with an input_too_large envelope before
 * the library reads them. */
#define CRAWLCHECK_MAX_REQUEST ((size_t)64 << 20)

uint32_t crawlcheck_abi_version(void);

/* Runs op (a NUL-terminated ASCII name, e.g. "version") on the req_len bytes
 * at req, which stay owned by the caller and are not retained.
 *
 * Returns the response, malloc-allocated, and stores its length in *out_len.
 * A NUL byte follows the response (not counted in *out_len), so it is also a
 * C string: JSON escapes every NUL inside it. The caller releases it with
 * crawlcheck_free.
 * Failures of any kind — an unknown op, a malformed request, a request over
 * CRAWLCHECK_MAX_REQUEST, even a bug in the library (a recovered panic,
 * code "internal") — are error envelopes, never NULL.
 *
 * Returns NULL only when out_len is NULL (there is nowhere to put the length).
 * req may be NULL when req_len is 0; op NULL is treated as "". */
uint8_t *crawlcheck_call(const char *op, const uint8_t *req, size_t req_len, size_t *out_len);

/* ABI 2: crawlcheck_call with attachments. att holds att_len bytes of frames,
 * each a 4-byte little-endian unsigned length followed by that many bytes;
 * frame i is attachment i. A document field of the request may hold
 * {"$raw": i} in place of a JSON string: the field's bytes are attachment i,
 * exactly as if they had been that string, except that they need not be
 * valid UTF-8 (a page that is not becomes a response_malformed observation,
 * any other document an error). A framing error, an index out of range and
 * an attachment no field references are bad_request envelopes. Ownership,
 * the response and its release are as for crawlcheck_call; att may be NULL
 * when att_len is 0. See docs/abi.md. */
uint8_t *crawlcheck_call_raw(const char *op, const uint8_t *req, size_t req_len,
                             const uint8_t *att, size_t att_len, size_t *out_len);

/* Releases a response from crawlcheck_call or crawlcheck_call_raw. NULL is
 * ignored. */
void crawlcheck_free(uint8_t *p);

#ifdef __cplusplus
}
#endif

#endif /* CRAWLCHECK_H */
