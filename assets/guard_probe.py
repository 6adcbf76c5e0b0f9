# cuda-setup guard's probe: prints one line "CUDA_SETUP_GUARD {json}" (ASCII).
# Runs in the user's interpreter: Python 3 without f-strings; never raises; imports no
# torch (only its installed metadata is read: fast, and works when torch is broken):
# importlib.metadata (3.8+), else setuptools' pkg_resources. Syntax: 3.4+.
# sys.prefix is where pip reads its "site" configuration (pip.conf / pip.ini).
import json
import os
import sys

out = {
    "executable": sys.executable,
    "prefix": sys.prefix,
    "base_prefix": getattr(sys, "base_prefix", sys.prefix),
    "real_prefix": getattr(sys, "real_prefix", None),
    "conda": False,
    "packages": {},
    "torch_installed_at": None,
    "error": None,
}


def installed_at(dist):
    # The dist-info folder's modification time: when this torch was installed.
    path = getattr(dist, "_path", None)
    if path is not None:
        try:
            return int(os.stat(str(path)).st_mtime)
        except Exception:
            pass
    try:
        for f in dist.files or []:
            if f.name == "METADATA":
                return int(os.stat(str(dist.locate_file(f))).st_mtime)
    except Exception:
        pass
    return None


def legacy_installed_at(dist):
    # pkg_resources: the dist-info / egg-info folder it read the metadata from, else the
    # folder it was found in.
    for path in (getattr(dist, "egg_info", None),
                 getattr(getattr(dist, "_provider", None), "egg_info", None),
                 getattr(dist, "location", None)):
        if path:
            try:
                return int(os.stat(str(path)).st_mtime)
            except Exception:
                pass
    return None


def legacy(names):
    # Python < 3.8 has no importlib.metadata: setuptools' pkg_resources, when present.
    try:
        import pkg_resources
    except Exception:
        return
    for name in names:
        try:
            d = pkg_resources.get_distribution(name)
        except Exception:
            continue
        out["packages"][name] = str(d.version)
        if name == "torch":
            out["torch_installed_at"] = legacy_installed_at(d)


try:
    out["conda"] = os.path.isdir(os.path.join(sys.prefix, "conda-meta"))
    names = ("torch", "torchvision", "torchaudio")
    try:
        import importlib.metadata as md
    except ImportError:
        md = None
    if md is not None:
        for name in names:
            try:
                d = md.distribution(name)
            except Exception:
                continue
            out["packages"][name] = str(d.version)
            if name == "torch":
                out["torch_installed_at"] = installed_at(d)
    else:
        legacy(names)
except Exception as e:  # never let the probe itself fail
    out["error"] = "%s: %s" % (type(e).__name__, e)
sys.stdout.write("CUDA_SETUP_GUARD " + json.dumps(out) + "\n")
sys.stdout.flush()
