//! Administrator rights on demand (Windows). The executable asks for none in its manifest
//! (`asInvoker`): the PyTorch goal, the doctor and every CLI subcommand that only reads run
//! as the user, and pip must install into the user's own Python. When the developer
//! install's pre-flight finds no administrator rights, the Prepare page offers to start
//! the wizard again elevated, through UAC (`ShellExecuteW` with the `runas` verb), with
//! what the user set that the elevated run needs (#34): the language, the proxy, the
//! download mirrors, the toolkit version.

use cuda_setup_core::i18n::Lang;

use super::session::Settings;

/// The elevated wizard's arguments: `--lang`, and the proxy in force
/// (`cuda_setup_core::proxy::current()`), each download mirror and the toolkit version
/// typed — only values its own parsers take (an address they would refuse would stop the
/// elevated wizard from starting at all).
pub fn elevated_args(
    lang: Lang,
    settings: &Settings,
    proxy: Option<&cuda_setup_core::proxy::Proxy>,
) -> Vec<String> {
    let mut args = vec![
        "--lang".to_string(),
        match lang {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
        .to_string(),
    ];
    // `--flag=value`: a value can never be read as a flag of its own.
    if let Some(p) = proxy {
        args.push(format!("--proxy={p}"));
    }
    for m in settings.mirror_list() {
        if cuda_setup_core::url::http_url(&m).is_ok() {
            args.push(format!("--mirror={m}"));
        }
    }
    if let Some(v) = settings.cuda_version() {
        args.push(format!("--cuda={v}"));
    }
    args
}

/// `args` as one parameter string that `CommandLineToArgvW` (and the C runtime, and Rust's
/// `std::env::args`) split back into exactly `args`: each argument in double quotes when
/// it is empty or holds a space, tab, newline or quote; inside, a quote is `\"` and the
/// backslashes before a quote (or before the closing quote) are doubled; elsewhere a
/// backslash is itself. Rules: <https://learn.microsoft.com/windows/win32/api/shellapi/nf-shellapi-commandlinetoargvw>,
/// <https://learn.microsoft.com/en-us/previous-versions/17w5ykft(v=vs.85)>.
pub fn windows_params(args: &[String]) -> String {
    args.iter()
        .map(|a| quote_arg(a))
        .collect::<Vec<_>>()
        .join(" ")
}

/// One argument, quoted for [`windows_params`].
pub fn quote_arg(arg: &str) -> String {
    let plain = !arg.is_empty() && !arg.contains([' ', '\t', '\n', '\x0b', '"']);
    if plain {
        return arg.to_string();
    }
    let mut out = String::with_capacity(arg.len() + 2);
    out.push('"');
    let mut backslashes = 0usize;
    for c in arg.chars() {
        match c {
            '\\' => backslashes += 1,
            '"' => {
                // 2n+1 backslashes then a quote: n backslashes and a literal quote.
                out.extend(std::iter::repeat_n('\\', backslashes * 2 + 1));
                out.push('"');
                backslashes = 0;
            }
            c => {
                out.extend(std::iter::repeat_n('\\', backslashes));
                out.push(c);
                backslashes = 0;
            }
        }
    }
    // Before the closing quote: 2n backslashes give n, and the quote closes.
    out.extend(std::iter::repeat_n('\\', backslashes * 2));
    out.push('"');
    out
}

/// Starts this program again with administrator rights and `args` (Windows shows the UAC
/// prompt); true when it started, and this instance should close.
#[cfg(windows)]
pub fn relaunch_as_admin(args: &[String]) -> bool {
    use std::os::windows::ffi::OsStrExt;
    use windows_sys::Win32::UI::Shell::ShellExecuteW;
    use windows_sys::Win32::UI::WindowsAndMessaging::SW_SHOWNORMAL;
    let Ok(exe) = std::env::current_exe() else {
        return false;
    };
    let wide = |s: &std::ffi::OsStr| -> Vec<u16> { s.encode_wide().chain(Some(0)).collect() };
    let verb = wide("runas".as_ref());
    let file = wide(exe.as_os_str());
    let params = wide(windows_params(args).as_ref());
    // SAFETY: NUL-terminated UTF-16 strings that outlive the call; no window handle.
    let r = unsafe {
        ShellExecuteW(
            std::ptr::null_mut(),
            verb.as_ptr(),
            file.as_ptr(),
            params.as_ptr(),
            std::ptr::null(),
            SW_SHOWNORMAL,
        )
    };
    // Above 32 means it started (the ShellExecute convention); the user may say no.
    r as isize > 32
}

#[cfg(not(windows))]
pub fn relaunch_as_admin(_args: &[String]) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `CommandLineToArgvW`'s rules for the arguments after the program's name, as
    /// documented (see [`windows_params`]): what the elevated process's `argv` will be.
    fn split(line: &str) -> Vec<String> {
        let mut args = Vec::new();
        let mut cur = String::new();
        let mut in_arg = false;
        let mut quoted = false;
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            match c {
                '\\' => {
                    let n = chars[i..].iter().take_while(|&&c| c == '\\').count();
                    i += n;
                    in_arg = true;
                    if chars.get(i) == Some(&'"') {
                        cur.extend(std::iter::repeat_n('\\', n / 2));
                        if n % 2 == 1 {
                            cur.push('"');
                            i += 1;
                        }
                    } else {
                        cur.extend(std::iter::repeat_n('\\', n));
                    }
                    continue;
                }
                '"' => {
                    in_arg = true;
                    quoted = !quoted;
                }
                ' ' | '\t' if !quoted => {
                    if in_arg {
                        args.push(std::mem::take(&mut cur));
                        in_arg = false;
                    }
                }
                c => {
                    in_arg = true;
                    cur.push(c);
                }
            }
            i += 1;
        }
        if in_arg {
            args.push(cur);
        }
        args
    }

    #[test]
    fn every_argument_comes_back_whole_and_alone() {
        let cases: Vec<Vec<&str>> = vec![
            vec!["--lang", "zh"],
            vec!["--proxy=http://127.0.0.1:7890"],
            vec!["--mirror=http://lan mirror/cuda"],
            vec![""],
            vec!["a\"b", "c"],
            vec!["--proxy=http://u:p\"w@h:1\" --goal pytorch", "x"],
            vec!["C:\\Program Files\\x\\", "y"],
            vec!["end\\\\", "trail\\", "\\\"", "\\\\\"q"],
            vec!["tab\there", "new\nline", "中文 镜像"],
            vec!["\" --inject \""],
        ];
        for args in cases {
            let owned: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            let line = windows_params(&owned);
            assert_eq!(split(&line), owned, "{line}");
        }
        // Plain words stay as they are.
        assert_eq!(windows_params(&["--lang".into(), "en".into()]), "--lang en");
        assert_eq!(quote_arg("a b"), "\"a b\"");
        assert_eq!(quote_arg("x\\"), "x\\");
        assert_eq!(quote_arg("x \\"), "\"x \\\\\"");
    }

    /// The proxy in force, the mirrors that parse and the toolkit version go along; a
    /// mirror the elevated wizard's parser would refuse does not.
    #[test]
    fn the_elevated_wizard_gets_what_the_user_set() {
        let opts = crate::ui::options::Options::sandbox(
            cuda_setup_core::compat::Tables::embedded().unwrap(),
            cuda_setup_core::compat::Os::Windows,
            std::path::Path::new("/nonexistent"),
        );
        let mut s = Settings::new(&opts, Lang::Zh);
        s.mirrors = "http://10.0.0.2/cuda\nnot a url\n\nhttps://mirror.example/a b".into();
        s.cuda = "12.4".into();
        let proxy = cuda_setup_core::proxy::parse("http://user:p%40ss@127.0.0.1:7890").unwrap();
        let args = elevated_args(Lang::Zh, &s, Some(&proxy));
        assert_eq!(&args[..2], ["--lang", "zh"]);
        assert!(
            args.contains(&"--proxy=http://user:p%40ss@127.0.0.1:7890".to_string()),
            "{args:?}"
        );
        assert!(
            !elevated_args(Lang::En, &s, None)
                .iter()
                .any(|a| a.starts_with("--proxy"))
        );
        assert!(
            args.contains(&"--mirror=http://10.0.0.2/cuda".to_string()),
            "{args:?}"
        );
        assert!(!args.iter().any(|a| a.contains("not a url")), "{args:?}");
        assert!(args.contains(&"--cuda=12.4".to_string()), "{args:?}");
        // Each one parses back as the wizard's own flags.
        let line = windows_params(&args);
        let mut argv = vec!["cuda-setup".to_string()];
        argv.extend(split(&line));
        let cli = <crate::cli::Cli as clap::Parser>::try_parse_from(&argv)
            .unwrap_or_else(|e| panic!("{line}: {e}"));
        assert!(cli.command.is_none());
        assert!(cli.gui.mirror.contains(&"http://10.0.0.2/cuda".to_string()));
        assert_eq!(cli.proxy, Some(proxy));
        assert_eq!(cli.gui.cuda, Some("12.4".parse().unwrap()));
    }
}
