#!/usr/bin/env bash
# The cuda_setup Ansible module (ansible/ansible_collections/cuda_setup/lab) run for real:
# ansible-core from PyPI, local connection, a lab profile for a Linux sandbox root, and
# NVIDIA's server stood in by a loopback http.server serving a stand-in runfile and its
# md5sum.txt at NVIDIA's paths (as tests/fleet/ansible.sh does).
#   check mode on the empty sandbox: changed=1 (the drift), the sandbox tree unchanged;
#   apply (--diff: the toolkit none -> installed): changed=1; apply again: changed=0; check mode again: changed=0;
#   a profile cuda-setup rejects: the task fails with cuda-setup's words.
# Before that, the module's own checks: it compiles, DOCUMENTATION/EXAMPLES/RETURN are
# YAML, and ansible-doc reads it.
# Usage: tests/fleet/ansible-module.sh [path/to/cuda-setup]   (called by .ci/run)
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
bin=${1:-target/debug/cuda-setup}
[ -x "$bin" ] || cargo build --quiet
bin=$(realpath "$bin")
work=$(mktemp -d)
server=
trap '[ -z "$server" ] || kill "$server" 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
module=ansible/ansible_collections/cuda_setup/lab/plugins/modules/cuda_setup.py

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check ansible-core
export PATH="$work/venv/bin:$PATH"
export ANSIBLE_COLLECTIONS_PATH="$repo/ansible" ANSIBLE_NOCOLOR=1 ANSIBLE_FORCE_COLOR=0

# The module's documentation, as ansible-doc and Galaxy read it.
python -m py_compile "$module"
python - "$module" <<'PY'
import ast, sys, yaml
tree = ast.parse(open(sys.argv[1], encoding="utf-8").read())
docs = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
        for t in n.targets if isinstance(t, ast.Name) and t.id in ("DOCUMENTATION", "EXAMPLES", "RETURN")}
assert set(docs) == {"DOCUMENTATION", "EXAMPLES", "RETURN"}, sorted(docs)
doc = yaml.safe_load(docs["DOCUMENTATION"])
assert doc["module"] == "cuda_setup", doc["module"]
assert set(doc["options"]) == {"profile", "executable", "root", "os", "extra_args"}, sorted(doc["options"])
assert doc["attributes"]["check_mode"]["support"] == "full"
assert doc["attributes"]["diff_mode"]["support"] == "full"
assert isinstance(yaml.safe_load(docs["EXAMPLES"]), list)
assert {"drift", "reboot_required", "in_desired_state"} <= set(yaml.safe_load(docs["RETURN"]))
PY
ansible-doc -t module cuda_setup.lab.cuda_setup > "$work/doc.txt"
grep -q 'check_mode' "$work/doc.txt" || { cat "$work/doc.txt" >&2; echo "FAIL: ansible-doc did not read the module"; exit 1; }

# NVIDIA's paths, on loopback (sets $port and $server).
# shellcheck source=tests/fleet/nvidia-standin.sh
source tests/fleet/nvidia-standin.sh

# The lab profile: the CUDA 11.4 toolkit by NVIDIA's installer, from the lab's mirror.
# The driver and cuDNN are not managed here (no section): the sandbox has no driver to
# install, so the driver is a given fact (--driver) like the GPU (--gpu-cc).
cat > "$work/lab.toml" <<TOML
schema = 1
lang = "en"

[toolkit]
version = "11.4"
method = "installer"

[sources]
mirrors = ["http://127.0.0.1:$port"]
TOML
# A profile cuda-setup must refuse: written for another cuda-setup.
printf 'schema = 99\n' > "$work/bad.toml"
mkdir -p "$work/root"

cat > "$work/site.yml" <<YML
- hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: The GPU PC as the lab profile says
      cuda_setup.lab.cuda_setup:
        profile: "{{ profile | default('$work/lab.toml') }}"
        executable: $bin
        root: $work/root
        os: linux
        extra_args: [--gpu-cc, "8.6", --driver, 470.82.01]
      register: cuda
    - name: What drifted
      ansible.builtin.debug:
        msg: "drift: {{ cuda.drift | map(attribute='layer') | list }}, reboot_required: {{ cuda.reboot_required }}"
YML

# run NAME [ansible-playbook arguments]: the PLAY RECAP's changed=N; the log in $work/NAME.txt.
run() {
    local name=$1; shift
    if ! ansible-playbook -i localhost, -e ansible_python_interpreter="$work/venv/bin/python" "$@" \
        "$work/site.yml" > "$work/$name.txt" 2>&1; then
        cat "$work/$name.txt" >&2
        echo "FAIL: ansible-playbook ($name) failed" >&2
        exit 1
    fi
    grep -o 'changed=[0-9]*' "$work/$name.txt" | tail -1
}
listing() { (cd "$work/root" && find . -printf '%p %y %s %T@\n' | sort); }

listing > "$work/tree-before.txt"
check=$(run check --check --diff)
listing > "$work/tree-after-check.txt"
apply=$(run apply --diff)
reapply=$(run reapply)
recheck=$(run recheck --check)
echo "check: $check, apply: $apply, re-apply: $reapply, check after: $recheck"
grep -o 'drift: [^"]*' "$work/check.txt" | sed 's/^/check mode: /' || true
grep -E '^[-+][a-z]+: ' "$work/check.txt" | sed 's/^/check mode --diff: /' || true

fail=0
[ "$check" = "changed=1" ] || { echo "FAIL: check mode on the empty sandbox should report changed (drift)"; fail=1; }
if ! diff -u "$work/tree-before.txt" "$work/tree-after-check.txt"; then
    echo "FAIL: check mode changed the sandbox"; fail=1
fi
# --diff: the drifted toolkit, as it is and as the profile wants it.
grep -q '^-toolkit: ' "$work/check.txt" && grep -q '^+toolkit: ' "$work/check.txt" \
    || { cat "$work/check.txt"; echo "FAIL: --diff should show the toolkit before and after"; fail=1; }
[ "$apply" = "changed=1" ] || { cat "$work/apply.txt"; echo "FAIL: the first apply should report changed"; fail=1; }
grep -q '^-toolkit: none' "$work/apply.txt" && grep -q '^+toolkit: ' "$work/apply.txt" \
    || { cat "$work/apply.txt"; echo "FAIL: apply --diff should show the toolkit it installed"; fail=1; }
[ "$reapply" = "changed=0" ] || { cat "$work/reapply.txt"; echo "FAIL: the second apply should report ok (no change)"; fail=1; }
[ "$recheck" = "changed=0" ] || { cat "$work/recheck.txt"; echo "FAIL: check mode after apply should find no drift"; fail=1; }
[ -x "$work/root/usr/local/cuda-11.4/bin/nvcc" ] || { echo "FAIL: no toolkit in the root"; fail=1; }

# A profile cuda-setup refuses fails the task, in cuda-setup's words (naming the file).
if ansible-playbook -i localhost, -e ansible_python_interpreter="$work/venv/bin/python" \
    -e profile="$work/bad.toml" --check "$work/site.yml" > "$work/bad.txt" 2>&1; then
    cat "$work/bad.txt"; echo "FAIL: a profile for another cuda-setup should fail the task"; fail=1
elif ! grep -q 'failed=1' "$work/bad.txt" || ! grep -q '"msg": "[^"]*bad.toml' "$work/bad.txt"; then
    cat "$work/bad.txt"; echo "FAIL: the failure should name the profile"; fail=1
fi

[ "$fail" = 0 ] || exit 1
echo "ansible module: 7 passed, 0 failed"
