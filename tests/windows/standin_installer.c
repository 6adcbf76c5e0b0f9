/* A stand-in for NVIDIA's cuda_11.8.0_522.06_windows.exe, built by tests/windows/run.sh.
   As the installer: needs -s, installs the sub-packages named after it (all when none)
   under %ProgramFiles%\NVIDIA GPU Computing Toolkit\CUDA\v11.8, and copies itself there
   as nvcc.exe. As nvcc.exe: prints a real-format `nvcc --version`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

static const char *NVCC =
    "nvcc: NVIDIA (R) Cuda compiler driver\r\n"
    "Copyright (c) 2005-2022 NVIDIA Corporation\r\n"
    "Built on Wed_Sep_21_10:41:10_Pacific_Daylight_Time_2022\r\n"
    "Cuda compilation tools, release 11.8, V11.8.89\r\n"
    "Build cuda_11.8.r11.8/compiler.31833905_0\r\n";

static int argc_g;
static char **argv_g;

static int wants(const char *pkg) {
    int named = 0;
    for (int i = 1; i < argc_g; i++) {
        if (argv_g[i][0] == '-') continue;
        named = 1;
        if (strcmp(argv_g[i], pkg) == 0) return 1;
    }
    return !named;
}

static void put(const char *dir, const char *name, const char *text) {
    char path[MAX_PATH * 2];
    snprintf(path, sizeof path, "%s\\%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f) { fputs(text, f); fclose(f); }
}

int main(int argc, char **argv) {
    argc_g = argc;
    argv_g = argv;
    const char *base = strrchr(argv[0], '\\');
    base = base ? base + 1 : argv[0];
    if (_stricmp(base, "nvcc.exe") == 0 || _stricmp(base, "nvcc") == 0) {
        fputs(NVCC, stdout);
        return 0;
    }
    int silent = 0;
    for (int i = 1; i < argc; i++) if (strcmp(argv[i], "-s") == 0) silent = 1;
    if (!silent) { fputs("not silent: a window would open\n", stderr); return 2; }
    const char *pf = getenv("ProgramFiles");
    if (!pf) pf = "C:\\Program Files";
    char dir[MAX_PATH], sub[MAX_PATH * 2];
    snprintf(dir, sizeof dir, "%s\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8", pf);
    const char *parts[] = {"\\NVIDIA GPU Computing Toolkit", "\\NVIDIA GPU Computing Toolkit\\CUDA", "\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8"};
    for (int i = 0; i < 3; i++) { snprintf(sub, sizeof sub, "%s%s", pf, parts[i]); CreateDirectoryA(sub, NULL); }
    const char *dirs[] = {"bin", "include", "lib", "lib\\x64", "libnvvp"};
    for (int i = 0; i < 5; i++) { snprintf(sub, sizeof sub, "%s\\%s", dir, dirs[i]); CreateDirectoryA(sub, NULL); }
    put(dir, "version.json", "{\"cuda\":{\"name\":\"CUDA SDK\",\"version\":\"11.8.0\"}}");
    snprintf(sub, sizeof sub, "%s\\bin", dir);
    if (wants("nvcc_11.8")) {
        char me[MAX_PATH], nvcc[MAX_PATH * 2];
        GetModuleFileNameA(NULL, me, sizeof me);
        snprintf(nvcc, sizeof nvcc, "%s\\nvcc.exe", sub);
        CopyFileA(me, nvcc, FALSE);
    }
    char lib[MAX_PATH * 2];
    snprintf(lib, sizeof lib, "%s\\lib\\x64", dir);
    /* What a developer links, as NVIDIA's sub-packages lay it down: the runtime's import
       libraries with cudart, cuBLAS's DLLs with cublas, its .lib files with cublas_dev. */
    if (wants("cublas_11.8")) {
        put(sub, "cublas64_11.dll", "MZ stand-in cublas");
        put(sub, "cublasLt64_11.dll", "MZ stand-in cublasLt");
    }
    if (wants("cublas_dev_11.8")) {
        put(lib, "cublas.lib", "!<arch>\n");
        put(lib, "cublasLt.lib", "!<arch>\n");
    }
    if (wants("cudart_11.8")) {
        put(sub, "cudart64_110.dll", "MZ stand-in cudart");
        put(lib, "cudart.lib", "!<arch>\n");
        put(lib, "cuda.lib", "!<arch>\n");
        snprintf(sub, sizeof sub, "%s\\include", dir);
        put(sub, "cuda_runtime.h", "/* cuda_runtime.h */");
    }
    printf("installed into %s\n", dir);
    return 0;
}
