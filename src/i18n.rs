//! English and Simplified Chinese text for every message key. The core emits
//! [`Message`]s; front ends render them here, once, in the user's language.

use crate::message::Message;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
pub enum Lang {
    En,
    Zh,
}

impl Lang {
    /// zh for a Chinese system locale (`zh-CN`, `zh_CN.UTF-8`, `zh-Hans`), else English.
    pub fn from_locale(locale: &str) -> Lang {
        if locale.to_ascii_lowercase().starts_with("zh") {
            Lang::Zh
        } else {
            Lang::En
        }
    }
}

/// (key, English, 中文). `{name}` is replaced by the parameter of that name.
pub const CATALOG: &[(&str, &str, &str)] = &[
    (
        "no_nvidia_gpu",
        "No NVIDIA GPU was found. CUDA runs only on NVIDIA GPUs; to use PyTorch on the CPU instead: {cpu_command}",
        "没有找到 NVIDIA 显卡。CUDA 只能在 NVIDIA 显卡上运行；如果只用 CPU 跑 PyTorch，请运行：{cpu_command}",
    ),
    (
        "gpu_not_identified",
        "Found NVIDIA GPU(s) {gpus}, but the model is not in our tables, so its architecture is unknown. Give it with --gpu-cc (NVIDIA lists compute capabilities at developer.nvidia.com/cuda-gpus).",
        "找到 NVIDIA 显卡 {gpus}，但表中没有这个型号，无法确定架构。请用 --gpu-cc 指定（NVIDIA 在 developer.nvidia.com/cuda-gpus 列出了各型号的计算能力）。",
    ),
    (
        "gpu_disabled",
        "{gpu} is disabled in Device Manager: right-click it there and choose \"Enable device\".",
        "{gpu} 在设备管理器中被禁用了：在设备管理器里右键点击它，选择“启用设备”。",
    ),
    (
        "gpu_no_driver",
        "{gpu} has no NVIDIA driver bound to it: install the NVIDIA driver (on Windows, Device Manager lists it under \"Other devices\").",
        "{gpu} 没有加载 NVIDIA 驱动：请安装 NVIDIA 驱动（在 Windows 上，设备管理器会把它列在“其他设备”下）。",
    ),
    (
        "gpu_basic_display_adapter",
        "{gpu} runs on Windows' fallback \"Microsoft Basic Display Adapter\" driver: install the NVIDIA driver.",
        "{gpu} 正在使用 Windows 的备用驱动“Microsoft 基本显示适配器”：请安装 NVIDIA 驱动。",
    ),
    (
        "gpu_driver_failed",
        "{gpu}: the driver reported a failure (Device Manager Code 43). Reinstall the latest NVIDIA driver (a clean install), then restart.",
        "{gpu}：驱动报告了错误（设备管理器代码 43）。请重新安装最新的 NVIDIA 驱动（选择清洁安装），然后重启电脑。",
    ),
    (
        "gpu_failed_start",
        "{gpu} could not start (Device Manager Code 10): reinstall the NVIDIA driver.",
        "{gpu} 无法启动（设备管理器代码 10）：请重新安装 NVIDIA 驱动。",
    ),
    (
        "gpu_failed_add",
        "{gpu}: Windows could not load its driver (Device Manager Code 31): reinstall the NVIDIA driver.",
        "{gpu}：Windows 无法加载它的驱动（设备管理器代码 31）：请重新安装 NVIDIA 驱动。",
    ),
    (
        "gpu_unsigned_driver",
        "{gpu}: its driver is not signed (Device Manager Code 52): install the official NVIDIA driver.",
        "{gpu}：它的驱动没有数字签名（设备管理器代码 52）：请安装官方 NVIDIA 驱动。",
    ),
    (
        "gpu_device_problem",
        "{gpu} has a device problem (Device Manager code {code}): reinstall the NVIDIA driver.",
        "{gpu} 设备有问题（设备管理器代码 {code}）：请重新安装 NVIDIA 驱动。",
    ),
    (
        "gpu_architecture",
        "{gpu}: {architecture} architecture.",
        "{gpu}：{architecture} 架构。",
    ),
    (
        "gpu_architecture_unknown",
        "{gpu}: its architecture is not in the tables; choices are checked against its compute capability only.",
        "{gpu}：表中没有它的架构信息，只按计算能力（compute capability）来判断。",
    ),
    (
        "driver_missing",
        "No NVIDIA driver is installed (or it is not working).",
        "没有安装 NVIDIA 驱动（或驱动没有正常工作）。",
    ),
    (
        "driver_runs_cuda",
        "Driver {driver} supports CUDA up to {cuda}.",
        "驱动 {driver} 最高支持 CUDA {cuda}。",
    ),
    (
        "driver_runs_cuda_at_least",
        "Driver {driver} supports at least CUDA {cuda} (from the tables; the driver itself reports the exact figure once detected).",
        "驱动 {driver} 至少支持 CUDA {cuda}（根据版本表推算；检测到驱动后会读取准确的数值）。",
    ),
    (
        "driver_cuda_unknown",
        "Driver {driver}: the tables do not say which CUDA it supports.",
        "驱动 {driver}：版本表里查不到它支持的 CUDA 版本。",
    ),
    (
        "gpu_needs_driver",
        "{gpu} ({architecture}) needs driver {minimum} or newer.",
        "{gpu}（{architecture} 架构）需要 {minimum} 或更新的驱动。",
    ),
    (
        "gpu_needs_driver_unconfirmed",
        "{gpu} ({architecture}) needs a driver that knows this architecture: {minimum} or newer (inferred from NVIDIA's tables, not stated by NVIDIA).",
        "{gpu}（{architecture} 架构）需要支持该架构的驱动：{minimum} 或更新（根据 NVIDIA 的表推断，非官方明确说明）。",
    ),
    (
        "driver_install",
        "Install the NVIDIA driver first: version {minimum} or newer (GeForce Experience / NVIDIA App, or nvidia.com/drivers).",
        "请先安装 NVIDIA 驱动：{minimum} 或更新版本（可用 NVIDIA App，或到 nvidia.cn/drivers 下载）。",
    ),
    (
        "driver_update_required",
        "Driver {current} is too old for this choice: update to {minimum} or newer.",
        "驱动 {current} 太旧，无法运行所选版本：请更新到 {minimum} 或更新。",
    ),
    (
        "driver_update_unlocks",
        "Optional: a driver {minimum} or newer would unlock {unlocks}.",
        "可选：驱动更新到 {minimum} 或更新后，可以使用 {unlocks}。",
    ),
    (
        "no_torch_for_python",
        "No PyTorch release with CUDA is known for Python {python}; PyTorch supports Python {python_min} to {python_max}. Install a Python in that range.",
        "没有已知的支持 Python {python} 的 CUDA 版 PyTorch；PyTorch 支持 Python {python_min} 到 {python_max}。请安装这个范围内的 Python。",
    ),
    (
        "no_torch_for_gpus",
        "No PyTorch CUDA wheel is known to run on {gpus}.",
        "没有已知能在 {gpus} 上运行的 PyTorch CUDA 版本。",
    ),
    (
        "torch_for_python",
        "PyTorch {torch} is the newest that fits: it supports Python {python_min} to {python_max}, and you have {python}.",
        "PyTorch {torch} 是适合的最新版本：支持 Python {python_min} 到 {python_max}，你的是 {python}。",
    ),
    (
        "python_unknown",
        "Python was not specified: PyTorch {torch} needs Python {python_min} to {python_max}.",
        "未指定 Python 版本：PyTorch {torch} 需要 Python {python_min} 到 {python_max}。",
    ),
    (
        "newer_torch_needs_python",
        "PyTorch {torch} is newer but needs Python {python_min} or newer.",
        "更新的 PyTorch {torch} 需要 Python {python_min} 或更高版本。",
    ),
    (
        "torch_variant",
        "The {variant} wheels are built with CUDA {cuda} and need driver {minimum} or newer.",
        "{variant} 版本用 CUDA {cuda} 编译，需要 {minimum} 或更新的驱动。",
    ),
    (
        "torch_arch_covers",
        "The {variant} wheels contain code for {sms}, which covers {gpus}.",
        "{variant} 版本包含 {sms} 的代码，支持 {gpus}。",
    ),
    (
        "torch_arch_inferred",
        "The list of GPU architectures inside the {variant} wheels is not confirmed; CUDA {cuda} itself supports {gpus}.",
        "{variant} 版本内置的显卡架构列表未经确认；CUDA {cuda} 本身支持 {gpus}。",
    ),
    (
        "torch_unconfirmed",
        "Some facts about PyTorch {torch} ({variant}) are unconfirmed in our tables; the check after installing will tell for sure.",
        "PyTorch {torch}（{variant}）的部分信息在版本表中未经确认；安装后的检查会给出确切结果。",
    ),
    (
        "torch_verify_after_install",
        "After installing, run a small tensor operation on the GPU: a missing architecture only shows at the first kernel launch.",
        "安装后请在 GPU 上跑一个小的张量运算：缺少架构支持的问题只会在第一次运行核函数时出现。",
    ),
    (
        "torch_wheel_bundles_runtime",
        "PyTorch's CUDA wheels bring their own CUDA runtime and cuDNN: only the driver must be on the system.",
        "PyTorch 的 CUDA 版本自带 CUDA 运行库和 cuDNN：系统上只需要有显卡驱动。",
    ),
    (
        "windows_pypi_is_cpu",
        "On Windows, plain `pip install torch` gives the CPU-only build: use the command with --index-url.",
        "在 Windows 上，直接 `pip install torch` 装的是只支持 CPU 的版本：请使用带 --index-url 的命令。",
    ),
    (
        "torch_matches_toolkit_major",
        "PyTorch is built with CUDA {major}.x like the toolkit, so extensions you compile will load.",
        "PyTorch 与工具包同为 CUDA {major}.x 编译，你编译的扩展可以正常加载。",
    ),
    (
        "torch_none_for_toolkit_major",
        "No PyTorch wheel built with CUDA {major}.x fits this machine; extensions compiled with this toolkit would not load into PyTorch.",
        "没有适合本机的 CUDA {major}.x 版 PyTorch；用此工具包编译的扩展无法加载到 PyTorch 中。",
    ),
    (
        "toolkit_builds_for",
        "CUDA {version} builds code for {sm_min} to {sm_max}, which covers {gpus}.",
        "CUDA {version} 支持编译 {sm_min} 到 {sm_max}，覆盖 {gpus}。",
    ),
    (
        "toolkit_runs_on_driver",
        "CUDA {version} is the newest toolkit your driver runs fully (it needs {minimum}).",
        "CUDA {version} 是你的驱动能完整支持的最新工具包（需要 {minimum}）。",
    ),
    (
        "toolkit_minor_compat",
        "CUDA {version} runs on your driver through minor-version compatibility (some features, like JIT of newer PTX, need {minimum}).",
        "CUDA {version} 可以通过小版本兼容在你的驱动上运行（部分功能如新 PTX 的即时编译需要 {minimum}）。",
    ),
    (
        "toolkit_needs_driver",
        "CUDA {version} needs driver {minimum} or newer: the driver update comes with it.",
        "CUDA {version} 需要 {minimum} 或更新的驱动：需要同时更新驱动。",
    ),
    (
        "toolkit_unconfirmed",
        "Some facts about CUDA {version} (such as its exact driver minimum) are unconfirmed in our tables.",
        "CUDA {version} 的部分信息（如准确的最低驱动版本）在版本表中未经确认。",
    ),
    (
        "toolkit_driver_unconfirmed",
        "NVIDIA publishes no exact driver minimum for CUDA {version} on this OS; {minimum} is the floor of the CUDA {major}.x line. Install the newest driver.",
        "NVIDIA 没有公布 CUDA {version} 在此系统上的准确最低驱动版本；{minimum} 是 CUDA {major}.x 系列的最低要求。请安装最新驱动。",
    ),
    (
        "newer_toolkit_drops_gpu",
        "CUDA {version} is newer but no longer supports GPUs below {sm_min}.",
        "CUDA {version} 更新，但不再支持低于 {sm_min} 的显卡。",
    ),
    (
        "toolkit_already_installed",
        "CUDA {version} is already installed; the installer will repair or update it.",
        "CUDA {version} 已经安装；安装程序会修复或更新它。",
    ),
    (
        "no_toolkit_matches_request",
        "No CUDA toolkit matching {cuda} fits this machine.",
        "没有符合 {cuda} 且适合本机的 CUDA 工具包。",
    ),
    (
        "no_toolkit_for_gpu",
        "No CUDA toolkit in the tables builds code for {gpus}.",
        "版本表中没有能为 {gpus} 编译代码的 CUDA 工具包。",
    ),
    (
        "gpus_have_no_common_toolkit",
        "No single CUDA toolkit supports all of {gpus}; set up for one of them (use --gpu-cc for that GPU only).",
        "没有同时支持 {gpus} 的 CUDA 工具包；请只为其中一块显卡安装（用 --gpu-cc 指定该显卡）。",
    ),
    (
        "cudnn_none_for_toolkit",
        "No cuDNN release in the tables fits CUDA {cuda} and these GPUs.",
        "版本表中没有适合 CUDA {cuda} 和这些显卡的 cuDNN。",
    ),
    (
        "cudnn_for_toolkit",
        "cuDNN {version} (cuda{cuda_major} build) fits CUDA {toolkit}.",
        "cuDNN {version}（cuda{cuda_major} 版）适配 CUDA {toolkit}。",
    ),
    (
        "cudnn_unconfirmed",
        "Some facts about cuDNN {version} (supported GPUs or CUDA versions) are unconfirmed in our tables.",
        "cuDNN {version} 的部分信息（支持的显卡或 CUDA 版本）在版本表中未经确认。",
    ),
    (
        "cudnn8_needs_zlib",
        "cuDNN 8 on Windows also needs zlibwapi.dll on PATH.",
        "Windows 上的 cuDNN 8 还需要 PATH 中有 zlibwapi.dll。",
    ), // ---- verify: smoke ----
    (
        "smoke_no_driver",
        "Skipped: no NVIDIA driver ({library} could not be loaded: {detail}). Install the NVIDIA driver, then run this again.",
        "已跳过：没有 NVIDIA 驱动（无法加载 {library}：{detail}）。请安装 NVIDIA 驱动后再运行。",
    ),
    (
        "smoke_no_gpu",
        "Skipped: the driver sees no CUDA GPU ({error}).",
        "已跳过：驱动没有检测到支持 CUDA 的显卡（{error}）。",
    ),
    (
        "smoke_driver_failed",
        "Failed: the NVIDIA driver is installed but does not work ({call}: {error}). Restart the computer; if that does not help, reinstall the driver (a clean install).",
        "失败：NVIDIA 驱动已安装但无法工作（{call}：{error}）。请重启电脑；如果仍然不行，请重新安装驱动（选择清洁安装）。",
    ),
    (
        "smoke_driver_stub",
        "Failed: the CUDA toolkit's stub libcuda (lib64/stubs) was loaded instead of the driver's. Remove the stubs folder from LD_LIBRARY_PATH.",
        "失败：加载到的是 CUDA 工具包里的占位 libcuda（lib64/stubs），而不是驱动自带的。请把 stubs 目录从 LD_LIBRARY_PATH 中移除。",
    ),
    (
        "smoke_no_such_device",
        "Failed: there is no GPU {index}; the driver sees {count}.",
        "失败：没有编号为 {index} 的显卡；驱动检测到 {count} 块。",
    ),
    (
        "smoke_no_toolkit",
        "Skipped: no CUDA toolkit was found, so there is no cuBLAS, cuDNN or nvcc to test. Install one (cuda-setup recommend --goal developer), or give its folder with --cuda-dir.",
        "已跳过：没有找到 CUDA 工具包，因此无法测试 cuBLAS、cuDNN 和 nvcc。请安装工具包（cuda-setup recommend --goal developer），或用 --cuda-dir 指定它的目录。",
    ),
    (
        "smoke_no_cublas",
        "Failed: there is no cuBLAS library in {dir}; the toolkit is incomplete. Reinstall it.",
        "失败：{dir} 中没有 cuBLAS 库，工具包不完整。请重新安装。",
    ),
    (
        "library_load_failed",
        "Failed: {library} could not be loaded: {detail}",
        "失败：无法加载 {library}：{detail}",
    ),
    (
        "library_missing_dependency",
        "Failed: {library} could not be loaded because a file it needs is missing: {missing}. Put it next to the library or in a folder on PATH.",
        "失败：无法加载 {library}，因为它依赖的文件不存在：{missing}。请把该文件放到这个库的旁边，或放到 PATH 中的某个目录里。",
    ),
    (
        "smoke_toolkit_newer_than_driver",
        "Failed: CUDA {toolkit} needs a driver that runs CUDA {major}.x, and this driver runs CUDA up to {driver_cuda}. Update the driver (cuda-setup recommend says which), or use an older toolkit.",
        "失败：CUDA {toolkit} 需要支持 CUDA {major}.x 的驱动，而当前驱动最高只支持 CUDA {driver_cuda}。请更新驱动（cuda-setup recommend 会给出版本），或使用较旧的工具包。",
    ),
    (
        "smoke_toolkit_lacks_arch",
        "Failed: CUDA {toolkit} does not support {gpu} ({sm}); it builds for {sm_min} to {sm_max}. Install a toolkit that does (cuda-setup recommend --goal developer).",
        "失败：CUDA {toolkit} 不支持 {gpu}（{sm}），它只支持 {sm_min} 到 {sm_max}。请安装支持这块显卡的工具包（cuda-setup recommend --goal developer）。",
    ),
    (
        "smoke_cuda_call_failed",
        "Failed: {call} failed: {error}",
        "失败：{call} 出错：{error}",
    ),
    (
        "smoke_gemm_wrong",
        "Failed: the GPU's {precision} {size}×{size} matrix product differs from the CPU's (error {error}, tolerance {tolerance}). The GPU, its memory or its driver is faulty — or it is overclocked too far.",
        "失败：显卡计算的 {precision} {size}×{size} 矩阵乘法结果与 CPU 不一致（误差 {error}，容差 {tolerance}）。显卡、显存或驱动有故障，或者超频过度。",
    ),
    (
        "smoke_gemm_nothing_ran",
        "Failed: no matrix product could run: {why}",
        "失败：没有任何矩阵乘法能够运行：{why}",
    ),
    (
        "smoke_copy_corrupted",
        "Failed: data copied to the GPU and back came back changed.",
        "失败：拷贝到显卡再拷回来的数据发生了变化。",
    ),
    (
        "smoke_timeout",
        "Failed: the GPU test did not finish within {seconds} s and was abandoned (a hung driver?). Restart the computer and try again.",
        "失败：GPU 测试在 {seconds} 秒内没有完成，已放弃（驱动可能卡死了）。请重启电脑后再试。",
    ),
    (
        "smoke_internal_error",
        "Failed: internal error in the test: {detail}",
        "失败：测试程序内部错误：{detail}",
    ),
    (
        "cudnn_not_found",
        "Skipped: no cuDNN was found in the toolkit or on the library search path.",
        "已跳过：在工具包和库搜索路径中都没有找到 cuDNN。",
    ),
    (
        "cudnn_missing_libraries",
        "Failed: cuDNN {version} in {dir} is incomplete: {missing} not found. Copy every file from the cuDNN archive's {archive_dir} folder into {dir}.",
        "失败：{dir} 中的 cuDNN {version} 不完整：找不到 {missing}。请把 cuDNN 压缩包 {archive_dir} 目录中的所有文件都复制到 {dir}。",
    ),
    (
        "cudnn_wrong_cuda_major",
        "Failed: cuDNN {version} is the build for CUDA {cudnn_cuda}.x, but the toolkit is CUDA {toolkit}. Install the cuDNN build for CUDA {major}.x.",
        "失败：cuDNN {version} 是为 CUDA {cudnn_cuda}.x 编译的，而工具包是 CUDA {toolkit}。请安装 CUDA {major}.x 版的 cuDNN。",
    ),
    (
        "cudnn_loads_conv_skipped",
        "cuDNN {version} loads; its convolution test needs a working driver and GPU, and was skipped.",
        "cuDNN {version} 可以加载；卷积测试需要可用的驱动和显卡，已跳过。",
    ),
    (
        "cudnn_conv_wrong",
        "Failed: cuDNN's convolution differs from the CPU's (error {error}, tolerance {tolerance}).",
        "失败：cuDNN 的卷积结果与 CPU 不一致（误差 {error}，容差 {tolerance}）。",
    ),
    (
        "cudnn_call_failed",
        "Failed: {call} failed: {error}",
        "失败：{call} 出错：{error}",
    ),
    (
        "nvcc_not_requested",
        "Skipped: the nvcc check was turned off (--no-nvcc).",
        "已跳过：nvcc 检查已关闭（--no-nvcc）。",
    ),
    (
        "nvcc_not_found",
        "Skipped: this toolkit has no nvcc ({path}).",
        "已跳过：这个工具包里没有 nvcc（{path}）。",
    ),
    (
        "nvcc_failed",
        "Failed: nvcc --version did not work: {detail}",
        "失败：nvcc --version 运行出错：{detail}",
    ),
    (
        "no_host_compiler_windows",
        "nvcc works, but compiling needs Microsoft's C++ compiler (cl.exe) and none was found: install Visual Studio Build Tools with the \"Desktop development with C++\" workload.",
        "nvcc 可以运行，但编译需要微软的 C++ 编译器（cl.exe），没有找到：请安装 Visual Studio Build Tools，并勾选“使用 C++ 的桌面开发”。",
    ),
    (
        "no_host_compiler_linux",
        "nvcc works, but compiling needs a host C++ compiler (g++) and none is on PATH: install it (Debian/Ubuntu: sudo apt install build-essential).",
        "nvcc 可以运行，但编译需要主机 C++ 编译器（g++），PATH 中没有找到：请安装（Debian/Ubuntu：sudo apt install build-essential）。",
    ),
    (
        "nvcc_compile_failed",
        "Failed: nvcc could not compile a test kernel: {detail}",
        "失败：nvcc 无法编译测试核函数：{detail}",
    ),
    (
        "nvcc_unsupported_arch",
        "Failed: nvcc {version} cannot build code for this GPU ({sm}): {detail}. The GPU is newer than the toolkit; install a newer toolkit.",
        "失败：nvcc {version} 无法为这块显卡（{sm}）编译代码：{detail}。显卡比工具包新，请安装更新的工具包。",
    ),
    (
        "vcvars_failed",
        "Failed: setting up the Visual C++ environment (vcvars64.bat) failed: {detail}",
        "失败：设置 Visual C++ 编译环境（vcvars64.bat）出错：{detail}",
    ),
    (
        "kernel_needs_gpu",
        "The test kernel compiled; running it needs a working driver and GPU ({detail}).",
        "测试核函数已编译成功；运行它需要可用的驱动和显卡（{detail}）。",
    ),
    (
        "kernel_driver_too_old",
        "Failed: the test kernel compiled with CUDA {version} does not run on this driver ({detail}). Update the driver.",
        "失败：用 CUDA {version} 编译的测试核函数无法在当前驱动上运行（{detail}）。请更新驱动。",
    ),
    (
        "kernel_failed",
        "Failed: the test kernel did not run: {detail}",
        "失败：测试核函数运行出错：{detail}",
    ),
    (
        "kernel_wrong",
        "Failed: the test kernel ran but computed wrong results ({detail}).",
        "失败：测试核函数运行了，但计算结果错误（{detail}）。",
    ),
    // ---- verify: doctor ----
    (
        "doctor_python",
        "Python {version}: {python}",
        "Python {version}：{python}",
    ),
    (
        "doctor_python_not_found",
        "No Python was found on PATH. Install Python {python_min} to {python_max} (python.org, tick \"Add python.exe to PATH\"), or name one with --python.",
        "PATH 中没有找到 Python。请安装 Python {python_min} 到 {python_max}（python.org，安装时勾选“Add python.exe to PATH”），或用 --python 指定。",
    ),
    (
        "doctor_python_failed",
        "{python} could not be examined: {detail}",
        "无法检查 {python}：{detail}",
    ),
    (
        "doctor_torch_missing",
        "PyTorch is not installed in {python}.",
        "{python} 中没有安装 PyTorch。",
    ),
    (
        "doctor_torch_import_failed",
        "PyTorch is installed but fails to import: {detail}",
        "PyTorch 已安装，但导入失败：{detail}",
    ),
    (
        "doctor_no_gpu",
        "This machine has no NVIDIA GPU that works: PyTorch can only use the CPU here.",
        "本机没有可用的 NVIDIA 显卡：PyTorch 在这里只能使用 CPU。",
    ),
    (
        "doctor_torch_cpu_no_gpu",
        "PyTorch {torch} is a CPU-only build, which is right for a machine without an NVIDIA GPU.",
        "PyTorch {torch} 是仅 CPU 版本，对没有 NVIDIA 显卡的机器来说是正确的。",
    ),
    (
        "doctor_torch_cpu_build",
        "PyTorch {torch} is a CPU-only build (torch.version.cuda is None): it cannot use the GPU.",
        "PyTorch {torch} 是仅 CPU 版本（torch.version.cuda 为 None）：无法使用显卡。",
    ),
    (
        "doctor_no_driver",
        "No working NVIDIA driver was found, so PyTorch cannot use the GPU.",
        "没有找到可用的 NVIDIA 驱动，所以 PyTorch 无法使用显卡。",
    ),
    (
        "doctor_torch_cuda_too_new",
        "PyTorch {torch} is built with CUDA {cuda}, but this driver runs CUDA up to {driver_cuda}.",
        "PyTorch {torch} 是用 CUDA {cuda} 编译的，但当前驱动最高只支持 CUDA {driver_cuda}。",
    ),
    (
        "doctor_torch_cuda_minor_compat",
        "PyTorch {torch} is built with CUDA {cuda}; the driver runs CUDA up to {driver_cuda}, which works through minor-version compatibility.",
        "PyTorch {torch} 是用 CUDA {cuda} 编译的；驱动最高支持 CUDA {driver_cuda}，可以通过小版本兼容运行。",
    ),
    (
        "doctor_torch_cuda_ok",
        "PyTorch {torch} is built with CUDA {cuda}; the driver runs CUDA up to {driver_cuda}.",
        "PyTorch {torch} 是用 CUDA {cuda} 编译的；驱动最高支持 CUDA {driver_cuda}。",
    ),
    (
        "doctor_cuda_unavailable",
        "torch.cuda.is_available() is False: {detail}",
        "torch.cuda.is_available() 返回 False：{detail}",
    ),
    (
        "doctor_arch_ok",
        "PyTorch {torch} carries code for {gpu} ({sm}).",
        "PyTorch {torch} 包含适用于 {gpu}（{sm}）的代码。",
    ),
    (
        "doctor_arch_missing",
        "PyTorch {torch} carries no code for {gpu} ({sm}); its wheels are built for {arch_list}.",
        "PyTorch {torch} 不包含适用于 {gpu}（{sm}）的代码；它只为 {arch_list} 编译。",
    ),
    (
        "doctor_cudnn_unavailable",
        "PyTorch's cuDNN is not available (torch.backends.cudnn.is_available() is False).",
        "PyTorch 的 cuDNN 不可用（torch.backends.cudnn.is_available() 为 False）。",
    ),
    (
        "doctor_cudnn_ok",
        "cuDNN {cudnn} is available to PyTorch.",
        "PyTorch 可以使用 cuDNN {cudnn}。",
    ),
    (
        "doctor_gpu_check_ok",
        "A tensor moved to {device}, and a {size}×{size} matmul there matched the CPU: {gpu_ms} ms on the GPU against {cpu_ms} ms on the CPU, {speedup}× faster.",
        "张量已移到 {device}，在上面做的 {size}×{size} 矩阵乘法与 CPU 结果一致：显卡 {gpu_ms} 毫秒，CPU {cpu_ms} 毫秒，快 {speedup} 倍。",
    ),
    (
        "doctor_gpu_check_failed",
        "The GPU check (a tensor to the GPU, a matmul) failed: {detail}",
        "GPU 检查（把张量移到显卡并做矩阵乘法）失败：{detail}",
    ),
    (
        "doctor_gpu_check_wrong",
        "The GPU's matmul differs from the CPU's (error {error}, tolerance {tolerance}).",
        "显卡的矩阵乘法结果与 CPU 不一致（误差 {error}，容差 {tolerance}）。",
    ),
    (
        "fix_install_torch",
        "Install PyTorch {torch} built for {variant} (from {index_url}):",
        "安装为 {variant} 编译的 PyTorch {torch}（来自 {index_url}）：",
    ),
    (
        "fix_reinstall_torch",
        "Replace it with PyTorch {torch} built for {variant} (from {index_url}); uninstall first, or pip keeps the installed build:",
        "换成为 {variant} 编译的 PyTorch {torch}（来自 {index_url}）；请先卸载，否则 pip 会保留已安装的版本：",
    ),
    (
        "fix_torch_for_driver",
        "Install the build for this driver, PyTorch {torch} for {variant} (or update the driver):",
        "安装适合当前驱动的版本：为 {variant} 编译的 PyTorch {torch}（或者更新驱动）：",
    ),
    (
        "fix_install_torch_cpu",
        "Install the CPU build of PyTorch:",
        "安装 CPU 版 PyTorch：",
    ),
    (
        "fix_vc_redist",
        "A DLL that PyTorch needs is missing. Install the Microsoft Visual C++ Redistributable (x64, https://aka.ms/vs/17/release/vc_redist.x64.exe); if that does not help, reinstall PyTorch:",
        "缺少 PyTorch 需要的 DLL。请安装 Microsoft Visual C++ 运行库（x64，https://aka.ms/vs/17/release/vc_redist.x64.exe）；如果还不行，请重新安装 PyTorch：",
    ),
    (
        "fix_no_wheel_fits",
        "No PyTorch CUDA wheel fits this machine; see cuda-setup recommend.",
        "没有适合本机的 PyTorch CUDA 版本；请查看 cuda-setup recommend 的说明。",
    ),
    (
        "fix_install_driver",
        "Install or update the NVIDIA driver to {minimum} or newer (NVIDIA App, or nvidia.com/drivers), then restart.",
        "请安装或更新 NVIDIA 驱动到 {minimum} 或更新版本（NVIDIA App，或到 nvidia.cn/drivers 下载），然后重启。",
    ),
    (
        "fix_cuda_unavailable",
        "Restart the computer; if CUDA is still unavailable, reinstall the NVIDIA driver (a clean install) and run cuda-setup smoke.",
        "请重启电脑；如果 CUDA 仍然不可用，请重新安装 NVIDIA 驱动（选择清洁安装），然后运行 cuda-setup smoke。",
    ),
    (
        "fix_gpu_wrong",
        "Run cuda-setup smoke to test the GPU on its own; undo any overclocking.",
        "请运行 cuda-setup smoke 单独测试显卡；如有超频请恢复默认。",
    ),
];

/// Renders `m` in `lang`. An unknown key renders as the key and its parameters, so a
/// missing translation is visible rather than silent (a test guards against it).
pub fn render(m: &Message, lang: Lang) -> String {
    let Some(&(_, en, zh)) = CATALOG.iter().find(|(k, _, _)| *k == m.key) else {
        let params: Vec<String> = m.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        return format!("{} {}", m.key, params.join(" "));
    };
    let mut text = match lang {
        Lang::En => en,
        Lang::Zh => zh,
    }
    .to_string();
    for (name, value) in &m.params {
        text = text.replace(&format!("{{{name}}}"), value);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn placeholders(t: &str) -> Vec<String> {
        let mut out: Vec<String> = t
            .split('{')
            .skip(1)
            .filter_map(|s| s.split_once('}').map(|(n, _)| n.to_string()))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn both_languages_use_the_same_placeholders() {
        for (key, en, zh) in CATALOG {
            assert_eq!(placeholders(en), placeholders(zh), "{key}");
            assert!(!zh.is_empty() && !en.is_empty(), "{key}");
        }
    }

    #[test]
    fn keys_are_unique() {
        let mut keys: Vec<&str> = CATALOG.iter().map(|c| c.0).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), CATALOG.len());
    }

    #[test]
    fn render_fills_parameters() {
        let m = Message::new("driver_runs_cuda")
            .with("driver", "551.78")
            .with("cuda", "12.4");
        assert_eq!(
            render(&m, Lang::En),
            "Driver 551.78 supports CUDA up to 12.4."
        );
        assert_eq!(render(&m, Lang::Zh), "驱动 551.78 最高支持 CUDA 12.4。");
    }

    #[test]
    fn locale_picks_language() {
        assert_eq!(Lang::from_locale("zh-CN"), Lang::Zh);
        assert_eq!(Lang::from_locale("zh_TW.UTF-8"), Lang::Zh);
        assert_eq!(Lang::from_locale("en-US"), Lang::En);
    }
}
