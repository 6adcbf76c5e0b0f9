//! A wheel's METADATA: `Requires-Dist` lines (PEP 508) and `Provides-Extra`, with just
//! enough of the environment-marker language to evaluate NVIDIA's `cuda-toolkit` pins
//! (`(sys_platform == 'win32' and platform_machine == 'AMD64' or …) and extra == 'nvcc'`).

use super::version::Specifier;
use crate::compat::Os;

#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    pub name: String,
    pub spec: Specifier,
    pub marker: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Metadata {
    pub requires: Vec<Requirement>,
    pub extras: Vec<String>,
}

pub fn parse(text: &str) -> Result<Metadata, String> {
    let mut m = Metadata::default();
    // Headers end at the first blank line; the description follows.
    for line in text.lines().take_while(|l| !l.trim().is_empty()) {
        if let Some(v) = line.strip_prefix("Requires-Dist:") {
            m.requires.push(parse_requirement(v.trim())?);
        } else if let Some(v) = line.strip_prefix("Provides-Extra:") {
            m.extras.push(v.trim().to_string());
        }
    }
    Ok(m)
}

fn parse_requirement(text: &str) -> Result<Requirement, String> {
    let (req, marker) = match text.split_once(';') {
        Some((r, m)) => (r.trim(), Some(m.trim().to_string())),
        None => (text.trim(), None),
    };
    let end = req
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(req.len());
    let name = super::index::normalize(&req[..end]);
    if name.is_empty() {
        return Err(format!("Requires-Dist without a name: `{text}`"));
    }
    let mut rest = req[end..].trim();
    if rest.starts_with('[') {
        rest = rest.split_once(']').map_or("", |(_, r)| r).trim();
    }
    Ok(Requirement {
        name,
        spec: rest.parse()?,
        marker,
    })
}

/// The marker variables for one target.
#[derive(Debug, Clone)]
pub struct Env {
    pub os: Os,
    pub extras: Vec<String>,
}

impl Env {
    fn var(&self, name: &str) -> Option<&'static str> {
        let win = self.os == Os::Windows;
        Some(match name {
            "sys_platform" => {
                if win {
                    "win32"
                } else {
                    "linux"
                }
            }
            "platform_system" => {
                if win {
                    "Windows"
                } else {
                    "Linux"
                }
            }
            "platform_machine" => {
                if win {
                    "AMD64"
                } else {
                    "x86_64"
                }
            }
            "os_name" => {
                if win {
                    "nt"
                } else {
                    "posix"
                }
            }
            "platform_python_implementation" => "CPython",
            "implementation_name" => "cpython",
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Str(String),
    Op(String),
    Open,
    Close,
}

fn tokens(s: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let b: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '(' {
            out.push(Tok::Open);
            i += 1;
        } else if c == ')' {
            out.push(Tok::Close);
            i += 1;
        } else if c == '\'' || c == '"' {
            let end = b[i + 1..]
                .iter()
                .position(|&x| x == c)
                .ok_or_else(|| format!("unterminated string in marker `{s}`"))?;
            out.push(Tok::Str(b[i + 1..i + 1 + end].iter().collect()));
            i += end + 2;
        } else if "=!<>~".contains(c) {
            let mut j = i;
            while j < b.len() && "=!<>~".contains(b[j]) {
                j += 1;
            }
            out.push(Tok::Op(b[i..j].iter().collect()));
            i = j;
        } else if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == '_' || b[j] == '.') {
                j += 1;
            }
            out.push(Tok::Word(b[i..j].iter().collect()));
            i = j;
        } else {
            return Err(format!("unexpected `{c}` in marker `{s}`"));
        }
    }
    Ok(out)
}

/// Evaluates a marker. `python_*` comparisons count as true: these wheels are `py3-none`
/// and we never run them under a Python.
pub fn eval(marker: &str, env: &Env) -> Result<bool, String> {
    let toks = tokens(marker)?;
    let mut p = Parser {
        toks: &toks,
        at: 0,
        env,
        src: marker,
    };
    let v = p.or()?;
    if p.at != toks.len() {
        return Err(format!("trailing text in marker `{marker}`"));
    }
    Ok(v)
}

struct Parser<'a> {
    toks: &'a [Tok],
    at: usize,
    env: &'a Env,
    src: &'a str,
}

impl Parser<'_> {
    fn peek_word(&self, w: &str) -> bool {
        matches!(self.toks.get(self.at), Some(Tok::Word(x)) if x == w)
    }

    fn or(&mut self) -> Result<bool, String> {
        let mut v = self.and()?;
        while self.peek_word("or") {
            self.at += 1;
            let r = self.and()?;
            v = v || r;
        }
        Ok(v)
    }

    fn and(&mut self) -> Result<bool, String> {
        let mut v = self.atom()?;
        while self.peek_word("and") {
            self.at += 1;
            let r = self.atom()?;
            v = v && r;
        }
        Ok(v)
    }

    fn atom(&mut self) -> Result<bool, String> {
        if self.toks.get(self.at) == Some(&Tok::Open) {
            self.at += 1;
            let v = self.or()?;
            if self.toks.get(self.at) != Some(&Tok::Close) {
                return Err(format!("missing `)` in marker `{}`", self.src));
            }
            self.at += 1;
            return Ok(v);
        }
        let lhs = self.value()?;
        let op = match self.toks.get(self.at) {
            Some(Tok::Op(o)) => o.clone(),
            Some(Tok::Word(w)) if w == "in" => "in".into(),
            Some(Tok::Word(w)) if w == "not" => {
                self.at += 1;
                if !self.peek_word("in") {
                    return Err(format!("expected `not in` in marker `{}`", self.src));
                }
                "not in".into()
            }
            _ => return Err(format!("expected a comparison in marker `{}`", self.src)),
        };
        self.at += 1;
        let rhs = self.value()?;
        let python = |v: &Value| matches!(v, Value::Var(n) if n.starts_with("python"));
        if python(&lhs) || python(&rhs) {
            return Ok(true);
        }
        if matches!(&lhs, Value::Var(n) if n == "extra")
            || matches!(&rhs, Value::Var(n) if n == "extra")
        {
            let want = match (&lhs, &rhs) {
                (Value::Str(s), _) | (_, Value::Str(s)) => super::index::normalize(s),
                _ => return Err(format!("odd extra comparison in `{}`", self.src)),
            };
            let has = self
                .env
                .extras
                .iter()
                .any(|e| super::index::normalize(e) == want);
            return Ok(if op == "!=" { !has } else { has });
        }
        let (l, r) = (self.text(&lhs), self.text(&rhs));
        Ok(match op.as_str() {
            "==" | "===" => l == r,
            "!=" => l != r,
            "in" => r.contains(&l),
            "not in" => !r.contains(&l),
            _ => return Err(format!("`{op}` on strings in marker `{}`", self.src)),
        })
    }

    fn value(&mut self) -> Result<Value, String> {
        let t = self
            .toks
            .get(self.at)
            .ok_or_else(|| format!("marker `{}` ends early", self.src))?;
        self.at += 1;
        match t {
            Tok::Str(s) => Ok(Value::Str(s.clone())),
            Tok::Word(w) => Ok(Value::Var(w.clone())),
            _ => Err(format!("expected a value in marker `{}`", self.src)),
        }
    }

    fn text(&self, v: &Value) -> String {
        match v {
            Value::Str(s) => s.clone(),
            Value::Var(n) => self.env.var(n).unwrap_or("").to_string(),
        }
    }
}

enum Value {
    Str(String),
    Var(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "Requires-Dist: nvidia-cuda-nvcc==13.5.37.*; (sys_platform == 'linux' and platform_machine == 'aarch64' or sys_platform == 'linux' and platform_machine == 'x86_64' or sys_platform == 'win32' and platform_machine == 'AMD64') and extra == 'nvcc'";

    #[test]
    fn nvidia_pins() {
        let m = parse(&format!(
            "Metadata-Version: 2.4\nName: cuda-toolkit\nProvides-Extra: nvcc\n{LINE}\nRequires-Dist: nvidia-cudla==13.5.25.*; (sys_platform == 'linux' and platform_machine == 'aarch64') and extra == 'cudla'\n\nRequires-Dist: not-a-header\n"
        ))
        .unwrap();
        assert_eq!(m.requires.len(), 2);
        assert_eq!(m.extras, ["nvcc"]);
        let r = &m.requires[0];
        assert_eq!(r.name, "nvidia-cuda-nvcc");
        let env = |os, extras: &[&str]| Env {
            os,
            extras: extras.iter().map(|s| s.to_string()).collect(),
        };
        let mk = r.marker.as_deref().unwrap();
        assert!(eval(mk, &env(Os::Windows, &["nvcc"])).unwrap());
        assert!(eval(mk, &env(Os::Linux, &["nvcc"])).unwrap());
        assert!(!eval(mk, &env(Os::Linux, &["cublas"])).unwrap());
        let dla = m.requires[1].marker.as_deref().unwrap();
        assert!(!eval(dla, &env(Os::Linux, &["cudla"])).unwrap());
    }

    #[test]
    fn forms() {
        let r = parse_requirement("nvidia-nvjitlink<14,>=13.5.37; extra == \"cufft\"").unwrap();
        assert_eq!(r.spec.to_string(), "<14,>=13.5.37");
        let r = parse_requirement("Foo_Bar[x] (>=1.0)").unwrap();
        assert_eq!(r.name, "foo-bar");
        let env = Env {
            os: Os::Linux,
            extras: vec![],
        };
        assert!(eval("python_version >= '3.9' and os_name == 'posix'", &env).unwrap());
        assert!(eval("'linux' in sys_platform", &env).unwrap());
        assert!(eval("sys_platform == 'linux' and (", &env).is_err());
        assert!(eval("sys_platform = 'linux'", &env).is_err());
    }
}
