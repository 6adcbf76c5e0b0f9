# cuda-setup's Python probe: prints one line "CUDA_SETUP_PROBE {json}".
# Runs in the user's interpreter, so it must work on Python 3.6+ and never raise.
import json
import sys

try:  # free-threaded CPython (3.13t): wheels of its own ABI, cp313t
    import sysconfig

    free_threaded = sysconfig.get_config_var("Py_GIL_DISABLED") == 1
except Exception:
    free_threaded = False

out = {
    "version": "%d.%d.%d" % tuple(sys.version_info[:3]),
    "executable": sys.executable,
    "bits": 64 if sys.maxsize > 2**32 else 32,
    "free_threaded": free_threaded,
    "torch": None,
    "torch_error": None,
}
try:
    import torch

    t = {"version": str(torch.__version__), "cuda": getattr(torch.version, "cuda", None)}
    try:
        t["cuda_available"] = bool(torch.cuda.is_available())
    except Exception as e:  # a broken CUDA setup can raise here
        t["cuda_available"] = False
        t["cuda_error"] = repr(e)
    try:
        t["cudnn"] = torch.backends.cudnn.version()
    except Exception:
        t["cudnn"] = None
    try:
        t["arch_list"] = list(torch.cuda.get_arch_list())
    except Exception:
        t["arch_list"] = []
    out["torch"] = t
except ImportError as e:
    out["torch_error"] = "not installed: %s" % e
except Exception as e:
    out["torch_error"] = "import failed: %r" % (e,)
sys.stdout.write("CUDA_SETUP_PROBE " + json.dumps(out) + "\n")
