/* Wine 8.0 lacks bcryptprimitives.dll, whose ProcessPrng every Rust std >= 1.78 imports
   on Windows (shared/windows-cross.md). This stand-in forwards to BCryptGenRandom. */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
