#!/usr/bin/python
# -*- coding: utf-8 -*-
# The Ansible side of cuda-setup's desired-state commands (issue #36): check mode is
# `cuda-setup state test`, a run is `cuda-setup state set`. The module decides nothing
# about CUDA; it runs the command and reads its JSON. Standard library only.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: cuda_setup
short_description: Keep a PC's NVIDIA stack in the state a cuda-setup lab profile describes
version_added: "0.1.0"
description:
  - Runs C(cuda-setup state test --profile PROFILE --json) in check mode and
    C(cuda-setup state set --profile PROFILE --json) otherwise, and reports what the
    command found and did.
  - A layer the profile names (driver, toolkit, cuDNN, PyTorch, the guard of the
    verified PyTorch) that differs from the machine is I(drift); C(changed) is true when
    there was drift (check mode) or when C(state set) changed the machine.
  - "With C(--diff), each drifted layer is shown as it is and as the profile wants it
    (C(driver: 550.54) becomes C(driver: >= 560.94))."
  - This module runs on Linux hosts. For Windows hosts, run the same commands with
    M(ansible.windows.win_command); see the collection's README.
options:
  profile:
    description:
      - Path, on the managed host, of the lab profile (C(lab.toml)).
    type: path
    required: true
  executable:
    description:
      - The cuda-setup program on the managed host. A bare name is looked up on C(PATH).
    type: path
    default: cuda-setup
  root:
    description:
      - Work inside this folder instead of the machine (a sandbox with the machine's
        layout; for tests and trials). Passed as C(--root).
    type: path
  os:
    description:
      - The operating system a C(root) sandbox stands for. Passed as C(--os).
    type: str
    choices: [linux, windows]
  extra_args:
    description:
      - More arguments for C(cuda-setup state test/set), given as they are (for
        example C(--wait), C(--lang en), C(--report /srv/reports/%COMPUTERNAME%.json)).
    type: list
    elements: str
    default: []
attributes:
  check_mode:
    description: Runs C(cuda-setup state test), which changes nothing.
    support: full
  diff_mode:
    description: Each drifted layer, as it is and as the profile wants it.
    support: full
  platform:
    description: Linux hosts (and the controller). Windows hosts use M(ansible.windows.win_command).
    support: full
    platforms: posix
notes:
  - C(cuda-setup state set) exits with 3010 (seen as 194 by a Unix shell) when the
    driver needs a restart; the module returns C(reboot_required=true) and does not
    restart the host. Follow it with M(ansible.builtin.reboot) when you want one.
  - Another cuda-setup already installing (exit 1618) fails the task; add
    C(extra_args=[--wait]) to wait for it instead.
author:
  - cuda-setup contributors
"""

EXAMPLES = r"""
- name: Tell whether the GPU PCs have drifted from the lab profile (changes nothing)
  cuda_setup.lab.cuda_setup:
    profile: /etc/cuda-setup/lab.toml
  check_mode: true
  register: lab

- name: Make every GPU PC match the lab profile
  cuda_setup.lab.cuda_setup:
    profile: /etc/cuda-setup/lab.toml
    executable: /usr/local/bin/cuda-setup
    extra_args: [--wait, --report, /srv/cuda-reports/%COMPUTERNAME%.json]
  register: cuda

- name: Restart when the driver asked for it
  ansible.builtin.reboot:
  when: cuda.reboot_required

- name: What each drifted layer needs (check mode above)
  ansible.builtin.debug:
    msg: "{{ item.layer }}: {{ item.fix }}"
  loop: "{{ lab.drift }}"
"""

RETURN = r"""
cmd:
  description: The command that was run.
  returned: always
  type: list
  elements: str
  sample: [cuda-setup, state, test, --profile, /etc/cuda-setup/lab.toml, --json]
in_desired_state:
  description: Whether the machine matches the profile (after the run, when not in check mode).
  returned: success
  type: bool
  sample: false
drift:
  description:
    - The layers that differ from the profile, as C(cuda-setup state test --json) gives
      them; in check mode before any change, otherwise what is left after the run.
    - Each has C(layer), C(is) (null when missing), C(should), C(fix) (a sentence in the
      profile's language) and C(fix_step), the plan step that fixes it (C(install_driver),
      C(install_toolkit), C(assemble_toolkit), C(configure_env), C(install_cudnn),
      C(install_torch)), or null when no step does (C(fix) then says what to do).
  returned: success
  type: list
  elements: dict
  sample:
    - layer: toolkit
      is: null
      should: "12.4 (installer)"
      fix: "Install CUDA 12.4 (installer): `cuda-setup state set` installs it."
      fix_step: install_toolkit
reboot_required:
  description: The driver's installer asked for a restart (exit code 3010).
  returned: success
  type: bool
  sample: false
exit_code:
  description: cuda-setup's exit code as Windows would see it (0, 1, 3010, 1602, 1603, 1618, 1633).
  returned: always
  type: int
  sample: 0
state:
  description: The machine's state in the profile's terms (C(cuda-setup state get --json)).
  returned: success
  type: dict
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule

# What a Unix shell sees of the MSI-style codes: the low 8 bits (3010 -> 194).
WINDOWS_CODE = {194: 3010, 66: 1602, 67: 1603, 82: 1618, 97: 1633}
# Exit codes that are answers, not failures: test says 0 in state, 1 drift; set says
# 0 done, 3010 done with a restart pending.
OK_TEST = (0, 1)
OK_SET = (0, 3010)


def windows_code(rc):
    return WINDOWS_CODE.get(rc, rc)


def failure_text(data, stderr):
    """The failure as cuda-setup worded it: a run's failure in the JSON, the drift a run
    left, else the last lines of its stderr (a profile it refused, a bad flag)."""
    if isinstance(data, dict):
        runs = [r for r in data.get("runs") or [] if isinstance(r, dict)]
        for source in [data] + runs[::-1]:
            failure = source.get("failure")
            if isinstance(failure, dict) and failure.get("error"):
                text = str(failure["error"])
                if failure.get("hint"):
                    text += " (" + str(failure["hint"]) + ")"
                return text
        if data.get("drift"):
            return "still drifted after the run: " + "; ".join(
                "%s: %s -> %s" % (d.get("layer"), shown(d.get("is")), d.get("should"))
                for d in data["drift"]
            )
    lines = [line for line in (stderr or "").splitlines() if line.strip()]
    return "\n".join(lines[-5:]) if lines else "cuda-setup gave no reason"


def read_json(stdout):
    try:
        data = json.loads(stdout)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def shown(value):
    return "none" if value is None else str(value)


def diff_of(before_drift, after_drift):
    """Ansible's diff: one line per layer that drifted, as it was and as it is now."""
    left = dict((d.get("layer"), d) for d in after_drift or [])
    before, after = [], []
    for d in before_drift or []:
        layer = d.get("layer")
        before.append("%s: %s" % (layer, shown(d.get("is"))))
        # Still drifting after the run: say what it is; else what the profile wanted.
        now = left.get(layer)
        after.append("%s: %s" % (layer, shown(now.get("is")) if now else shown(d.get("should"))))
    return {
        "before_header": "machine",
        "after_header": "lab profile",
        "before": "\n".join(before) + ("\n" if before else ""),
        "after": "\n".join(after) + ("\n" if after else ""),
    }


def command(module, exe, verb):
    p = module.params
    cmd = [exe, "state", verb, "--profile", p["profile"], "--json"]
    if p["root"]:
        cmd += ["--root", p["root"]]
    if p["os"]:
        cmd += ["--os", p["os"]]
    return cmd + list(p["extra_args"] or [])


def run(module, cmd, ok):
    rc, out, err = module.run_command(cmd)
    code = windows_code(rc)
    data = read_json(out)
    if code not in ok or data is None:
        module.fail_json(
            msg=failure_text(data, err) if code not in ok else "cuda-setup printed no JSON report",
            cmd=cmd,
            rc=rc,
            exit_code=code,
            stdout=out,
            stderr=err,
        )
    return code, data


def main():
    module = AnsibleModule(
        argument_spec=dict(
            profile=dict(type="path", required=True),
            executable=dict(type="path", default="cuda-setup"),
            root=dict(type="path"),
            os=dict(type="str", choices=["linux", "windows"]),
            extra_args=dict(type="list", elements="str", default=[]),
        ),
        supports_check_mode=True,
    )
    exe = module.params["executable"]
    if os.sep not in exe:
        exe = module.get_bin_path(exe, required=True)

    if module.check_mode:
        cmd = command(module, exe, "test")
        code, data = run(module, cmd, OK_TEST)
        drift = data.get("drift") or []
        result = dict(
            changed=bool(drift),
            cmd=cmd,
            exit_code=code,
            in_desired_state=bool(data.get("in_desired_state")),
            drift=drift,
            reboot_required=False,
            state=data.get("state"),
        )
        if module._diff:
            result["diff"] = diff_of(drift, [])
        module.exit_json(**result)

    # The diff needs the drift before the run; `state set` reports the drift after it.
    before = None
    if module._diff:
        _, tested = run(module, command(module, exe, "test"), OK_TEST)
        before = tested.get("drift") or []
    cmd = command(module, exe, "set")
    code, data = run(module, cmd, OK_SET)
    drift = data.get("drift") or []
    result = dict(
        changed=bool(data.get("changed")),
        cmd=cmd,
        exit_code=code,
        in_desired_state=bool(data.get("in_desired_state")),
        drift=drift,
        reboot_required=bool(data.get("reboot_required")) or code == 3010,
        state=data.get("state"),
    )
    if before is not None:
        result["diff"] = diff_of(before, drift)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
