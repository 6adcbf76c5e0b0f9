"""Writes a real-layout cuDNN 9.10 (CUDA 11) Windows zip: NVIDIA's folder and file
names, a real-format cudnn_version.h (the 9.27 fixture with its numbers changed)."""
import os
import sys
import zipfile

out, fixture = sys.argv[1], sys.argv[2]
top = "cudnn-windows-x86_64-9.10.2.21_cuda11-archive"
dlls = ["cudnn64_9.dll", "cudnn_graph64_9.dll", "cudnn_ops64_9.dll", "cudnn_cnn64_9.dll", "cudnn_adv64_9.dll",
        "cudnn_heuristic64_9.dll", "cudnn_engines_precompiled64_9.dll", "cudnn_engines_runtime_compiled64_9.dll"]
header = open(fixture).read().replace("#define CUDNN_MINOR 27", "#define CUDNN_MINOR 10").replace(
    "#define CUDNN_PATCHLEVEL 0", "#define CUDNN_PATCHLEVEL 2")
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for d in dlls:
        z.writestr(f"{top}/bin/{d}", b"MZ" + os.urandom(30000) + bytes(20000))
        # Both names NVIDIA's zip has: cudnn64_9.lib and the one developers link, cudnn.lib.
        z.writestr(f"{top}/lib/x64/{d[:-4]}.lib", b"import library")
        z.writestr(f"{top}/lib/x64/{d[:-4].removesuffix('64_9')}.lib", b"import library")
    for h in ["cudnn.h", "cudnn_adv.h", "cudnn_backend.h", "cudnn_cnn.h", "cudnn_graph.h", "cudnn_ops.h"]:
        z.writestr(f"{top}/include/{h}", f"/* {h} */\n")
    z.writestr(f"{top}/include/cudnn_version.h", header)
    z.writestr(f"{top}/LICENSE", "NVIDIA Software License Agreement (stand-in text)\n")
