# Sourced by tests/fleet/ansible.sh and ansible-module.sh: NVIDIA's download server stood in
# by a loopback http.server serving a stand-in CUDA 11.4.4 runfile and its md5sum.txt at
# NVIDIA's paths. Needs $work (a temp folder); sets $port and $server (the server's pid,
# for the caller's trap to kill).
www="$work/www/compute/cuda/11.4.4"
mkdir -p "$www/local_installers" "$www/docs/sidebar"
cat > "$www/local_installers/cuda_11.4.4_470.82.01_linux.run" <<'RUN'
#!/bin/sh
path=""; for a in "$@"; do case "$a" in --toolkitpath=*) path="${a#--toolkitpath=}";; esac; done
[ -n "$path" ] || exit 1
mkdir -p "$path/bin" "$path/lib64/stubs"
# An nvcc that prints its version and, for the build check, writes its -o file.
cat > "$path/bin/nvcc" <<'NVCC'
#!/bin/sh
[ "$1" = --version ] && { echo "Cuda compilation tools, release 11.4, V11.4.152"; exit 0; }
while [ $# -gt 0 ]; do [ "$1" = -o ] && { : > "$2"; exit 0; }; shift; done
exit 1
NVCC
chmod +x "$path/bin/nvcc"
# What NVIDIA's runfile lays down for a developer: the runtime, its link name, the stub.
echo ELF > "$path/lib64/libcudart.so.11.0"
ln -s libcudart.so.11.0 "$path/lib64/libcudart.so"
echo ELF > "$path/lib64/stubs/libcuda.so"
echo '{"cuda":{"name":"CUDA SDK","version":"11.4.4"}}' > "$path/version.json"
RUN
md5=$(md5sum "$www/local_installers/cuda_11.4.4_470.82.01_linux.run" | cut -d' ' -f1)
echo "$md5  local_installers/cuda_11.4.4_470.82.01_linux.run" > "$www/docs/sidebar/md5sum.txt"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$work/www" >/dev/null 2>&1 &
server=$!
python3 - "$port" <<'PY'
import socket, sys, time
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2).close(); break
    except OSError:
        time.sleep(0.1)
PY
