# cuda-setup doctor's probe of the GPU packages besides PyTorch (issue 33): prints one
# line "CUDA_SETUP_PACKAGES {json}" (ASCII). It runs in the user's interpreter: Python 3
# syntax without f-strings (3.4+), and it never raises.
# 1. Which of the packages are installed (distribution metadata: importlib.metadata, else
#    pkg_resources), with the nvidia-* wheels their own metadata names, and every nvidia-*
#    wheel present. Nothing is imported for this.
# 2. For each installed package, whether its GPU path loads, in a child process of this
#    interpreter with a time limit (an import that hangs or crashes stays there): the
#    child prints its own marker line; the last lines of its output come back as well.
# Arguments: seconds each child may take (default 60); then, optionally,
# `--load-ctranslate2 NAME...`: only CTranslate2's check, which also loads these libraries
# by name as CTranslate2 does when a model runs (the core names them for the version
# installed: cuBLAS and cuDNN of its CUDA and cuDNN majors).
import json
import os
import re
import subprocess
import sys

MARKER = "CUDA_SETUP_PACKAGES "
CHILD = "CUDA_SETUP_PKGCHECK "
WATCHED = (
    "onnxruntime-gpu", "onnxruntime", "ctranslate2", "faster-whisper",
    "paddlepaddle-gpu", "paddlepaddle", "tensorflow", "tensorflow-cpu",
    "tensorflow-intel", "jax", "jaxlib",
)

limit = 60.0
if len(sys.argv) > 1:
    try:
        limit = max(1.0, float(sys.argv[1]))
    except ValueError:
        pass
LOADS = None
if len(sys.argv) > 2 and sys.argv[2] == "--load-ctranslate2":
    LOADS = [a for a in sys.argv[3:] if re.match(r"^[A-Za-z0-9_.-]+$", a)]


def text(e):
    return "%s: %s" % (type(e).__name__, e)


def norm(name):
    return re.sub(r"[-_.]+", "-", str(name)).lower()


def watched(name):
    return (name in WATCHED or name.startswith("nvidia-")
            or re.match(r"^jax-cuda\d+-(plugin|pjrt)$", name) is not None)


def distributions():
    """(name, version, requires) of every installed distribution."""
    out = []
    try:
        from importlib import metadata
        for d in metadata.distributions():
            try:
                name = d.metadata["Name"]
                if name:
                    out.append((norm(name), str(d.version), list(d.requires or [])))
            except Exception:
                pass
        return out
    except ImportError:
        pass
    import pkg_resources  # Python < 3.8
    for d in pkg_resources.working_set:
        try:
            reqs = [str(r) for r in d.requires(d.extras)]
        except Exception:
            reqs = []
        out.append((norm(d.project_name), str(d.version), reqs))
    return out


def package_dir(module):
    """The folder of a top-level package, found without importing it."""
    try:
        import importlib.util
        spec = importlib.util.find_spec(module)
        if spec is not None and spec.submodule_search_locations:
            return list(spec.submodule_search_locations)[0]
    except Exception:
        pass
    return None


# The module each distribution installs: its folder is where a failed load's native files
# are (for naming the missing DLL).
MODULES = {
    "onnxruntime-gpu": "onnxruntime", "onnxruntime": "onnxruntime",
    "ctranslate2": "ctranslate2", "faster-whisper": "faster_whisper",
    "paddlepaddle-gpu": "paddle", "paddlepaddle": "paddle", "tensorflow": "tensorflow",
    "tensorflow-cpu": "tensorflow", "tensorflow-intel": "tensorflow", "jax": "jax",
    "jaxlib": "jaxlib",
}


def onnxruntime_build():
    # onnxruntime-gpu 1.21+ records the CUDA it was built with (capi/build_and_package_info.py).
    d = package_dir("onnxruntime")
    if not d:
        return None
    try:
        with open(os.path.join(d, "capi", "build_and_package_info.py")) as f:
            body = f.read(65536)
    except Exception:
        return None
    m = re.search(r"cuda_version\s*=\s*['\"]([0-9.]+)['\"]", body)
    return {"cuda_version": m.group(1)} if m else None


CHECKS = {
    "onnxruntime": r'''
import ctypes, os, sys
ort = __import__("onnxruntime")
r["providers"] = [str(p) for p in ort.get_available_providers()]
if hasattr(ort, "preload_dlls"):
    try:
        ort.preload_dlls()
        r["preloaded"] = True
    except Exception as e:
        r["detail"] = text(e)
capi = os.path.join(os.path.dirname(ort.__file__), "capi")
if sys.platform == "win32":
    names = ("onnxruntime_providers_shared.dll", "onnxruntime_providers_cuda.dll")
else:
    names = ("libonnxruntime_providers_shared.so", "libonnxruntime_providers_cuda.so")
lib = os.path.join(capi, names[1])
if "CUDAExecutionProvider" not in r["providers"] or not os.path.exists(lib):
    r["error"] = "no CUDA execution provider in this onnxruntime (%s)" % ", ".join(r["providers"])
else:
    # Loaded as onnxruntime loads it: on Windows LoadLibraryExW with
    # LOAD_WITH_ALTERED_SEARCH_PATH (8; core/platform/windows/env.cc), where PATH counts,
    # not ctypes' default (Python >= 3.8: no PATH).
    kw = {"winmode": 8} if sys.platform == "win32" and sys.version_info >= (3, 8) else {}
    try:
        ctypes.CDLL(os.path.join(capi, names[0]), **kw)
    except Exception:
        pass
    ctypes.CDLL(lib, **kw)
    r["ok"] = True
''',
    "ctranslate2": r'''
import ctranslate2
n = int(ctranslate2.get_cuda_device_count())
r["devices"] = n
r["ok"] = n > 0
if n == 0:
    r["error"] = "ctranslate2.get_cuda_device_count() is 0"
elif LOADS:
    # As CTranslate2 loads them when a model runs (src/cuda/cublas_stub.cc): by name, on
    # Windows with LoadLibraryA's standard search (winmode=0: PATH counts, not
    # os.add_dll_directory) after SetDllDirectoryA(%CUDA_PATH%\bin); dlopen elsewhere.
    import ctypes, os
    if sys.platform == "win32":
        cuda_path = os.environ.get("CUDA_PATH")
        if cuda_path:
            ctypes.windll.kernel32.SetDllDirectoryW(os.path.join(cuda_path, "bin"))
    kw = {"winmode": 0} if sys.platform == "win32" and sys.version_info >= (3, 8) else {}
    r["loaded"] = []
    for name in LOADS:
        try:
            ctypes.CDLL(name, **kw)
        except Exception as e:
            r["ok"] = False
            # CTranslate2's own words for it; the loader's in the detail.
            r["error"] = "RuntimeError: Library %s is not found or cannot be loaded" % name
            r["detail"] = text(e)
            break
        r["loaded"].append(name)
''',
    "paddle": r'''
import paddle
r["compiled_with_cuda"] = bool(paddle.device.is_compiled_with_cuda())
try:
    r["build_cuda"] = str(paddle.version.cuda())
    r["build_cudnn"] = str(paddle.version.cudnn())
except Exception:
    pass
if r["compiled_with_cuda"]:
    paddle.utils.run_check()
    r["ok"] = True
else:
    r["error"] = "paddle.device.is_compiled_with_cuda() is False"
''',
    "tensorflow": r'''
import tensorflow as tf
gpus = tf.config.list_physical_devices("GPU")
r["devices"] = len(gpus)
try:
    r["compiled_with_cuda"] = bool(tf.test.is_built_with_cuda())
    info = tf.sysconfig.get_build_info()
    r["build_cuda"] = info.get("cuda_version")
    r["build_cudnn"] = info.get("cudnn_version")
except Exception:
    pass
r["ok"] = len(gpus) > 0
if not gpus:
    r["error"] = "tf.config.list_physical_devices('GPU') is empty"
''',
    "jax": r'''
import jax
devs = jax.devices()
r["platforms"] = sorted(set(str(d.platform) for d in devs))
r["devices"] = len([d for d in devs if d.platform == "gpu"])
r["ok"] = r["devices"] > 0
if not r["ok"]:
    r["error"] = "jax.devices() has no GPU: %s" % ", ".join(r["platforms"])
''',
}

CHILD_HEAD = r'''
import json, sys
def text(e):
    return "%s: %s" % (type(e).__name__, e)
r = {"ok": False, "error": None, "detail": None}
try:
'''

CHILD_TAIL = r'''
except BaseException as e:
    r["ok"] = False
    r["error"] = text(e)
sys.stdout.write("\n''' + CHILD + r'''" + json.dumps(r) + "\n")
sys.stdout.flush()
'''


def child_source(body):
    lines = ["    " + l for l in body.strip("\n").split("\n")]
    # The libraries to load, as a literal the child can read.
    head = CHILD_HEAD.replace("r = {", "LOADS = %r\nr = {" % (LOADS,), 1)
    return head + "\n".join(lines) + CHILD_TAIL


def tail(s, n=12):
    lines = [l for l in s.replace("\r", "").split("\n") if l.strip()]
    return "\n".join(lines[-n:])[-4000:]


def run_check(name):
    c = {"ok": False, "error": None, "timed_out": False, "output": None}
    try:
        p = subprocess.Popen([sys.executable, "-c", child_source(CHECKS[name])],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL)
        try:
            out, err = p.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            c["timed_out"] = True
            c["error"] = "no answer within %d s" % limit
        out = out.decode("utf-8", "replace")
        err = err.decode("utf-8", "replace")
        found = None
        for line in out.split("\n"):
            if line.startswith(CHILD):
                found = line[len(CHILD):]
        if found is not None:
            c.update(json.loads(found))
        elif not c["timed_out"]:
            c["error"] = "the check ended without an answer (exit %s)" % p.returncode
        rest = "\n".join(l for l in (out + "\n" + err).split("\n") if not l.startswith(CHILD))
        c["output"] = tail(rest) or None
    except Exception as e:
        c["error"] = text(e)
    return c


out = {
    "python": "%d.%d.%d" % tuple(sys.version_info[:3]),
    # What naming a missing library needs (as the doctor's probe reports them).
    "platform": sys.platform,
    "executable": sys.executable,
    "exec_prefix": getattr(sys, "exec_prefix", None),
    "base_exec_prefix": getattr(sys, "base_exec_prefix", None),
    "packages": [],
    "nvidia": [],
    "checks": {},
    "error": None,
}


def main():
    if LOADS is not None:
        out["checks"]["ctranslate2"] = run_check("ctranslate2")
        return
    seen = {}
    for name, version, requires in distributions():
        if not watched(name) or name in seen:
            continue
        seen[name] = version
        if name.startswith("nvidia-"):
            out["nvidia"].append({"name": name, "version": version})
            continue
        p = {"name": name, "version": version,
             "requires": [r for r in requires if "nvidia-" in r.lower()], "build": None,
             "dir": package_dir(MODULES[name]) if name in MODULES else None}
        if name in ("onnxruntime-gpu", "onnxruntime"):
            p["build"] = onnxruntime_build()
        out["packages"].append(p)
    out["packages"].sort(key=lambda p: p["name"])
    out["nvidia"].sort(key=lambda p: p["name"])
    wanted = []
    if "onnxruntime-gpu" in seen or "onnxruntime" in seen:
        wanted.append("onnxruntime")
    if "ctranslate2" in seen:
        wanted.append("ctranslate2")
    if "paddlepaddle-gpu" in seen or "paddlepaddle" in seen:
        wanted.append("paddle")
    if any(n in seen for n in ("tensorflow", "tensorflow-cpu", "tensorflow-intel")):
        wanted.append("tensorflow")
    if "jaxlib" in seen or "jax" in seen:
        wanted.append("jax")
    for name in wanted:
        out["checks"][name] = run_check(name)


try:
    main()
except Exception as e:  # never let the probe itself fail
    out["error"] = text(e)
sys.stdout.write(MARKER + json.dumps(out) + "\n")
sys.stdout.flush()
