/*
 * bcryptprimitives.dll for wine: TEST SCAFFOLDING, not part of any product.
 *
 * Every Go program for Windows since Go 1.22 draws its random bytes from
 * ProcessPrng, which the Go runtime loads from
 * %SystemRoot%\system32\bcryptprimitives.dll at start
 * (runtime.loadOptionalSyscalls) and dies without: "fatal error:
 * bcryptprimitives.dll not found". Real Windows has had that DLL since
 * Windows 10 (and Go 1.26 supports nothing older); Debian bookworm's wine 8.0
 * does not ship it. This is the one function the Go runtime asks of it, so
 * that the Windows CLI, the Windows C library and the test server can be run
 * under wine here (scripts/wine/prefix.sh puts it in a throwaway prefix;
 * docs/release.md, "Windows under wine").
 *
 * ProcessPrng(data, len) fills data with len random bytes and returns TRUE;
 * here from RtlGenRandom (advapi32's SystemFunction036, wine's own
 * implementation, which reads the host's /dev/urandom), in chunks of at
 * most 256 MiB since it takes a ULONG length. No C library is linked:
 * the declarations below are the Windows ABI's, and the entry point only
 * says yes to every attach.
 */

typedef unsigned char BOOLEAN;
typedef int BOOL;
typedef unsigned long ULONG;
typedef unsigned long long SIZE_T;

__declspec(dllimport) BOOLEAN __stdcall SystemFunction036(void *buf, ULONG len);

__declspec(dllexport) BOOL __stdcall ProcessPrng(unsigned char *data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
		if (!SystemFunction036(data, n))
			return 0;
		data += n;
		len -= n;
	}
	return 1;
}

BOOL __stdcall DllMainCRTStartup(void *module, ULONG reason, void *reserved)
{
	(void)module;
	(void)reason;
	(void)reserved;
	return 1;
}
