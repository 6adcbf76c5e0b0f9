//! What the machine offers a package that loads CUDA and cuDNN at run time: the toolkits
//! and cuDNN copies detection found, the nvidia-* wheels in that Python (what
//! `onnxruntime.preload_dlls()` and TensorFlow's `and-cuda` libraries use), and the CUDA
//! and cuDNN PyTorch brings (onnxruntime reuses the libraries torch loaded).

use serde::Serialize;

use super::super::doctor::TorchState;
use super::Found;
use super::Wheel;
use crate::compat::gpu_packages::release_of;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum OfferedBy {
    /// A toolkit folder (its path).
    Toolkit(String),
    /// cuDNN in a folder (its path).
    Folder(String),
    /// An nvidia-* wheel in this Python (its name).
    Wheel(String),
    /// PyTorch's own (its version).
    Torch(String),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Offered {
    pub major: u32,
    /// As found (`12.4`, `9.1.0.70`).
    pub version: String,
    /// For cuDNN: the CUDA major it is built for, when known (`nvidia-cudnn-cu12`, the
    /// toolkit it sits in).
    pub cuda: Option<u32>,
    pub by: OfferedBy,
}

impl Offered {
    /// `12.4 (/usr/local/cuda-12.4)`: a technical token, the same in every language.
    pub fn describe(&self) -> String {
        let by = match &self.by {
            OfferedBy::Toolkit(p) | OfferedBy::Folder(p) => p.clone(),
            OfferedBy::Wheel(n) => n.clone(),
            OfferedBy::Torch(v) => format!("torch {v}"),
        };
        format!("{} ({by})", self.version)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Offer {
    pub cuda: Vec<Offered>,
    pub cudnn: Vec<Offered>,
}

/// `nvidia-cublas-cu12` → (`nvidia-cublas`, 12); `nvidia-cublas` (CUDA 13's names carry
/// no suffix) → (`nvidia-cublas`, None).
pub(super) fn split_cu(name: &str) -> (&str, Option<u32>) {
    match name.rsplit_once("-cu") {
        Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            (base, n.parse().ok())
        }
        _ => (name, None),
    }
}

impl Offer {
    pub fn gather(found: &Found, wheels: &[Wheel], torch: Option<&TorchState>) -> Offer {
        let mut o = Offer::default();
        for t in &found.toolkits {
            if let Some(v) = &t.version {
                o.cuda.push(Offered {
                    major: v.major(),
                    version: v.to_string(),
                    cuda: None,
                    by: OfferedBy::Toolkit(t.path.display().to_string()),
                });
            }
        }
        for c in &found.cudnn {
            let major = c.library_major.or(c.version.as_ref().map(|v| v.major()));
            let cuda = c.toolkit.as_ref().and_then(|p| {
                found
                    .toolkits
                    .iter()
                    .find(|t| &t.path == p)
                    .and_then(|t| t.version.as_ref().map(|v| v.major()))
            });
            if let Some(major) = major {
                o.cudnn.push(Offered {
                    major,
                    version: c
                        .version
                        .as_ref()
                        .map_or(major.to_string(), ToString::to_string),
                    cuda,
                    by: OfferedBy::Folder(c.location.display().to_string()),
                });
            }
        }
        for w in wheels {
            let Some(v) = release_of(&w.version) else {
                continue;
            };
            let (base, suffix) = split_cu(&w.name);
            match base {
                // The libraries the packages load first; the CUDA major is the suffix's,
                // or (CUDA 13's unsuffixed names) the wheel's own major.
                "nvidia-cublas" | "nvidia-cuda-runtime" => o.cuda.push(Offered {
                    major: suffix.unwrap_or(v.major()),
                    version: v.to_string(),
                    cuda: None,
                    by: OfferedBy::Wheel(w.name.clone()),
                }),
                "nvidia-cudnn" => o.cudnn.push(Offered {
                    major: v.major(),
                    version: v.to_string(),
                    cuda: suffix,
                    by: OfferedBy::Wheel(w.name.clone()),
                }),
                _ => {}
            }
        }
        if let Some(t) = torch.filter(|t| !t.is_cpu_build()) {
            let cuda = t.cuda.as_deref().and_then(release_of);
            if let Some(c) = &cuda {
                o.cuda.push(Offered {
                    major: c.major(),
                    version: c.to_string(),
                    cuda: None,
                    by: OfferedBy::Torch(t.version.clone()),
                });
            }
            if let Some(n) = t.cudnn {
                let v = crate::verify::reference::decode_cudnn_version(n);
                o.cudnn.push(Offered {
                    major: v.major(),
                    version: v.to_string(),
                    cuda: cuda.map(|c| c.major()),
                    by: OfferedBy::Torch(t.version.clone()),
                });
            }
        }
        o
    }

    pub fn has_cuda(&self, major: u32) -> bool {
        self.cuda.iter().any(|c| c.major == major)
    }

    /// cuDNN `major` built for CUDA `cuda` (a copy whose CUDA is unknown counts).
    pub fn has_cudnn(&self, major: u32, cuda: u32) -> bool {
        self.cudnn
            .iter()
            .any(|c| c.major == major && c.cuda.is_none_or(|x| x == cuda))
    }
}
