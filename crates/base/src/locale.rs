//! The language of human output, chosen one way for the CLI and the wizard: the
//! `--lang` flag, else the locale variables (`LC_ALL`, `LC_MESSAGES`, `LANG`, the first
//! set), else the system's locale (Windows sets no `LANG`: there a Chinese Windows
//! speaks Chinese through this last step).

use crate::i18n::Lang;

/// The language for `flag` (None: not given) on this machine.
pub fn system_lang(flag: Option<Lang>) -> Lang {
    lang_from(flag, |v| std::env::var(v).ok(), sys_locale::get_locale)
}

/// [`system_lang`] with its sources given: `env` reads a variable, `system` the
/// system's locale (asked only when no variable is set).
pub fn lang_from(
    flag: Option<Lang>,
    env: impl Fn(&str) -> Option<String>,
    system: impl FnOnce() -> Option<String>,
) -> Lang {
    if let Some(l) = flag {
        return l;
    }
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .find_map(|v| env(v).filter(|s| !s.is_empty()))
        .or_else(system)
        .map_or(Lang::En, |l| Lang::from_locale(&l))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(set: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            set.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn no_locale_variable_and_a_chinese_system_speaks_chinese() {
        // Windows: no LANG at all, the system's locale is zh-CN.
        assert_eq!(
            lang_from(None, vars(&[]), || Some("zh-CN".into())),
            Lang::Zh
        );
        // An empty variable counts as unset.
        assert_eq!(
            lang_from(None, vars(&[("LANG", "")]), || Some("zh-CN".into())),
            Lang::Zh
        );
    }

    #[test]
    fn the_flag_wins_then_the_variables_in_order_then_the_system() {
        let zh_system = || Some("zh-CN".to_string());
        assert_eq!(
            lang_from(Some(Lang::En), vars(&[("LANG", "zh_CN.UTF-8")]), zh_system),
            Lang::En
        );
        assert_eq!(
            lang_from(None, vars(&[("LANG", "en_US.UTF-8")]), zh_system),
            Lang::En
        );
        assert_eq!(
            lang_from(
                None,
                vars(&[("LC_ALL", "zh_CN.UTF-8"), ("LANG", "en_US.UTF-8")]),
                || None
            ),
            Lang::Zh
        );
        assert_eq!(
            lang_from(
                None,
                vars(&[("LC_MESSAGES", "en_GB.UTF-8"), ("LANG", "zh_CN.UTF-8")]),
                zh_system
            ),
            Lang::En
        );
        assert_eq!(lang_from(None, vars(&[]), || None), Lang::En);
    }
}
