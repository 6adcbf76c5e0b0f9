# cuda-setup doctor's probe: prints one line "CUDA_SETUP_DOCTOR {json}" (ASCII).
# It runs in the user's interpreter: Python 3 syntax without f-strings (3.4+); it never
# raises, and every torch call is guarded (old, broken or stand-in torch packages).
# The GPU check is the guide's own: a tensor to the GPU, then a matmul, timed against the
# CPU. Argument: the matmul size (default 2048).
import json
import math
import sys
import time


def text(e):
    return "%s: %s" % (type(e).__name__, e)


def num(x):
    try:
        x = float(x)
    except Exception:
        return None
    return x if math.isfinite(x) else None


size = 2048
if len(sys.argv) > 1:
    try:
        size = max(16, int(sys.argv[1]))
    except ValueError:
        pass

out = {
    "python": "%d.%d.%d" % tuple(sys.version_info[:3]),
    "executable": sys.executable,
    "bits": 64 if sys.maxsize > 2 ** 32 else 32,
    "torch": None,
    "torch_error": None,
    "check": None,
    "extension": None,
    # What naming a missing library needs (cuda-setup's verify/missing_library.rs).
    "platform": sys.platform,
    "exec_prefix": getattr(sys, "exec_prefix", None),
    "base_exec_prefix": getattr(sys, "base_exec_prefix", None),
    "torch_dir": None,
}


def package_dir(name):
    # The package's folder without importing it (its import is what failed).
    try:
        import importlib.util
        spec = importlib.util.find_spec(name)
        if spec is None:
            return None
        locs = list(spec.submodule_search_locations or [])
        if locs:
            return str(locs[0])
        import os
        return os.path.dirname(spec.origin) if spec.origin else None
    except Exception:
        return None


def gpu_check(torch):
    c = {
        "size": size,
        "moved_to": None,
        "tensor_ok": False,
        "cpu_ms": None,
        "gpu_ms": None,
        "speedup": None,
        "max_error": None,
        "tolerance": 1e-3,
        "ok": False,
        "error": None,
    }
    out["check"] = c
    try:
        x = torch.tensor([1.0, 2.0, 3.0])
        xg = x.cuda()
        c["moved_to"] = str(xg.device)
        c["tensor_ok"] = (xg * 2).cpu().tolist() == [2.0, 4.0, 6.0]
        g = torch.Generator().manual_seed(0)
        a = torch.randn(size, size, generator=g)
        b = torch.randn(size, size, generator=g)
        cpu = None
        ref = None
        for _ in range(2):
            t0 = time.perf_counter()
            ref = torch.mm(a, b)
            dt = time.perf_counter() - t0
            cpu = dt if cpu is None else min(cpu, dt)
        ag, bg = a.cuda(), b.cuda()
        torch.mm(ag, bg)  # warm-up: cuBLAS initialises here
        torch.cuda.synchronize()
        best = None
        got = None
        for _ in range(3):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(10):
                got = torch.mm(ag, bg)
            torch.cuda.synchronize()
            dt = (time.perf_counter() - t0) / 10
            best = dt if best is None else min(best, dt)
        got = got.cpu()
        scale = torch.mm(a.abs(), b.abs()).clamp(min=1e-30)
        err = float(((got - ref).abs() / scale).max())
        c["cpu_ms"] = num(cpu * 1e3)
        c["gpu_ms"] = num(best * 1e3)
        c["speedup"] = num(cpu / best) if best > 0 else None
        c["max_error"] = num(err)
        finite = bool(torch.isfinite(got).all())
        c["ok"] = bool(c["tensor_ok"] and finite and c["max_error"] is not None
                       and c["max_error"] <= c["tolerance"])
    except Exception as e:
        c["error"] = text(e)


def extension_facts():
    # The toolkit torch.utils.cpp_extension builds extensions with: its CUDA_HOME, found
    # from CUDA_HOME, else CUDA_PATH, else nvcc on PATH, else the default folder. When
    # that module does not import, the same rules are applied here.
    import os
    import shutil
    e = {
        "cuda_home": None,
        "source": None,
        "cuda_home_env": os.environ.get("CUDA_HOME") or None,
        "cuda_path_env": os.environ.get("CUDA_PATH") or None,
        "nvcc_on_path": shutil.which("nvcc"),
        "error": None,
    }
    out["extension"] = e
    try:
        from torch.utils import cpp_extension
        h = cpp_extension.CUDA_HOME
        e["cuda_home"] = str(h) if h else None
        e["source"] = "cpp_extension"
        return
    except Exception as err:
        e["error"] = text(err)
    e["source"] = "probe"
    h = e["cuda_home_env"] or e["cuda_path_env"]
    if not h and e["nvcc_on_path"]:
        h = os.path.dirname(os.path.dirname(e["nvcc_on_path"]))
    if not h:
        if sys.platform == "win32":
            import glob
            found = glob.glob("C:/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v*.*")
            h = found[0] if found else None
        else:
            h = "/usr/local/cuda"
        if h and not os.path.exists(h):
            h = None
    e["cuda_home"] = h


def main():
    try:
        import torch
    except ImportError as e:
        name = getattr(e, "name", None)
        missing = name == "torch" or (name is None and "No module named" in str(e)
                                      and "torch" in str(e))
        out["torch_error"] = {
            "kind": "not_installed" if missing else "import_failed",
            "detail": text(e),
        }
        if not missing:
            out["torch_dir"] = package_dir("torch")
        return
    except Exception as e:  # OSError: [WinError 126] ... c10.dll, and the like
        out["torch_error"] = {"kind": "import_failed", "detail": text(e)}
        out["torch_dir"] = package_dir("torch")
        return
    t = {
        "version": str(getattr(torch, "__version__", "?")),
        "cuda": None,
        "cuda_available": False,
        "cuda_error": None,
        "cudnn": None,
        "cudnn_available": None,
        "arch_list": [],
        "device_count": 0,
        "device_name": None,
        "device_capability": None,
        "driver_version": None,
    }
    out["torch"] = t
    try:
        v = torch.version.cuda
        t["cuda"] = str(v) if v else None
    except Exception:
        pass
    try:
        t["cuda_available"] = bool(torch.cuda.is_available())
    except Exception as e:
        t["cuda_error"] = text(e)
    if t["cuda"] and not t["cuda_available"] and t["cuda_error"] is None:
        # is_available() says only False; init() says why ("Found no NVIDIA driver ...").
        try:
            torch.cuda.init()
        except Exception as e:
            t["cuda_error"] = text(e)
    if t["cuda"]:
        try:
            extension_facts()
        except Exception as e:
            out["extension"] = {"error": text(e)}
    try:
        t["cudnn_available"] = bool(torch.backends.cudnn.is_available())
    except Exception:
        pass
    try:
        v = torch.backends.cudnn.version()
        t["cudnn"] = int(v) if v is not None else None
    except Exception:
        pass
    if not t["cuda_available"]:
        return
    try:
        t["arch_list"] = [str(a) for a in torch.cuda.get_arch_list()]
    except Exception:
        pass
    try:
        t["device_count"] = int(torch.cuda.device_count())
        t["device_name"] = str(torch.cuda.get_device_name(0))
        t["device_capability"] = [int(x) for x in torch.cuda.get_device_capability(0)]
    except Exception as e:
        t["cuda_error"] = text(e)
    try:
        t["driver_version"] = int(torch._C._cuda_getDriverVersion())
    except Exception:
        pass
    gpu_check(torch)


try:
    main()
except Exception as e:  # never let the probe itself fail
    out["probe_error"] = text(e)
sys.stdout.write("CUDA_SETUP_DOCTOR " + json.dumps(out) + "\n")
sys.stdout.flush()
