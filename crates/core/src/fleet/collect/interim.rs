//! INTERIM: the report envelope as the contract spells it, until labstate's
//! `fleet::report` is merged (then this file goes and `read` calls that reader).

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
pub struct Report {
    pub written_at: u64,
    pub state: State,
    pub drift: Option<Vec<Drift>>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct State {
    pub computer: String,
    pub gpus: Vec<Gpu>,
    pub driver: Option<Driver>,
    pub toolkits: Vec<Toolkit>,
    pub cudnn: Vec<Cudnn>,
    pub pytorch: Option<Torch>,
    pub guard: Option<Guard>,
    pub last_check: Option<Check>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Gpu {
    pub name: String,
}
#[derive(Debug, Clone, Deserialize)]
pub struct Driver {
    pub version: String,
}
#[derive(Debug, Clone, Deserialize)]
pub struct Toolkit {
    pub version: String,
    #[serde(default)]
    pub active: bool,
}
#[derive(Debug, Clone, Deserialize)]
pub struct Cudnn {
    pub version: String,
}
#[derive(Debug, Clone, Deserialize)]
pub struct Torch {
    pub version: String,
    pub variant: Option<String>,
}
#[derive(Debug, Clone, Deserialize)]
pub struct Guard {
    pub on: bool,
    pub verified_at: Option<u64>,
}
#[derive(Debug, Clone, Deserialize)]
pub struct Check {
    pub at: u64,
    pub works: bool,
    pub speedup: Option<f64>,
}
#[derive(Debug, Clone, serde::Serialize, Deserialize)]
pub struct Drift {
    pub layer: String,
    pub is: Option<String>,
    pub should: String,
    pub fix: String,
}

#[derive(Debug)]
pub enum ReportError {
    NotJson(String),
    NotReport,
    Newer(u64),
    Invalid(String),
}

pub fn parse(bytes: &[u8]) -> Result<Report, ReportError> {
    let v: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| ReportError::NotJson(e.to_string()))?;
    if v.get("schema").and_then(|s| s.as_str()) != Some("cuda-setup/report") {
        return Err(ReportError::NotReport);
    }
    match v.get("schema_version").and_then(|n| n.as_u64()) {
        Some(1) => {}
        Some(n) if n > 1 => return Err(ReportError::Newer(n)),
        _ => return Err(ReportError::Invalid("schema_version".into())),
    }
    serde_json::from_value(v).map_err(|e| ReportError::Invalid(e.to_string()))
}
