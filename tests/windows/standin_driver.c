/* A stand-in for NVIDIA's display driver installer, built by tests/windows/run.sh and
   served unsigned at NVIDIA's path: cuda-setup must refuse it before it runs. Were it
   run, it would leave %SystemDrive%\driver-standin-ran.txt with its arguments. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    const char *drive = getenv("SystemDrive");
    char path[260];
    snprintf(path, sizeof path, "%s\\driver-standin-ran.txt", drive ? drive : "C:");
    FILE *f = fopen(path, "wb");
    if (f) {
        for (int i = 1; i < argc; i++) fprintf(f, "%s ", argv[i]);
        fputs("\n", f);
        fclose(f);
    }
    return 0;
}
