//! Clap value parsers for the core's enums. The core does not depend on clap, so the
//! names and help lines that `derive(ValueEnum)` used to produce are spelled here, once.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use cuda_setup_core::compat::Os;
use cuda_setup_core::i18n::Lang;
use cuda_setup_core::recommend::{Goal, Method};

fn parser<T: Clone + Send + Sync + 'static>(
    values: &'static [(&'static str, Option<&'static str>, T)],
) -> impl TypedValueParser<Value = T> {
    let possible = values.iter().map(|(name, help, _)| match help {
        Some(h) => PossibleValue::new(*name).help(*h),
        None => PossibleValue::new(*name),
    });
    PossibleValuesParser::new(possible).map(move |s: String| {
        // PossibleValuesParser has already refused anything not in `values`.
        values
            .iter()
            .find(|(n, _, _)| *n == s)
            .map(|(_, _, v)| v.clone())
            .unwrap_or_else(|| values[0].2.clone())
    })
}

pub fn lang() -> impl TypedValueParser<Value = Lang> {
    parser(&[("en", None, Lang::En), ("zh", None, Lang::Zh)])
}

pub fn os() -> impl TypedValueParser<Value = Os> {
    parser(&[("windows", None, Os::Windows), ("linux", None, Os::Linux)])
}

pub fn goal() -> impl TypedValueParser<Value = Goal> {
    parser(&[
        (
            "pytorch",
            Some("The driver and the right PyTorch wheel (the wheels bundle CUDA and cuDNN)"),
            Goal::Pytorch,
        ),
        (
            "developer",
            Some("The CUDA toolkit, cuDNN and environment, for compiling extensions"),
            Goal::Developer,
        ),
    ])
}

pub fn method() -> impl TypedValueParser<Value = Method> {
    parser(&[
        (
            "installer",
            Some("NVIDIA's installer (needs administrator rights)"),
            Method::Installer,
        ),
        (
            "wheels",
            Some("NVIDIA's component wheels from a PyPI index or mirror (no administrator rights)"),
            Method::Wheels,
        ),
    ])
}

/// `--proxy`: checked by the core, refused at parse time (exit 2) in the system's language
/// (`--lang` is not known yet while clap parses).
pub fn proxy(s: &str) -> Result<cuda_setup_core::proxy::Proxy, String> {
    cuda_setup_core::proxy::parse(s).map_err(|e| {
        cuda_setup_core::i18n::render(&e.message(), cuda_setup_core::locale::system_lang(None))
    })
}
