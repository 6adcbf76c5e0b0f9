"""A static PEP 503 index (what `python -m http.server` can serve): simple/<project>/index.html
with `#sha256=` links into files/, for every wheel given, plus a real-layout
nvidia-cudnn-cu13 9.27.0.42 wheel (NVIDIA's names; the real one is 400 MB)."""
import hashlib
import os
import re
import sys
import zipfile

out, fixture, wheels = sys.argv[1], sys.argv[2], sys.argv[3:]
os.makedirs(f"{out}/files", exist_ok=True)

dist = "nvidia_cudnn_cu13-9.27.0.42"
cudnn = f"{out}/files/{dist}-py3-none-win_amd64.whl"
dlls = ["cudnn64_9.dll", "cudnn_adv64_9.dll", "cudnn_cnn64_9.dll", "cudnn_engines_precompiled64_9.dll",
        "cudnn_engines_runtime_compiled64_9.dll", "cudnn_engines_tensor_ir64_9.dll", "cudnn_ext64_9.dll",
        "cudnn_graph64_9.dll", "cudnn_heuristic64_9.dll", "cudnn_ops64_9.dll"]
with zipfile.ZipFile(cudnn, "w", zipfile.ZIP_DEFLATED) as z:
    for d in dlls:
        # A real DLL with an export table when run.sh built one (its import library is
        # made from it, as from NVIDIA's), else bytes that only look like one.
        dll = os.environ.get("CUDNN_STANDIN_DLL")
        z.writestr(f"nvidia/cudnn/bin/{d}", open(dll, "rb").read() if dll else b"MZ" + os.urandom(30000) + bytes(20000))
    for h in ["cudnn.h", "cudnn_adv.h", "cudnn_backend.h", "cudnn_cnn.h", "cudnn_graph.h", "cudnn_ops.h"]:
        z.writestr(f"nvidia/cudnn/include/{h}", f"/* {h} */\n")
    z.writestr("nvidia/cudnn/include/cudnn_version.h", open(fixture).read())
    z.writestr(f"{dist}.dist-info/licenses/License.txt", "NVIDIA Software License Agreement (stand-in text)\n")
    z.writestr(f"{dist}.dist-info/METADATA", "Metadata-Version: 2.4\nName: nvidia-cudnn-cu13\nVersion: 9.27.0.42\n")
    z.writestr(f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\n")
    z.writestr(f"{dist}.dist-info/RECORD", "")

projects = {}
for w in wheels + [cudnn]:
    name = os.path.basename(w)
    dst = f"{out}/files/{name}"
    if os.path.abspath(w) != os.path.abspath(dst):
        with open(w, "rb") as src, open(dst, "wb") as o:
            o.write(src.read())
    project = re.sub(r"[-_.]+", "-", name.split("-")[0]).lower()
    sha = hashlib.sha256(open(dst, "rb").read()).hexdigest()
    projects.setdefault(project, []).append(f'<a href="../../files/{name}#sha256={sha}">{name}</a><br/>')
for project, links in projects.items():
    os.makedirs(f"{out}/simple/{project}", exist_ok=True)
    with open(f"{out}/simple/{project}/index.html", "w") as f:
        f.write(f"<!DOCTYPE html>\n<html><body><h1>Links for {project}</h1>\n" + "\n".join(links) + "\n</body></html>\n")
