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
