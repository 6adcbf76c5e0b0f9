//! English and Simplified Chinese text for every message key. The core emits
//! [`Message`]s; front ends render them here, once, in the user's language. The texts
//! live in one catalogue file per language, `crates/core/locales/<lang>.toml`
//! (`key = "text"`, `{name}` for a parameter), which a translator edits without
//! touching code; the tests check that the languages agree and that the code names
//! exactly the keys the files hold.

mod catalogue;
#[cfg(test)]
mod source_keys;

use std::sync::LazyLock;

use crate::message::Message;
use catalogue::Catalogue;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
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

/// Parsed on first use. The files are embedded at build time and checked by the tests;
/// were a broken one to slip through, its messages render as their keys, not a panic.
static CATALOGUE: LazyLock<Catalogue> = LazyLock::new(Catalogue::embedded_or_empty);

/// Renders `m` in `lang`. An unknown key renders as the key and its parameters, so a
/// missing translation is visible rather than silent (the tests guard against it).
pub fn render(m: &Message, lang: Lang) -> String {
    let params = m.params.iter().map(|(name, value)| (*name, value.as_str()));
    render_key(m.key, params, lang).unwrap_or_else(|| {
        let params: Vec<String> = m.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{} {}", m.key, params.join(" "))
    })
}

/// The text of `key` in `lang` with each `{name}` replaced by the parameter of that
/// name, or `None` for a key the catalogue lacks. For a message that arrives as data
/// (a report's `{key, params}` in JSON); code holding a [`Message`] calls [`render`].
pub fn render_key<N: AsRef<str>, V: AsRef<str>>(
    key: &str,
    params: impl IntoIterator<Item = (N, V)>,
    lang: Lang,
) -> Option<String> {
    let mut text = CATALOGUE.text(key, lang)?.to_string();
    for (name, value) in params {
        text = text.replace(&format!("{{{}}}", name.as_ref()), value.as_ref());
    }
    Some(text)
}

/// Whether the catalogue has `key`.
pub fn has_key(key: &str) -> bool {
    CATALOGUE.text(key, Lang::En).is_some()
}

/// Every key of the catalogue.
pub fn keys() -> impl Iterator<Item = &'static str> {
    CATALOGUE.keys()
}

/// Every text of one language (the wizard's font test checks it has each character).
pub fn texts(lang: Lang) -> impl Iterator<Item = &'static str> {
    CATALOGUE.all_texts(lang)
}

/// (key, English, 中文). `{name}` is replaced by the parameter of that name.
pub const CATALOG: &[(&str, &str, &str)] = &[
    (
        "no_nvidia_gpu",
        "No NVIDIA GPU was found. CUDA runs only on NVIDIA GPUs; to use PyTorch on the CPU instead: {cpu_command}",
        "没有找到 NVIDIA 显卡。CUDA 只能在 NVIDIA 显卡上运行；如果只用 CPU 跑 PyTorch，请运行：{cpu_command}",
    ),
    (
        "repair_healthy",
        "Nothing to repair: every layer checks out.",
        "无需修复：各项检查都正常。",
    ),
    (
        "repair_driver_missing",
        "An NVIDIA GPU is present but no NVIDIA driver works.",
        "有 NVIDIA 显卡，但没有可用的 NVIDIA 驱动。",
    ),
    (
        "repair_driver_too_old",
        "Driver {driver} is too old for the installed CUDA {toolkit}: it needs {minimum} or newer.",
        "驱动 {driver} 太旧，无法运行已安装的 CUDA {toolkit}：需要 {minimum} 或更新版本。",
    ),
    (
        "repair_driver_minor_compat",
        "Driver {driver} runs CUDA {toolkit} only through minor-version compatibility (some features need {minimum}).",
        "驱动 {driver} 只能通过小版本兼容运行 CUDA {toolkit}（部分功能需要 {minimum}）。",
    ),
    (
        "repair_toolkit_unknown",
        "The CUDA folder {path} has no readable version.",
        "CUDA 文件夹 {path} 无法读取版本。",
    ),
    (
        "repair_toolkit_broken",
        "The CUDA toolkit in {path} is incomplete: {missing} is missing.",
        "{path} 中的 CUDA 工具包不完整：缺少 {missing}。",
    ),
    (
        "repair_toolkit_versions_disagree",
        "In {path}, version.json says {file_version} but nvcc says {nvcc_version}: files from two versions are mixed.",
        "{path} 中 version.json 显示 {file_version}，但 nvcc 显示 {nvcc_version}：混入了两个版本的文件。",
    ),
    (
        "repair_cuda_path_missing",
        "{name} points to {value}, which does not exist.",
        "{name} 指向 {value}，但这个文件夹不存在。",
    ),
    (
        "repair_cuda_path_unset",
        "CUDA_PATH is not set, although CUDA is installed at {toolkit}.",
        "CUDA 已安装在 {toolkit}，但没有设置 CUDA_PATH。",
    ),
    (
        "repair_cuda_path_versioned_stale",
        "{name} points to {value}, which no longer exists.",
        "{name} 指向 {value}，但它已不存在。",
    ),
    (
        "repair_path_missing",
        "PATH lacks {entries}, so programs do not find CUDA's tools and DLLs.",
        "PATH 中缺少 {entries}，程序找不到 CUDA 的工具和 DLL。",
    ),
    (
        "repair_path_stale",
        "PATH still lists removed CUDA folders: {entries}.",
        "PATH 中仍有已删除的 CUDA 文件夹：{entries}。",
    ),
    (
        "repair_path_shadowed",
        "{dir} comes earlier on the search path and has its own {file}, which is loaded instead of the one in {ours}.",
        "搜索路径中更靠前的 {dir} 里也有 {file}，程序会加载它而不是 {ours} 中的那个。",
    ),
    (
        "repair_cudnn_damaged",
        "cuDNN in {dir} is damaged: {files}.",
        "{dir} 中的 cuDNN 已损坏：{files}。",
    ),
    (
        "repair_cudnn_cuda_major",
        "cuDNN {cudnn} is built for CUDA {cuda}, but the toolkit is CUDA {toolkit}.",
        "cuDNN {cudnn} 是为 CUDA {cuda} 编译的，但工具包是 CUDA {toolkit}。",
    ),
    (
        "repair_cudnn_header_library",
        "In {dir}, cudnn_version.h says {header} but the libraries are cuDNN {library}: two cuDNN versions are mixed.",
        "{dir} 中 cudnn_version.h 显示 {header}，但库文件是 cuDNN {library}：混入了两个 cuDNN 版本。",
    ),
    (
        "repair_cudnn8_zlib",
        "cuDNN 8 in {dir} needs zlibwapi.dll, which is not beside it nor on PATH.",
        "{dir} 中的 cuDNN 8 需要 zlibwapi.dll，但它既不在同一文件夹也不在 PATH 中。",
    ),
    (
        "repair_cudnn_interrupted",
        "A cuDNN install into {dir} was interrupted; it will be rolled back or finished.",
        "向 {dir} 安装 cuDNN 的过程被中断了；将回滚或完成它。",
    ),
    (
        "repair_cudnn_record_rejected",
        "cuda-setup's record of the cuDNN in {dir} ({file}) was not used: {why}. Nothing was deleted or restored on its strength; it was set aside as {moved}, and cuda-setup no longer tracks that cuDNN.",
        "cuda-setup 对 {dir} 中 cuDNN 的记录（{file}）未被使用：{why}。没有据此删除或恢复任何文件；该记录已移到 {moved}，cuda-setup 不再跟踪这个 cuDNN。",
    ),
    (
        "repair_install_interrupted",
        "An install was interrupted; it will be finished.",
        "一次安装被中断了；将继续完成它。",
    ),
    (
        "repair_install_journal_rejected",
        "The record of an interrupted install ({file}) was not used: {why}. Nothing in it was run; it was set aside as {moved}.",
        "中断安装的记录（{file}）未被使用：{why}。其中的内容都没有执行；该文件已移到 {moved}。",
    ),
    (
        "repair_wheels_leftover",
        "Building the toolkit {dir} from wheels was interrupted; full copies of a toolkit were left beside it: {leftovers}. Repair puts the previous toolkit back if it is missing, then removes the copies.",
        "从组件包构建工具包 {dir} 的过程被中断了，旁边留下了完整的工具包副本：{leftovers}。修复会在原工具包缺失时把它放回，然后删除这些副本。",
    ),
    (
        "repair_torch_cpu",
        "{python} has PyTorch {torch}, a CPU-only build: training runs on the CPU and the GPU idles.",
        "{python} 中的 PyTorch {torch} 是仅支持 CPU 的版本：训练只用 CPU，显卡闲置。",
    ),
    (
        "repair_torch_driver",
        "{python} has PyTorch {torch} built with CUDA {cuda}, which needs driver {minimum} or newer.",
        "{python} 中的 PyTorch {torch} 用 CUDA {cuda} 编译，需要 {minimum} 或更新的驱动。",
    ),
    (
        "repair_torch_arch",
        "{python} has PyTorch {torch}, which has no code for {gpu} ({sm}); its list: {archs}.",
        "{python} 中的 PyTorch {torch} 不包含 {gpu}（{sm}）的代码；它支持：{archs}。",
    ),
    (
        "repair_fix_driver",
        "Install or update the NVIDIA driver (NVIDIA App, or nvidia.com/drivers), then restart.",
        "安装或更新 NVIDIA 驱动（NVIDIA App，或 nvidia.cn/drivers），然后重启电脑。",
    ),
    (
        "repair_fix_reinstall_toolkit",
        "Reinstall that CUDA version: cuda-setup install --cuda <version>.",
        "重新安装该 CUDA 版本：cuda-setup install --cuda <版本>。",
    ),
    (
        "repair_fix_path_other_scope",
        "Those entries are in the machine-wide PATH: run cuda-setup as administrator to change them.",
        "这些条目在系统级 PATH 中：请以管理员身份运行 cuda-setup 来修改。",
    ),
    (
        "repair_fix_path_profile",
        "Remove those folders from PATH / LD_LIBRARY_PATH in your shell profile (~/.bashrc, ~/.profile).",
        "请在 shell 配置文件（~/.bashrc、~/.profile）中把这些文件夹从 PATH / LD_LIBRARY_PATH 里删除。",
    ),
    (
        "repair_fix_rerun_install",
        "Run the install again (cuda-setup install, or the wizard); what is already in place is not redone.",
        "请重新运行安装（cuda-setup install 或向导）；已经完成的部分不会重做。",
    ),
    (
        "repair_fix_cudnn_archive",
        "Install cuDNN again from the right archive: cuda-setup cudnn install --archive <zip> --cuda-dir <toolkit>.",
        "请用正确的压缩包重新安装 cuDNN：cuda-setup cudnn install --archive <zip> --cuda-dir <工具包目录>。",
    ),
    (
        "repair_fix_zlib",
        "Put zlibwapi.dll (from NVIDIA's cuDNN 8 install guide) into the CUDA bin folder, or move to cuDNN 9.",
        "把 zlibwapi.dll（见 NVIDIA 的 cuDNN 8 安装说明）放到 CUDA 的 bin 文件夹，或改用 cuDNN 9。",
    ),
    (
        "repair_fix_torch",
        "No PyTorch build fits this machine; see cuda-setup recommend.",
        "没有适合本机的 PyTorch 版本；请查看 cuda-setup recommend。",
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
    // ---- refresh (src/refresh): facts learned at run time, and where facts came from ----
    (
        "fact_from_tables",
        "{what}: from the built-in tables.",
        "{what}：来自内置数据表。",
    ),
    (
        "fact_from_dir",
        "{what}: from the tables in {dir}.",
        "{what}：来自 {dir} 中的数据表。",
    ),
    (
        "fact_from_live",
        "{what}: learned just now from {file} (fetched {at}).",
        "{what}：刚刚从 {file} 获取（{at}）。",
    ),
    (
        "fact_from_cache",
        "{what}: from the cached copy of {file} (fetched {at}).",
        "{what}：来自 {file} 的缓存（获取于 {at}）。",
    ),
    (
        "toolkit_minimum_unknown",
        "No source states the minimum driver of CUDA {version}, and none is inferred: it is chosen because your driver itself reports that it runs CUDA {cuda}.",
        "没有任何来源给出 CUDA {version} 的最低驱动版本，我们也不做推测：选择它是因为你的驱动自己报告支持 CUDA {cuda}。",
    ),
    (
        "toolkit_runs_on_driver_reported",
        "CUDA {version} is the newest toolkit your driver runs fully.",
        "CUDA {version} 是你的驱动能完整支持的最新工具包。",
    ),
    (
        "toolkit_newer_minimum_unknown",
        "CUDA {version} is newer, but its minimum driver for this system is not published (unknown, not inferred), so CUDA {chosen}, whose minimum is known, is preferred.",
        "CUDA {version} 更新，但它在本系统上的最低驱动版本没有公布（未知，不做推测），所以优先选择最低驱动已知的 CUDA {chosen}。",
    ),
    (
        "torch_no_wheel_in_index",
        "The PyTorch index lists no {variant} wheel of torch {torch} for Python {python} on {platform}, so it is not recommended.",
        "PyTorch 下载源中没有适用于 Python {python}、{platform} 的 torch {torch} {variant} 安装包，所以不推荐它。",
    ),
    (
        "torch_wheel_in_index",
        "The PyTorch index lists a {variant} wheel of torch {torch} for Python {python} on {platform}.",
        "PyTorch 下载源中有适用于 Python {python}、{platform} 的 torch {torch} {variant} 安装包。",
    ),
    (
        "no_torch_wheel_in_index",
        "The PyTorch index lists no CUDA wheel that fits these GPUs for Python {python} on {platform}. Use a Python version that PyTorch publishes wheels for.",
        "PyTorch 下载源中没有适用于 Python {python}、{platform} 且支持这些显卡的 CUDA 安装包。请换用 PyTorch 提供安装包的 Python 版本。",
    ),
    (
        "tables_status_tables",
        "Tables: built-in only.",
        "数据表：仅内置。",
    ),
    (
        "tables_status_live",
        "Tables: built-in + live data fetched {at}.",
        "数据表：内置 + 在线数据（获取于 {at}）。",
    ),
    (
        "tables_status_cache",
        "Tables: built-in + cache of {at}.",
        "数据表：内置 + 缓存（获取于 {at}）。",
    ),
    (
        "refresh_running",
        "Checking NVIDIA and PyTorch for new releases…",
        "正在从 NVIDIA 和 PyTorch 查找新版本……",
    ),
    (
        "refresh_offline_cache",
        "Offline: the sources could not be reached; using the cache of {at}.",
        "离线：无法连接数据来源；使用获取于 {at} 的缓存。",
    ),
    (
        "refresh_offline_tables",
        "Offline: the sources could not be reached; using the built-in tables.",
        "离线：无法连接数据来源；使用内置数据表。",
    ),
    (
        "refresh_partial",
        "Some sources could not be reached; their data comes from the cache or the built-in tables.",
        "部分数据来源无法连接；这些数据来自缓存或内置数据表。",
    ),
    (
        "refresh_rejected",
        "A source sent data that was refused ({error}); the previous tables are kept.",
        "某个数据来源发送的数据无效，已拒绝（{error}）；继续使用原来的数据表。",
    ),
    (
        "refresh_new",
        "New since the built-in tables: {releases}.",
        "内置数据表之后的新版本：{releases}。",
    ),
    // ---- the wizard (src/ui): its own words; core messages above are reused ----
    ("ui_page_repair", "Repair", "修复"),
    ("ui_wait_repair", "Checking…", "正在检查……"),
    (
        "ui_repair_intro",
        "Every layer is checked: the driver, the CUDA toolkits, the environment variables, cuDNN, unfinished installs and PyTorch. Each finding says what is wrong and how it is fixed; nothing changes until you click Fix.",
        "逐项检查：驱动、CUDA 工具包、环境变量、cuDNN、未完成的安装和 PyTorch。每一项都会说明问题所在以及修复方法；在你点击“修复”之前不会做任何修改。",
    ),
    (
        "ui_auditing",
        "Checking the driver, toolkits, environment, cuDNN and PyTorch…",
        "正在检查驱动、工具包、环境变量、cuDNN 和 PyTorch……",
    ),
    ("ui_findings", "Findings", "检查结果"),
    ("ui_fix_steps", "Fix: {steps}", "修复方法：{steps}"),
    (
        "ui_fix_resume",
        "Fix: finish the interrupted install (finished steps are not repeated)",
        "修复方法：继续完成中断的安装（已完成的步骤不会重复）",
    ),
    (
        "ui_fix_count",
        "Fix {count} problems",
        "修复 {count} 个问题",
    ),
    ("ui_fixing", "Fixing…", "正在修复……"),
    (
        "ui_repair_result",
        "{before} problems before the fixes, {left} left.",
        "修复前有 {before} 个问题，现在还剩 {left} 个。",
    ),
    (
        "ui_repair_nothing",
        "Nothing to repair.",
        "没有需要修复的问题。",
    ),
    (
        "ui_repair_setup_hint",
        "To install something new instead, go back and choose first-time setup.",
        "如果要安装新的内容，请返回并选择“首次安装”。",
    ),
    (
        "ui_summary_repair",
        "Repair: {left} problems left",
        "修复：还剩 {left} 个问题",
    ),
    ("ui_mem_pageable", "pageable memory", "可分页内存"),
    ("ui_mem_pinned", "pinned memory", "锁页内存"),
    (
        "ui_diag_given",
        "some facts were given, not detected",
        "部分信息为手动指定，而非检测所得",
    ),
    ("ui_app_title", "CUDA Setup", "CUDA 安装向导"),
    ("ui_back", "Back", "上一步"),
    ("ui_next", "Next", "下一步"),
    ("ui_close", "Close", "关闭"),
    ("ui_cancel", "Cancel", "取消"),
    ("ui_copy", "Copy", "复制"),
    ("ui_copied", "Copied to the clipboard.", "已复制到剪贴板。"),
    ("ui_yes", "yes", "是"),
    ("ui_no", "no", "否"),
    ("ui_ok", "OK", "正常"),
    ("ui_info", "Note", "提示"),
    ("ui_problem", "Problem", "问题"),
    ("ui_pass", "Pass", "通过"),
    ("ui_warn", "Warning", "警告"),
    ("ui_fail", "Fail", "未通过"),
    ("ui_passed", "Passed", "通过"),
    ("ui_skipped", "Skipped", "已跳过"),
    ("ui_failed", "Failed", "失败"),
    ("ui_installed", "Installed", "已安装"),
    ("ui_missing", "Missing", "缺失"),
    ("ui_given", "Given", "手动指定"),
    ("ui_none_found", "None found.", "未找到。"),
    ("ui_what_to_do", "What to do: {hint}", "怎么办：{hint}"),
    ("ui_eta", "{time} left", "剩余 {time}"),
    ("ui_page_welcome", "Welcome", "欢迎"),
    ("ui_page_system", "Your system", "系统检测"),
    ("ui_page_choose", "Choose", "选择方案"),
    ("ui_page_prepare", "Prepare", "安装前检查"),
    ("ui_page_install", "Install", "安装"),
    ("ui_page_cudnn", "cuDNN", "cuDNN"),
    ("ui_page_verify", "Verify", "验证"),
    ("ui_page_pytorch", "PyTorch", "PyTorch"),
    ("ui_page_done", "Done", "完成"),
    (
        "ui_wait_detect",
        "Looking at this computer…",
        "正在检测这台电脑……",
    ),
    ("ui_wait_prepare", "Preparing…", "正在准备……"),
    (
        "ui_fix_checks_first",
        "Fix the failed checks first.",
        "请先解决未通过的检查项。",
    ),
    ("ui_wait_install", "Installing…", "正在安装……"),
    (
        "ui_cudnn_choose_first",
        "Install cuDNN or skip it.",
        "请安装 cuDNN，或选择跳过。",
    ),
    ("ui_wait_verify", "Testing…", "正在测试……"),
    (
        "ui_no_display",
        "cuda-setup: no display was found ({detail}), so the setup wizard cannot open. Everything it does also works on the command line: `cuda-setup detect` shows what this machine has, `cuda-setup recommend` what fits it, `cuda-setup install --help` how to install; `cuda-setup --help` lists every command.",
        "cuda-setup：没有找到显示器（{detail}），无法打开安装向导。向导的所有功能都可以在命令行中使用：`cuda-setup detect` 查看本机配置，`cuda-setup recommend` 查看推荐版本，`cuda-setup install --help` 查看安装方法；`cuda-setup --help` 列出所有命令。",
    ),
    (
        "ui_welcome_intro",
        "This wizard sets up your NVIDIA GPU for deep learning: it checks the driver, recommends the CUDA, cuDNN and PyTorch versions that fit this computer, installs them and tests that the GPU really works. Nothing is changed until you confirm.",
        "本向导帮你为深度学习配置 NVIDIA 显卡：检查驱动，推荐适合这台电脑的 CUDA、cuDNN 和 PyTorch 版本，完成安装，并测试显卡是否真正可用。在你确认之前，不会对电脑做任何修改。",
    ),
    ("ui_language", "Language", "语言"),
    (
        "ui_what_to_do_title",
        "What would you like to do?",
        "你想做什么？",
    ),
    (
        "ui_existing_found",
        "Already on this computer: {what}.",
        "这台电脑上已有：{what}。",
    ),
    (
        "ui_interrupted_found",
        "An earlier install was interrupted. Setting up again continues it: finished steps are not repeated.",
        "之前的安装被中断了。重新安装会从中断处继续，已完成的步骤不会重复。",
    ),
    ("ui_mode_setup", "First-time setup", "首次安装"),
    (
        "ui_mode_setup_body",
        "Find the GPU and driver, choose what to install, install it and test it.",
        "识别显卡和驱动，选择要安装的内容，完成安装并测试。",
    ),
    (
        "ui_mode_repair",
        "Repair an existing install",
        "修复已有的安装",
    ),
    (
        "ui_mode_repair_body",
        "Check the CUDA, cuDNN and PyTorch already here, and fix what is broken.",
        "检查已安装的 CUDA、cuDNN 和 PyTorch，修复出问题的部分。",
    ),
    (
        "ui_cli_hint",
        "Every step also runs on the command line: cuda-setup --help.",
        "所有步骤也都可以在命令行中运行：cuda-setup --help。",
    ),
    (
        "ui_detecting",
        "Looking at this computer: GPUs, driver, CUDA, cuDNN and Python…",
        "正在检测这台电脑：显卡、驱动、CUDA、cuDNN 和 Python……",
    ),
    (
        "ui_what_if",
        "Given instead of detected: {facts}.",
        "以下信息为手动指定，而非检测所得：{facts}。",
    ),
    (
        "ui_sandbox_root",
        "Installing into the folder {root} as a {os} machine (a sandbox; this computer is not changed).",
        "将安装到文件夹 {root}，按 {os} 系统处理（沙盒模式，不会修改这台电脑）。",
    ),
    ("ui_gpus", "Graphics cards", "显卡"),
    ("ui_gpu_ready", "Ready", "可用"),
    ("ui_gpu_disabled", "Disabled", "已禁用"),
    ("ui_gpu_problem", "Needs attention", "需要处理"),
    ("ui_gpu_not_cuda", "Not for CUDA", "不支持 CUDA"),
    ("ui_gpu_no_driver", "No driver", "没有驱动"),
    (
        "ui_no_nvidia_gpu",
        "No NVIDIA graphics card was found. CUDA runs only on NVIDIA GPUs; PyTorch can still run on the CPU.",
        "没有找到 NVIDIA 显卡。CUDA 只能在 NVIDIA 显卡上运行；PyTorch 仍然可以使用 CPU。",
    ),
    (
        "ui_fix_disabled_steps",
        "How to fix it: press Win+X and open Device Manager → Display adapters → right-click the NVIDIA card → Enable device. Then click “Detect again”.",
        "解决方法：按 Win+X 打开“设备管理器”→“显示适配器”→ 右键点击 NVIDIA 显卡 →“启用设备”。然后点击“重新检测”。",
    ),
    (
        "ui_fix_driver_steps",
        "How to fix it: install or update the NVIDIA driver — with the NVIDIA App, or from nvidia.com/drivers (in China: nvidia.cn/drivers) — choose your card's model, install, restart the computer, then click “Detect again”.",
        "解决方法：安装或更新 NVIDIA 驱动——使用 NVIDIA App，或到 nvidia.cn/drivers 下载——选择你的显卡型号，安装后重启电脑，再点击“重新检测”。",
    ),
    ("ui_driver", "Driver", "驱动"),
    ("ui_driver_version", "Driver {version}", "驱动 {version}"),
    (
        "ui_driver_cuda",
        "supports CUDA up to {cuda}",
        "最高支持 CUDA {cuda}",
    ),
    ("ui_no_driver", "No NVIDIA driver", "没有 NVIDIA 驱动"),
    ("ui_toolkits", "CUDA toolkits", "CUDA 工具包"),
    ("ui_on_path", "On PATH", "在 PATH 中"),
    (
        "ui_torch_cpu",
        "torch {version}: CPU only",
        "torch {version}：仅 CPU 版",
    ),
    ("ui_no_torch", "no PyTorch", "未安装 PyTorch"),
    (
        "ui_cpu_cores",
        "{cpu} ({cores} cores)",
        "{cpu}（{cores} 核）",
    ),
    ("ui_this_computer", "This computer", "这台电脑"),
    ("ui_os", "System", "操作系统"),
    ("ui_cpu", "Processor", "处理器"),
    ("ui_memory", "Memory", "内存"),
    ("ui_free_space", "Free space", "可用空间"),
    ("ui_admin", "Administrator", "管理员权限"),
    ("ui_detect_again", "Detect again", "重新检测"),
    (
        "ui_detect_took",
        "Detection took {ms} ms.",
        "检测用时 {ms} 毫秒。",
    ),
    (
        "ui_choose_intro",
        "Most people who train models with PyTorch need only the first. Choose the second to compile CUDA code or PyTorch extensions.",
        "大多数用 PyTorch 训练模型的人只需要第一种。如果要编译 CUDA 代码或 PyTorch 扩展，请选择第二种。",
    ),
    ("ui_goal_pytorch", "PyTorch only", "只装 PyTorch"),
    (
        "ui_goal_pytorch_body",
        "The driver and the right PyTorch wheel. The wheel brings its own CUDA runtime and cuDNN, so nothing else is installed.",
        "只需要显卡驱动和合适的 PyTorch 安装包。安装包自带 CUDA 运行库和 cuDNN，无需再安装其他组件。",
    ),
    ("ui_goal_developer", "Developer", "开发者"),
    (
        "ui_goal_developer_body",
        "The CUDA toolkit (nvcc, libraries, headers), cuDNN and the environment variables. For compiling CUDA code and PyTorch extensions.",
        "安装 CUDA 工具包（nvcc、库和头文件）、cuDNN，并设置环境变量。用于编译 CUDA 代码和 PyTorch 扩展。",
    ),
    ("ui_recommended", "Recommended", "推荐"),
    ("ui_toolkit", "CUDA toolkit", "CUDA 工具包"),
    ("ui_why", "Why", "原因"),
    ("ui_advanced", "Advanced", "高级选项"),
    (
        "ui_advanced_intro",
        "Change these only if you know you need to.",
        "除非确实需要，否则不必修改这些选项。",
    ),
    ("ui_cuda_version", "CUDA version", "CUDA 版本"),
    ("ui_cuda_version_hint", "recommended", "推荐版本"),
    (
        "ui_with_driver",
        "Let the CUDA installer update the display driver",
        "允许 CUDA 安装程序更新显卡驱动",
    ),
    ("ui_mirrors", "Download mirrors", "下载镜像"),
    (
        "ui_mirrors_hint",
        "http://mirror.lab.local/nvidia (one a line)",
        "http://mirror.lab.local/nvidia（每行一个）",
    ),
    ("ui_connections", "Connections", "连接数"),
    (
        "ui_bad_version",
        "\"{value}\" is not a version (use 12, 12.4 or 12.4.1).",
        "“{value}”不是有效的版本号（请写成 12、12.4 或 12.4.1）。",
    ),
    (
        "ui_preparing",
        "Preparing the plan: looking up the checksums and checking this computer…",
        "正在准备安装计划：查询校验值并检查这台电脑……",
    ),
    (
        "ui_prepare_failed",
        "The install could not be prepared.",
        "无法准备安装。",
    ),
    (
        "ui_prepare_failed_hint",
        "Check the network connection or the download mirror (Advanced, on the previous page), then click “Check again”.",
        "请检查网络连接或下载镜像（在上一页的“高级选项”中），然后点击“重新检查”。",
    ),
    ("ui_plan", "What will happen", "将要执行的步骤"),
    (
        "ui_plan_toolkit",
        "CUDA {version} goes into {dir}.",
        "CUDA {version} 将安装到 {dir}。",
    ),
    (
        "ui_plan_pytorch",
        "PyTorch goes into the Python you choose on the PyTorch page.",
        "PyTorch 将安装到你在 PyTorch 页面选择的 Python 中。",
    ),
    (
        "ui_plan_cudnn_later",
        "cuDNN comes after the toolkit, on its own page.",
        "cuDNN 在工具包安装完成后单独安装。",
    ),
    ("ui_preflight", "Pre-flight checks", "安装前检查"),
    (
        "ui_checks_failed",
        "Some checks failed: fix them, then click “Check again”. Nothing has been changed.",
        "部分检查未通过：请先解决，然后点击“重新检查”。电脑没有被修改。",
    ),
    ("ui_checks_passed", "Ready to install.", "可以开始安装了。"),
    ("ui_check_again", "Check again", "重新检查"),
    (
        "ui_restart_admin",
        "Restart as administrator",
        "以管理员身份重新启动",
    ),
    ("ui_start_install", "Start installing", "开始安装"),
    (
        "ui_check_disk_pass",
        "{free} free on the drive of {dir}",
        "{dir} 所在磁盘有 {free} 可用空间",
    ),
    (
        "ui_check_disk_fail",
        "Only {free} free on the drive of {dir}; {needed} needed",
        "{dir} 所在磁盘只有 {free} 可用空间，需要 {needed}",
    ),
    (
        "ui_check_disk_estimate",
        "{free} free on the drive of {dir}; about {needed} may be needed",
        "{dir} 所在磁盘有 {free} 可用空间，可能需要约 {needed}",
    ),
    (
        "ui_check_disk_estimate_why",
        "The download's size is not known yet, so this is an estimate. If the drive fills up, the download stops and nothing is installed.",
        "下载文件的大小暂时未知，这只是估算。如果磁盘写满，下载会停止，不会装上半截的东西。",
    ),
    (
        "ui_check_disk_why",
        "The installer, its unpacked files and the installed toolkit all need room at the same time.",
        "安装程序、解压后的文件和安装好的工具包需要同时占用空间。",
    ),
    (
        "ui_check_disk_fix",
        "free some space (Disk Cleanup, empty the Recycle Bin), or choose another drive.",
        "清理磁盘空间（磁盘清理、清空回收站），或换一个磁盘。",
    ),
    (
        "ui_check_admin_pass",
        "Running with administrator rights",
        "正在以管理员权限运行",
    ),
    (
        "ui_check_admin_fail",
        "Not running as administrator",
        "没有以管理员身份运行",
    ),
    (
        "ui_check_admin_why",
        "NVIDIA's installer writes to Program Files (Windows) or /usr/local (Linux).",
        "NVIDIA 安装程序需要写入 Program Files（Windows）或 /usr/local（Linux）。",
    ),
    (
        "ui_check_admin_fix_windows",
        "click “Restart as administrator” below, or right-click cuda-setup and choose “Run as administrator”.",
        "点击下方的“以管理员身份重新启动”，或右键点击 cuda-setup，选择“以管理员身份运行”。",
    ),
    (
        "ui_check_admin_fix_linux",
        "start cuda-setup with sudo.",
        "请用 sudo 启动 cuda-setup。",
    ),
    (
        "ui_check_path_ascii",
        "{path} contains non-ASCII characters",
        "{path} 包含非英文字符",
    ),
    (
        "ui_check_path_ascii_why",
        "NVIDIA's installer is known to fail when its temporary or target folder has characters outside ASCII (a Chinese user name, for example).",
        "已知 NVIDIA 安装程序在临时目录或安装目录含有非英文字符（例如中文用户名）时会失败。",
    ),
    (
        "ui_check_path_ascii_fix",
        "set TEMP and TMP to a plain folder such as C:\\Temp before installing (System Properties → Environment Variables).",
        "安装前把 TEMP 和 TMP 环境变量改成纯英文路径，例如 C:\\Temp（系统属性 → 环境变量）。",
    ),
    (
        "ui_check_path_long",
        "{path} is over 200 characters long",
        "{path} 超过 200 个字符",
    ),
    (
        "ui_check_path_long_fix",
        "use a shorter folder.",
        "请使用更短的路径。",
    ),
    (
        "ui_check_vs_pass",
        "Visual Studio found",
        "已找到 Visual Studio",
    ),
    (
        "ui_check_vs_warn",
        "No Visual Studio found",
        "没有找到 Visual Studio",
    ),
    (
        "ui_check_vs_why",
        "nvcc needs Microsoft's C++ compiler to compile; the toolkit installs without it, without its Visual Studio integration.",
        "nvcc 编译时需要微软的 C++ 编译器；没有它工具包也能安装，但不包含 Visual Studio 集成。",
    ),
    (
        "ui_check_vs_fix",
        "install Visual Studio Build Tools with “Desktop development with C++” if you will compile CUDA code.",
        "如果要编译 CUDA 代码，请安装 Visual Studio Build Tools，并勾选“使用 C++ 的桌面开发”。",
    ),
    (
        "ui_check_already",
        "CUDA {version} is already installed here; it is kept",
        "CUDA {version} 已经安装在这里，将保留",
    ),
    (
        "ui_check_wheels_ours",
        "CUDA {version} here was built by cuda-setup from wheels: it is rebuilt only if the wheels differ, and put back if the new one fails its check",
        "这里的 CUDA {version} 是 cuda-setup 用组件包构建的：只有组件包不同时才会重建，新的检查不通过时会恢复原来的",
    ),
    (
        "ui_check_not_ours",
        "{path} holds files cuda-setup did not build and is not a complete CUDA toolkit",
        "{path} 中有不是 cuda-setup 构建的文件，而且不是完整的 CUDA 工具包",
    ),
    (
        "ui_check_not_ours_why",
        "cuda-setup never replaces or deletes a folder it did not build.",
        "cuda-setup 从不替换或删除不是它自己构建的文件夹。",
    ),
    (
        "ui_check_not_ours_fix",
        "move that folder elsewhere yourself (or finish it with NVIDIA's installer), then try again.",
        "请自己把这个文件夹移到别处（或用 NVIDIA 安装程序把它装完整），然后重试。",
    ),
    (
        "ui_nothing_to_install",
        "Nothing to install yet: go back to the Prepare page.",
        "还没有要安装的内容：请返回“安装前检查”页。",
    ),
    ("ui_step_preflight", "Pre-flight checks", "安装前检查"),
    (
        "ui_step_download_toolkit",
        "Download the CUDA toolkit",
        "下载 CUDA 工具包",
    ),
    (
        "ui_step_install_toolkit",
        "Install the CUDA toolkit",
        "安装 CUDA 工具包",
    ),
    ("ui_step_download_cudnn", "Download cuDNN", "下载 cuDNN"),
    ("ui_step_install_cudnn", "Install cuDNN", "安装 cuDNN"),
    (
        "ui_step_configure_env",
        "Set the environment variables",
        "设置环境变量",
    ),
    (
        "ui_step_install_torch",
        "Install PyTorch (pip)",
        "安装 PyTorch（pip）",
    ),
    (
        "ui_step_verify",
        "Check the installed files",
        "检查安装的文件",
    ),
    ("ui_state_waiting", "Waiting", "等待中"),
    ("ui_state_running", "Running", "进行中"),
    ("ui_state_done", "Done", "完成"),
    ("ui_state_nothing_to_do", "Already done", "无需操作"),
    ("ui_state_done_before", "Done earlier", "之前已完成"),
    ("ui_state_failed", "Failed", "失败"),
    ("ui_state_cancelled", "Cancelled", "已取消"),
    ("ui_step_failed", "{step} failed.", "“{step}”失败了。"),
    (
        "ui_failure_details",
        "Details: {error} ({hint})",
        "详细信息：{error}（{hint}）",
    ),
    (
        "fail_preflight",
        "A check before installing did not pass.",
        "安装前的检查没有通过。",
    ),
    (
        "fix_preflight",
        "go back to “Prepare” to see which check failed and how to fix it.",
        "回到“安装前检查”页面，看看哪一项没通过以及怎么解决。",
    ),
    (
        "fail_download_network",
        "The download could not reach the server, or the connection stopped sending data.",
        "下载时连不上服务器，或者连接中断了。",
    ),
    (
        "fix_download_network",
        "check the internet connection, then click “Try again”: the download continues where it stopped. If NVIDIA's server is slow from here, add a mirror under “Advanced”, or choose “Wheels from PyPI” to download from a PyPI mirror.",
        "检查网络连接后点击“重试”，下载会从中断处继续。如果连 NVIDIA 服务器很慢，可以在“高级选项”里添加镜像，或者选择“PyPI 组件包”从 PyPI 镜像下载。",
    ),
    (
        "fail_download_missing",
        "The server does not have this file.",
        "服务器上没有这个文件。",
    ),
    (
        "fix_download_missing",
        "check the mirror address under “Advanced” (or remove it to use NVIDIA's server), then click “Try again”.",
        "检查“高级选项”里的镜像地址（或删掉它，直接用 NVIDIA 的服务器），然后点击“重试”。",
    ),
    (
        "fail_download_corrupt",
        "The downloaded file was damaged or not the expected file, so it was deleted and not used.",
        "下载的文件已损坏或不是应有的文件，已删除，没有使用。",
    ),
    (
        "fix_download_corrupt",
        "click “Try again” to download it again. If it happens again, the mirror serves a different file: remove the mirror under “Advanced”.",
        "点击“重试”重新下载。如果再次出现，说明镜像提供的文件不对：请在“高级选项”里删掉这个镜像。",
    ),
    (
        "fail_download_other",
        "The download could not be started.",
        "无法开始下载。",
    ),
    (
        "fix_download_other",
        "read the details below; save the report from the last page if you ask someone for help.",
        "请看下面的详细信息；向别人求助时，可以在最后一页保存报告一起发过去。",
    ),
    (
        "fail_disk_full",
        "The drive holding {folder} is full ({free} free), so files could not be written there.",
        "{folder} 所在的磁盘已满（剩余 {free}），文件无法写入。",
    ),
    (
        "fix_disk_full",
        "free at least {needed} on that drive (delete files you no longer need, empty the Recycle Bin, Disk Cleanup), or choose a folder on another drive, then click “Try again”.",
        "请在该磁盘上至少腾出 {needed}（删除不再需要的文件、清空回收站、磁盘清理），或改用其他磁盘上的文件夹，然后点击“重试”。",
    ),
    (
        "fail_installer_failed",
        "NVIDIA's installer reported an error.",
        "NVIDIA 安装程序报告了错误。",
    ),
    (
        "fix_installer_failed",
        "restart the computer and try again; antivirus software can also block the installer. The installer's log is named in the details below.",
        "重启电脑后再试一次；杀毒软件也可能拦截安装程序。安装程序的日志位置在下面的详细信息里。",
    ),
    (
        "fail_installer_timeout",
        "NVIDIA's installer did not finish in time and was stopped.",
        "NVIDIA 安装程序长时间没有完成，已被停止。",
    ),
    (
        "fix_installer_timeout",
        "make sure no other installer (Windows Update, another CUDA setup) is running, then click “Try again”.",
        "确认没有其他安装程序（Windows 更新、另一个 CUDA 安装）在运行，然后点击“重试”。",
    ),
    (
        "fail_needs_admin",
        "This step needs administrator rights.",
        "这一步需要管理员权限。",
    ),
    (
        "fix_needs_admin",
        "restart cuda-setup as administrator, or choose “Wheels from PyPI” to install into your own folder.",
        "以管理员身份重新打开 cuda-setup，或者选择“PyPI 组件包”安装到你自己的文件夹。",
    ),
    (
        "fail_file_in_use",
        "A file is in use by another program, so nothing was changed.",
        "有文件正被其他程序使用，所以没有做任何改动。",
    ),
    (
        "fix_file_in_use",
        "close Python, Jupyter and any IDE running your scripts, then click “Try again”.",
        "关闭 Python、Jupyter 以及正在运行你的脚本的编辑器，然后点击“重试”。",
    ),
    (
        "fail_cudnn",
        "The cuDNN archive was refused or could not be copied; the toolkit folder was left as it was.",
        "cuDNN 压缩包被拒绝或无法复制；CUDA 文件夹保持原样，没有改动。",
    ),
    (
        "fix_cudnn",
        "use the cuDNN archive for your CUDA version from NVIDIA's download page, unchanged (the details below say which).",
        "请使用 NVIDIA 下载页上与你的 CUDA 版本对应的 cuDNN 压缩包，不要重新打包（下面的详细信息会说明是哪一个）。",
    ),
    (
        "fail_wheels",
        "NVIDIA's toolkit wheels could not be fetched or laid out.",
        "无法获取或组装 NVIDIA 的工具包组件。",
    ),
    (
        "fix_wheels",
        "check the PyPI mirror address (or try another mirror), then click “Try again”.",
        "检查 PyPI 镜像地址（或换一个镜像），然后点击“重试”。",
    ),
    (
        "fail_env",
        "The environment variables (CUDA_PATH, PATH) could not be set.",
        "无法设置环境变量（CUDA_PATH、PATH）。",
    ),
    (
        "fix_env",
        "restart cuda-setup as administrator, or set CUDA_PATH and PATH by hand (the details below say to what).",
        "以管理员身份重新打开 cuda-setup，或者手动设置 CUDA_PATH 和 PATH（下面的详细信息会说明设成什么）。",
    ),
    (
        "fail_pip",
        "pip could not install PyTorch.",
        "pip 没能装好 PyTorch。",
    ),
    (
        "fix_pip",
        "read pip's output in the log below. On a slow link, choose a PyPI mirror and click “Try again”.",
        "请看下面日志里 pip 的输出。如果网络慢，选择一个 PyPI 镜像后点击“重试”。",
    ),
    (
        "fail_verify",
        "The installed files did not pass the check.",
        "安装好的文件没有通过检查。",
    ),
    (
        "fix_verify",
        "run “Repair an existing install” from the first page to see and fix what is missing.",
        "在第一页选择“修复已有的安装”，查看并修复缺少的部分。",
    ),
    (
        "fail_io",
        "A file or folder could not be written.",
        "无法写入某个文件或文件夹。",
    ),
    (
        "fix_io",
        "check free space, and that the folder is not open in another program, then click “Try again”.",
        "检查磁盘空间，并确认该文件夹没有被其他程序占用，然后点击“重试”。",
    ),
    (
        "fail_internal",
        "cuda-setup ran into a bug of its own, so this step stopped.",
        "cuda-setup 自身出现了程序错误，此步骤已停止。",
    ),
    (
        "fix_internal",
        "please report it, with the log file (“Open log”) and the details below. Running it again is safe: finished steps are not repeated.",
        "请报告这个问题，并附上日志文件（“打开日志”）和下面的详细信息。再次运行是安全的：已完成的步骤不会重复。",
    ),
    (
        "ui_worker_crashed",
        "cuda-setup ran into a bug of its own while working on this page ({error}). Please report it; you can go back and try again.",
        "cuda-setup 在处理此页面时出现了程序错误（{error}）。请报告这个问题；你可以返回上一步再试一次。",
    ),
    ("fail_cancelled", "Stopped.", "已停止。"),
    (
        "fix_cancelled",
        "click “Try again”: finished steps are not repeated.",
        "点击“重试”，已完成的步骤不会重复。",
    ),
    // One writer per target (src/lock.rs): another cuda-setup holds the folder's lock.
    (
        "fail_busy",
        "Another cuda-setup (process {pid}) is working on this folder.",
        "另一个 cuda-setup（进程 {pid}）正在处理这个文件夹。",
    ),
    (
        "fix_busy",
        "wait for it to finish, or close it, then click “Try again”.",
        "请等它完成，或者把它关掉，然后点击“重试”。",
    ),
    (
        "busy",
        "Another cuda-setup (process {pid}) is working on this folder ({folder}). Wait for it to finish, or close it, then try again.",
        "另一个 cuda-setup（进程 {pid}）正在处理这个文件夹（{folder}）。请等它完成，或者把它关掉，然后再试一次。",
    ),
    (
        "busy_hint",
        "add --wait to wait for it instead.",
        "也可以加上 --wait，等它完成后自动继续。",
    ),
    (
        "busy_waiting",
        "Another cuda-setup (process {pid}) is working on this folder ({folder}); waiting for it to finish…",
        "另一个 cuda-setup（进程 {pid}）正在处理这个文件夹（{folder}），正在等它完成……",
    ),
    (
        "download_waiting",
        "Another cuda-setup (process {pid}) is downloading this file ({folder}); waiting for it to finish…",
        "另一个 cuda-setup（进程 {pid}）正在下载这个文件（{folder}），正在等它完成……",
    ),
    (
        "ui_run_cancelled",
        "Cancelled. Nothing is left half-done: click “Try again” to continue where it stopped.",
        "已取消。不会留下只完成一半的内容：点击“重试”可从中断处继续。",
    ),
    (
        "ui_reboot_required",
        "Restart the computer to finish.",
        "请重启电脑以完成安装。",
    ),
    ("ui_live_log", "Log", "日志"),
    ("ui_try_again", "Try again", "重试"),
    ("ui_open_log", "Open log", "打开日志"),
    (
        "ui_install_done",
        "The CUDA toolkit is installed. Next: cuDNN.",
        "CUDA 工具包已安装。下一步：cuDNN。",
    ),
    (
        "ui_cudnn_intro",
        "cuDNN is NVIDIA's library of deep-learning primitives. Give its zip archive: it is checked before anything is copied, and every file it replaces is kept so it can be undone.",
        "cuDNN 是 NVIDIA 的深度学习基础库。请提供它的 zip 压缩包：复制任何文件之前都会先检查，被替换的文件都会保留备份，可以撤销。",
    ),
    (
        "ui_cudnn_linux",
        "On Linux, NVIDIA's cuDNN comes as a .tar.xz archive: drop it here, choose it, or download it. It is checked before anything is copied, and its library links are kept. (PyTorch's wheels bring their own cuDNN: this is for compiling.)",
        "在 Linux 上，NVIDIA 的 cuDNN 是 .tar.xz 压缩包：拖放到这里、选择文件或直接下载。复制前会先检查，库文件的链接会保留。（PyTorch 安装包自带 cuDNN，这里是为了编译用。）",
    ),
    (
        "ui_cudnn_no_toolkit",
        "No CUDA toolkit was chosen, so there is nowhere to put cuDNN.",
        "没有选择 CUDA 工具包，cuDNN 无处可装。",
    ),
    (
        "ui_cudnn_goes_to",
        "cuDNN goes into {dir}.",
        "cuDNN 将安装到 {dir}。",
    ),
    (
        "ui_cudnn_recommended",
        "Recommended: cuDNN {version} for CUDA {major} ({file}).",
        "推荐：适用于 CUDA {major} 的 cuDNN {version}（{file}）。",
    ),
    (
        "ui_drop_tarball",
        "Drop the cuDNN .tar.xz here",
        "把 cuDNN 的 .tar.xz 文件拖放到这里",
    ),
    (
        "ui_drop_zip",
        "Drop the cuDNN .zip here",
        "把 cuDNN 的 .zip 文件拖放到这里",
    ),
    ("ui_choose_file", "Choose file…", "选择文件……"),
    (
        "ui_download_nvidia",
        "Download from NVIDIA",
        "从 NVIDIA 下载",
    ),
    ("ui_skip_cudnn", "Skip cuDNN", "跳过 cuDNN"),
    ("ui_downloading", "Downloading", "正在下载"),
    ("ui_download_failed", "The download failed.", "下载失败。"),
    ("ui_validation", "Checking the archive", "检查压缩包"),
    (
        "ui_validating",
        "Checking every entry of the archive…",
        "正在检查压缩包中的每个文件……",
    ),
    (
        "ui_cudnn_layout_ok",
        "NVIDIA's layout: {entries} files ({dlls} DLLs, {headers} headers), {size} unpacked",
        "NVIDIA 官方结构：{entries} 个文件（{dlls} 个 DLL，{headers} 个头文件），解压后 {size}",
    ),
    (
        "ui_cudnn_version_found",
        "cuDNN {version}",
        "cuDNN {version}",
    ),
    (
        "ui_cudnn_major_ok",
        "Built for CUDA {major}, like the toolkit (CUDA {toolkit})",
        "为 CUDA {major} 编译，与工具包（CUDA {toolkit}）一致",
    ),
    (
        "ui_cudnn_major_unknown",
        "The archive does not say which CUDA it is built for (an old layout).",
        "压缩包没有标明是为哪个 CUDA 版本编译的（旧版结构）。",
    ),
    (
        "ui_nothing_copied_yet",
        "Nothing has been copied yet.",
        "目前还没有复制任何文件。",
    ),
    (
        "ui_nothing_copied",
        "Nothing was copied.",
        "没有复制任何文件。",
    ),
    ("ui_install_cudnn", "Install cuDNN", "安装 cuDNN"),
    (
        "ui_cudnn_copying",
        "Unpacking and checking: {done} of {total}",
        "正在解压并校验：{done} / {total}",
    ),
    (
        "ui_cudnn_installed",
        "cuDNN {version} is installed: {files} files; {replaced} files it replaced are kept for undo (cuda-setup cudnn uninstall).",
        "cuDNN {version} 已安装：共 {files} 个文件；被替换的 {replaced} 个文件已备份，可以撤销（cuda-setup cudnn uninstall）。",
    ),
    (
        "ui_cudnn_install_failed",
        "cuDNN could not be installed; the toolkit folder is as it was.",
        "cuDNN 安装失败；工具包目录保持原样。",
    ),
    (
        "ui_refused",
        "This archive was refused.",
        "这个压缩包被拒绝了。",
    ),
    (
        "ui_refused_not_zip",
        "This is not a readable zip archive.",
        "这不是一个可读取的 zip 压缩包。",
    ),
    (
        "ui_refused_unsafe_name",
        "An entry's name could write outside the toolkit folder: refused.",
        "压缩包中有文件名可能写到工具包目录之外：已拒绝。",
    ),
    (
        "ui_refused_case_collision",
        "Two entries differ only in letter case and would overwrite each other on Windows.",
        "有两个文件名只有大小写不同，在 Windows 上会互相覆盖。",
    ),
    (
        "ui_refused_same_destination",
        "Two entries would be installed as the same file (for example bin/ and bin/x64/, or lib/ and lib/x64/): one would overwrite the other and the toolkit's own file.",
        "有两个文件会被安装成同一个文件（例如 bin/ 与 bin/x64/，或 lib/ 与 lib/x64/）：一个会覆盖另一个以及工具包原有的文件。",
    ),
    (
        "ui_refused_too_large",
        "The archive is far larger than any cuDNN (a zip bomb?).",
        "压缩包远大于任何 cuDNN（可能是压缩炸弹）。",
    ),
    (
        "ui_refused_corrupt",
        "The archive is damaged.",
        "压缩包已损坏。",
    ),
    (
        "ui_refused_layout",
        "This is not NVIDIA's cuDNN archive layout.",
        "这不是 NVIDIA 官方 cuDNN 压缩包的结构。",
    ),
    (
        "ui_refused_no_version",
        "The archive has no version header.",
        "压缩包中没有版本头文件。",
    ),
    (
        "ui_refused_cuda_mismatch",
        "This cuDNN is built for another CUDA version than the toolkit.",
        "这个 cuDNN 是为另一个 CUDA 版本编译的，与工具包不匹配。",
    ),
    (
        "ui_verify_intro",
        "A quick test of the real thing: a matrix product on the GPU checked against the CPU, copy speed between memory and GPU, a cuDNN convolution and an nvcc-built kernel.",
        "实际测试一下：在显卡上做矩阵乘法并与 CPU 结果对比，测试内存与显卡之间的拷贝速度，运行 cuDNN 卷积和 nvcc 编译的核函数。",
    ),
    (
        "ui_verifying",
        "Testing the GPU (up to a few minutes)…",
        "正在测试显卡（最多几分钟）……",
    ),
    ("ui_gpu_live", "GPU activity", "显卡运行状态"),
    (
        "ui_gpu_live_unavailable",
        "Live GPU figures are unavailable: {why}",
        "无法获取显卡实时数据：{why}",
    ),
    (
        "ui_gpu_live_now",
        "Utilisation {util}% · memory {used} of {total}",
        "使用率 {util}% · 显存 {used} / {total}",
    ),
    ("ui_plot_util", "Utilisation %", "使用率 %"),
    ("ui_plot_memory", "Memory %", "显存 %"),
    ("ui_plot_seconds", "seconds", "秒"),
    ("ui_results", "Results", "结果"),
    (
        "ui_check_gemm",
        "Matrix product (cuBLAS)",
        "矩阵乘法（cuBLAS）",
    ),
    ("ui_check_bandwidth", "Copy bandwidth", "拷贝带宽"),
    ("ui_check_cudnn", "cuDNN", "cuDNN"),
    ("ui_check_nvcc", "Compiler (nvcc)", "编译器（nvcc）"),
    (
        "ui_gemm_result",
        "{precision} {size}×{size}: {gflops} GFLOP/s, error {error}",
        "{precision} {size}×{size}：{gflops} GFLOP/s，误差 {error}",
    ),
    ("ui_h2d", "to the GPU", "内存→显卡"),
    ("ui_d2h", "from the GPU", "显卡→内存"),
    (
        "ui_conv_result",
        "Convolution matches the CPU (error {error})",
        "卷积结果与 CPU 一致（误差 {error}）",
    ),
    (
        "ui_nvcc_compiled",
        "A test kernel compiled.",
        "测试核函数编译成功。",
    ),
    ("ui_run_again", "Run again", "再测一次"),
    (
        "ui_no_wheel",
        "No PyTorch CUDA wheel fits this computer (the Choose page says why).",
        "没有适合这台电脑的 PyTorch CUDA 版本（原因见“选择方案”页）。",
    ),
    (
        "ui_torch_pick",
        "PyTorch {version} built for {variant}; it needs Python {min} to {max}.",
        "为 {variant} 编译的 PyTorch {version}；需要 Python {min} 到 {max}。",
    ),
    ("ui_python_path", "Python", "Python"),
    (
        "ui_python_hint",
        "the python.exe PyTorch goes into",
        "要安装 PyTorch 的 python.exe",
    ),
    ("ui_choose_python", "Choose…", "选择……"),
    (
        "ui_torch_index",
        "PyTorch download source (a mirror, optional)",
        "PyTorch 下载源（镜像，可不填）",
    ),
    (
        "ui_torch_download_note",
        "The large torch file is downloaded by cuda-setup: it continues where it stopped if the connection drops, and is checked before pip installs it.",
        "体积很大的 torch 文件由 cuda-setup 下载：断线后会从中断处继续，安装前会先校验文件。",
    ),
    (
        "ui_pypi_mirror",
        "PyPI mirror for the other packages",
        "其他依赖包的 PyPI 镜像",
    ),
    ("ui_mirror_none", "None (pypi.org)", "不使用（pypi.org）"),
    ("ui_mirror_tsinghua", "Tsinghua University", "清华大学"),
    ("ui_mirror_aliyun", "Alibaba Cloud", "阿里云"),
    ("ui_mirror_ustc", "USTC", "中国科学技术大学"),
    ("ui_the_command", "The command", "安装命令"),
    (
        "ui_run_pip",
        "Run it in this Python",
        "在这个 Python 中运行",
    ),
    ("ui_run_doctor", "Check PyTorch", "检查 PyTorch"),
    ("ui_pip_output", "pip's output", "pip 输出"),
    (
        "ui_doctor_running",
        "Checking PyTorch in this Python (a tensor on the GPU, a matrix product)…",
        "正在检查这个 Python 中的 PyTorch（把张量放到显卡上，做矩阵乘法）……",
    ),
    ("ui_doctor", "PyTorch check", "PyTorch 检查"),
    ("ui_summary", "Summary", "总结"),
    (
        "ui_summary_toolkit",
        "CUDA toolkit in {dir}",
        "CUDA 工具包位于 {dir}",
    ),
    ("ui_summary_smoke", "GPU test", "显卡测试"),
    (
        "ui_summary_doctor",
        "PyTorch check: {problems} problems",
        "PyTorch 检查：{problems} 个问题",
    ),
    (
        "ui_new_terminal",
        "Open a new terminal (or restart your editor) so it sees the new environment variables.",
        "请打开一个新的终端（或重启编辑器），新的环境变量才会生效。",
    ),
    ("ui_share", "Report and help", "报告与求助"),
    ("ui_save_report", "Save report", "保存报告"),
    ("ui_save_report_as", "Save report as…", "报告另存为……"),
    ("ui_copy_diagnostics", "Copy diagnostics", "复制诊断信息"),
    (
        "ui_report_saved",
        "Report saved: {path}",
        "报告已保存：{path}",
    ),
    ("ui_diag_title", "GPU setup diagnostics", "GPU 环境诊断信息"),
    // ---- the wheels method (src/wheels) ----
    (
        "method_installer_default",
        "NVIDIA's installer: the standard way, needs administrator rights.",
        "NVIDIA 安装程序：标准方式，需要管理员权限。",
    ),
    (
        "method_wheels_no_admin",
        "No administrator rights: the toolkit comes as NVIDIA's own wheels from PyPI into a folder you own.",
        "没有管理员权限：改用 NVIDIA 在 PyPI 上发布的官方组件包，装到你自己的文件夹里。",
    ),
    (
        "method_wheels_mirror",
        "You chose a PyPI mirror: NVIDIA's wheels come from it at full speed, no administrator rights needed.",
        "你选了 PyPI 镜像：从镜像下载 NVIDIA 官方组件包，速度快，也不需要管理员权限。",
    ),
    (
        "method_wheels_download_failed",
        "Downloading from NVIDIA failed: get the same toolkit as NVIDIA's wheels from a PyPI mirror instead.",
        "从 NVIDIA 下载失败：可以改从 PyPI 镜像下载同一版本的 NVIDIA 官方组件包。",
    ),
    ("ui_method", "How to install the toolkit", "工具包安装方式"),
    ("ui_method_installer", "NVIDIA installer", "NVIDIA 安装程序"),
    (
        "ui_method_wheels",
        "Wheels from PyPI (no admin)",
        "PyPI 组件包（无需管理员）",
    ),
    (
        "ui_method_explain",
        "The installer puts CUDA in Program Files and needs administrator rights; the wheels are the same NVIDIA files from PyPI (or a mirror such as Tsinghua), unpacked into a folder you own.",
        "安装程序把 CUDA 装进 Program Files，需要管理员权限；组件包是同样的 NVIDIA 文件，从 PyPI（或清华等镜像）下载，解压到你自己的文件夹。",
    ),
    (
        "ui_method_pypi",
        "PyPI mirror (tsinghua, aliyun, ustc or a URL; empty: pypi.org)",
        "PyPI 镜像（tsinghua、aliyun、ustc 或网址；留空为 pypi.org）",
    ),
    (
        "ui_method_pypi_bad",
        "Not a mirror name or URL: pypi.org will be used.",
        "不是有效的镜像名称或网址：将使用 pypi.org。",
    ),
    (
        "ui_use_wheels",
        "Use NVIDIA's wheels from PyPI instead",
        "改用 PyPI 上的 NVIDIA 组件包",
    ),
    (
        "ui_step_assemble_toolkit",
        "Unpack the toolkit wheels",
        "解压工具包组件",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

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
        let params = [("driver", "551.78"), ("cuda", "12.4")];
        assert_eq!(
            render_key("driver_runs_cuda", params, Lang::Zh).as_deref(),
            Some("驱动 551.78 最高支持 CUDA 12.4。")
        );
    }

    #[test]
    fn an_unknown_key_renders_as_itself() {
        let m = Message::new("no_such_key").with("b", 2).with("a", 1);
        assert_eq!(render(&m, Lang::Zh), "no_such_key a=1 b=2");
        assert_eq!(render_key("no_such_key", [("a", "1")], Lang::En), None);
        assert!(!has_key("no_such_key") && has_key("driver_runs_cuda"));
        assert!(keys().any(|k| k == "ui_next"));
        assert!(texts(Lang::Zh).any(|t| t == "下一步"));
    }

    #[test]
    fn locale_picks_language() {
        assert_eq!(Lang::from_locale("zh-CN"), Lang::Zh);
        assert_eq!(Lang::from_locale("zh_TW.UTF-8"), Lang::Zh);
        assert_eq!(Lang::from_locale("en-US"), Lang::En);
    }

    /// MIGRATION CHECK (temporary): the catalogue files hold exactly the old array's texts.
    #[test]
    fn migration_matches_the_old_array() {
        let mut checked = 0;
        for (key, en, zh) in CATALOG {
            let names: Vec<&str> = catalogue::placeholders(en).unwrap().into_iter().collect();
            let mut m = Message::new(key);
            for (i, n) in names.iter().enumerate() {
                m = m.with(n, format!("<{i}:{n}\\\"$1>"));
            }
            for (lang, old) in [(Lang::En, en), (Lang::Zh, zh)] {
                let mut want = old.to_string();
                for (name, value) in &m.params {
                    want = want.replace(&format!("{{{name}}}"), value);
                }
                assert_eq!(CATALOGUE.text(key, lang), Some(*old), "{key}");
                assert_eq!(render(&m, lang).as_bytes(), want.as_bytes(), "{key}");
                checked += 1;
            }
        }
        assert_eq!(keys().count(), CATALOG.len());
        assert_eq!(texts(Lang::Zh).count(), CATALOG.len());
        println!(
            "MIGRATION: {} keys, {checked} texts byte-for-byte equal (raw and rendered)",
            CATALOG.len()
        );
    }
}
