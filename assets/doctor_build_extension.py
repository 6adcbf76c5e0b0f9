# cuda-setup doctor --build-extension: builds a minimal PyTorch CUDA extension in the
# current folder (a fresh temp folder), imports it, and, when torch sees a GPU, runs its
# kernel once. The build is `setup.py build_ext --inplace` with torch's BuildExtension:
# it needs setuptools, not ninja (BuildExtension uses ninja when it is there) and no
# network. The build's output goes to build.log; the last line printed is
# "CUDA_SETUP_EXTENSION {json}". cuda-setup stops everything this starts at its timeout.
import json
import os
import subprocess
import sys
import traceback

NAME = "cuda_setup_doctor_ext"

KERNEL = r"""
#include <cuda_runtime.h>

__global__ void add_one_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}

void add_one_launch(const float* x, float* y, int n) {
    add_one_kernel<<<(n + 255) / 256, 256>>>(x, y, n);
}
"""

BINDING = r"""
#include <torch/extension.h>

void add_one_launch(const float* x, float* y, int n);

torch::Tensor add_one(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat && x.is_contiguous(),
                "add_one takes a contiguous float32 CUDA tensor");
    auto y = torch::empty_like(x);
    add_one_launch(x.data_ptr<float>(), y.data_ptr<float>(), (int)x.numel());
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("add_one", &add_one, "x + 1, on the GPU");
}
"""

SETUP = r"""
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="%s",
    ext_modules=[CUDAExtension("%s", ["binding.cpp", "kernel.cu"])],
    cmdclass={"build_ext": BuildExtension},
)
""" % (NAME, NAME)

out = {"outcome": "error", "exit_code": None, "error": None, "kernel": None, "arch_list": None}


def text(e):
    return "%s: %s" % (type(e).__name__, e)


def write(name, body):
    with open(name, "w") as f:
        f.write(body)


def main():
    try:
        import setuptools  # noqa: F401
    except Exception as e:
        out["outcome"] = "no_setuptools"
        out["error"] = text(e)
        return
    write("kernel.cu", KERNEL)
    write("binding.cpp", BINDING)
    write("setup.py", SETUP)
    env = dict(os.environ)
    import torch

    gpu = False
    try:
        gpu = bool(torch.cuda.is_available()) and torch.cuda.device_count() > 0
    except Exception:
        pass
    if not gpu and not env.get("TORCH_CUDA_ARCH_LIST"):
        # Without a visible GPU torch has no architecture to compile for; sm_80 is one
        # every CUDA from 11.0 to 13.x compiles.
        env["TORCH_CUDA_ARCH_LIST"] = "8.0"
        out["arch_list"] = "8.0"
    with open("build.log", "wb") as log:
        p = subprocess.run(
            [sys.executable, "setup.py", "build_ext", "--inplace"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
    out["exit_code"] = p.returncode
    if p.returncode != 0:
        out["outcome"] = "build_failed"
        return
    sys.path.insert(0, os.getcwd())
    try:
        ext = __import__(NAME)
    except Exception as e:
        out["outcome"] = "import_failed"
        out["error"] = text(e)
        return
    out["outcome"] = "built"
    if not gpu:
        out["kernel"] = "no_gpu"
        return
    try:
        x = torch.arange(8, dtype=torch.float32, device="cuda")
        y = ext.add_one(x)
        torch.cuda.synchronize()
        out["kernel"] = "ran" if y.cpu().tolist() == [float(i + 1) for i in range(8)] else "wrong"
    except Exception as e:
        out["kernel"] = text(e)


try:
    main()
except Exception as e:
    out["error"] = text(e) + "\n" + traceback.format_exc()
sys.stdout.write("CUDA_SETUP_EXTENSION " + json.dumps(out) + "\n")
sys.stdout.flush()
