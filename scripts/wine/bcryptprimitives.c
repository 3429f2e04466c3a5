/* bcryptprimitives.dll for Wine 8.0 (make test-windows only, never shipped).
 *
 * The Go runtime (1.24 and later) loads bcryptprimitives.dll at start and
 * takes its random bytes from ProcessPrng; Wine 8.0, Debian 12's, has no such
 * DLL, so every Go program dies before main ("bcryptprimitives.dll not
 * found"). This one exports ProcessPrng on top of RtlGenRandom
 * (advapi32!SystemFunction036), which Wine has. Windows 10 and later ship
 * the real one. */
#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
	while (len > 0) {
		ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
		if (!RtlGenRandom(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
